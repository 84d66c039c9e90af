//! Everything hal shows a person or a script: decided once, printed in one place.

pub mod render;
pub mod ui;
