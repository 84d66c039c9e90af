//! What the supervisor is told between its passes: how a repair ended, and what the engine said of a container.

use crate::util::timefmt::Stamp;

/// How a restart or retry ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Attempt {
    Recovered,
    /// The start limit refused it.
    Refused,
    Failed,
}

/// Something the engine said about one container, between status passes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Seen {
    pub module: String,
    pub container: String,
    pub unhealthy: bool,
    pub at: Stamp,
}
