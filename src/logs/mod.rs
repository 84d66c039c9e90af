//! Log lines from any source, framed and merged into one stream.

pub(crate) mod access;
pub(crate) mod journal;
pub(crate) mod line;
pub(crate) mod stream;
