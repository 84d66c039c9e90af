//! Everything hal shows a person or a script: decided once, printed in one place.

pub mod area;
pub mod color;
pub mod hangup;
pub mod json;
pub mod log_lines;
pub mod prometheus;
pub mod render;
pub mod reports;
pub mod tables;
pub mod ui;
pub mod view;
pub mod watch_log;

/// Bytes as they are on stdout (a completion script): a reader that stops
/// early (`hal completions bash | head`) is no failure.
pub fn raw(bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        r => r,
    }
}
