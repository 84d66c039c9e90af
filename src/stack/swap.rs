//! A change of images and the way back, below both `start/` and `update/`: whatever moves a service onto a new image passes the health gate, keeps the previous image to roll back to, puts aside a digest that failed, and (an update's) checkpoints its data and logs each step first.
//!
//! `gate.rs` sees which services a pull moved; `rollback.rs` keeps their
//! previous images under hal's own tag (`rollback/previous.rs`) and puts them
//! back; `quarantine.rs` holds back a digest a rollback put aside;
//! `checkpoint.rs` copies a module's data before an update and back;
//! `txn_log.rs` writes an update's steps to the state before each is taken
//! (`stop_at.rs` is its test hook).

pub(crate) mod checkpoint;
pub(crate) mod gate;
pub(crate) mod quarantine;
pub(crate) mod rollback;
mod stop_at;
pub(crate) mod txn_log;
