//! What compose reads: a stack's input files by compose's rules, whether they changed, and its project name.

pub(crate) mod digest;
pub(crate) mod inputs;
pub(crate) mod known;
pub(crate) mod project_name;
