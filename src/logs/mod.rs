//! Log lines from any source, framed and merged into one stream.

pub mod journal;
pub mod line;
pub mod stream;
