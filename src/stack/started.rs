//! When the engine behind a local socket last started: the modification time of the pid file it writes beside its socket (`docker.pid`), read without an engine call.
//!
//! The Engine API says nothing of the daemon's start (`/info` has no uptime).
//! dockerd writes its pid file (`/var/run/docker.pid`, or `$XDG_RUNTIME_DIR/docker.pid`
//! rootless) once, as it starts, beside the socket it listens on: its time is the
//! engine's start. An engine over TCP, or one with no pid file there (Podman,
//! a `pidfile` moved elsewhere), has no known start: the host's boot stands for it.

use std::path::Path;

use crate::docker::endpoint::Endpoint;
use crate::util::timefmt::Stamp;

/// When the engine at `endpoint` started, if it is local and left its pid file beside its socket.
pub(crate) fn engine_started(endpoint: &Endpoint) -> Option<Stamp> {
    let socket = Path::new(endpoint.host.strip_prefix("unix://")?);
    let pidfile = socket.parent()?.join("docker.pid");
    let pid: u32 = std::fs::read_to_string(&pidfile)
        .ok()?
        .trim()
        .parse()
        .ok()?;
    // A pid file left by a daemon that is gone says nothing of the one that answers.
    if !Path::new(&format!("/proc/{pid}")).exists() {
        return None;
    }
    let modified = std::fs::metadata(&pidfile).ok()?.modified().ok()?;
    Some(Stamp::from_system(modified))
}
