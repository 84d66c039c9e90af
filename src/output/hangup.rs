//! Noticing that the reader of hal's output went away while nothing is written, as coreutils `tail -f` does.
//!
//! When stdout is a pipe (or socket), a copy of it is registered with the
//! runtime's poller for errors only: on Linux a pipe's write end polls
//! `POLLERR` once its last reader closed, so `hal module logs -f x | grep -m1 y`
//! ends when grep does, even while every source is quiet. A terminal or a file
//! cannot lose its reader this way and is not watched.

use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::FileTypeExt;

use tokio::io::Interest;
use tokio::net::unix::pipe;

/// Resolves once stdout's reader has gone; never, when that cannot be told.
pub(crate) async fn reader_gone() {
    if let Some(out) = watch() {
        loop {
            match out.ready(Interest::ERROR).await {
                Ok(r) if r.is_error() || r.is_write_closed() => return,
                // Not expected (only errors are waited for); do not spin if it happens.
                Ok(_) => tokio::time::sleep(std::time::Duration::from_millis(100)).await,
                Err(_) => break,
            }
        }
    }
    std::future::pending::<()>().await;
}

/// A copy of stdout registered with the poller, if stdout is a pipe or a socket.
///
/// `from_owned_fd_unchecked` leaves the file's blocking mode alone: the copy
/// shares it with stdout, which hal still writes to in blocking mode.
fn watch() -> Option<pipe::Sender> {
    let fd = std::io::stdout().as_fd().try_clone_to_owned().ok()?;
    let file = std::fs::File::from(fd);
    let kind = file.metadata().ok()?.file_type();
    if !(kind.is_fifo() || kind.is_socket()) {
        return None;
    }
    pipe::Sender::from_owned_fd_unchecked(OwnedFd::from(file)).ok()
}
