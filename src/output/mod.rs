//! Everything hal shows a person or a script: decided once, printed in one place.

pub(crate) mod area;
pub(crate) mod checks;
pub mod color;
pub(crate) mod hangup;
pub(crate) mod json;
pub(crate) mod log_lines;
pub(crate) mod node_view;
pub(crate) mod plan_table;
pub(crate) mod prometheus;
mod reason_words;
mod record_causes;
pub(crate) mod render;
pub(crate) mod reports;
pub(crate) mod tables;
pub(crate) mod ui;
pub(crate) mod view;
pub(crate) mod warnings;
pub(crate) mod watch_log;

/// Bytes as they are on stdout (a completion script): a reader that stops
/// early (`hal completions bash | head`) is no failure.
pub(crate) fn raw(bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        r => r,
    }
}
