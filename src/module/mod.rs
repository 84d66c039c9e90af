//! The domain: what a module is, how the node's modules are found and named, and what hal reports about them.

pub mod config;
pub mod inventory;
pub mod name;
pub mod order;
pub mod status;
