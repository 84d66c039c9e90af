//! SIGTERM and SIGINT as one thing `hal watch` waits for: the end of the supervisor's loop.

use tokio::signal::unix::{Signal, SignalKind, signal};

/// SIGTERM and SIGINT, as one thing to wait for.
pub(super) struct Shutdown {
    term: Signal,
    int: Signal,
}

impl Shutdown {
    pub(super) fn new() -> anyhow::Result<Shutdown> {
        let listen =
            |kind, name| signal(kind).map_err(|e| anyhow::anyhow!("watch: listen for {name}: {e}"));
        Ok(Shutdown {
            term: listen(SignalKind::terminate(), "SIGTERM")?,
            int: listen(SignalKind::interrupt(), "SIGINT")?,
        })
    }

    pub(super) async fn recv(&mut self) -> &'static str {
        tokio::select! {
            _ = self.term.recv() => "SIGTERM",
            _ = self.int.recv() => "SIGINT",
        }
    }
}
