//! Ctrl-C and SIGTERM: how hal hears them, and which exit code each one means.

use tokio::signal::unix::{SignalKind, signal};

use crate::error::HalError;

/// Completes when SIGINT or SIGTERM arrives, with the matching error
/// (exit 130 or 143). If the handlers cannot be installed, never completes.
pub(crate) async fn stop_requested() -> HalError {
    let (Ok(mut int), Ok(mut term)) = (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
    ) else {
        return std::future::pending().await;
    };
    tokio::select! {
        _ = int.recv() => HalError::Interrupted,
        _ = term.recv() => HalError::Terminated,
    }
}
