//! What a verb asks for and what it left behind: shared by every backend and the runner.

use std::time::Duration;

use crate::module::config::PullPolicy;
use crate::module::status::State;

/// What a verb left behind.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub state: State,
    pub reason: Option<String>,
    pub warnings: Vec<String>,
}

/// How a start behaves.
#[derive(Clone, Debug)]
pub struct StartOpts {
    pub pull: Option<PullPolicy>,
    pub wait: bool,
    pub timeout: Option<Duration>,
}
