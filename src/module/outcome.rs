//! What a verb asks for and what it left behind: shared by every backend and the runner.

use std::time::Duration;

use serde::Serialize;

use crate::module::config::PullPolicy;
use crate::module::status::State;

/// What a verb left behind.
#[derive(Clone, Debug)]
pub(crate) struct Outcome {
    pub state: State,
    pub reason: Option<String>,
    pub warnings: Vec<String>,
}

/// How a start behaves.
#[derive(Clone, Debug)]
pub(crate) struct StartOpts {
    pub pull: Option<PullPolicy>,
    pub wait: bool,
    pub timeout: Option<Duration>,
}

/// What a verb would do to one module (`--dry-run`'s answer).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Would {
    /// Nothing: a start of an active module, a stop of a stopped one.
    None,
    /// Start what is not running.
    Start,
    /// Create its containers again: a running stack whose files changed since hal last started it.
    Recreate,
    /// Stop it.
    Stop,
    /// Stop and start it again (a restart always changes something).
    Restart,
}

impl Would {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Would::None => "none",
            Would::Start => "start",
            Would::Recreate => "recreate",
            Would::Stop => "stop",
            Would::Restart => "restart",
        }
    }
}
