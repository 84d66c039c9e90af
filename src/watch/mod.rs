//! The supervisor: what `hal watch` decides about what it sees.

pub mod policy;
