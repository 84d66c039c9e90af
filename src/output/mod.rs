//! Everything hal shows a person or a script: decided once, printed in one place.

pub mod area;
pub mod color;
pub mod log_lines;
pub mod render;
pub mod reports;
pub mod ui;
pub mod watch_log;
