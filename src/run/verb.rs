//! A verb that changes modules, and what sets one verb apart from another, as methods rather than words.

use std::time::Duration;

use crate::module::outcome::StartOpts;
use crate::stack;

/// A verb that changes modules.
#[derive(Clone, Debug)]
pub(crate) enum Verb {
    Start {
        opts: StartOpts,
        force: bool,
    },
    /// `grace`: how long a container may take to stop before SIGKILL
    /// (compose's `-t`); for a unit, how long hal waits for the init's stop job.
    Stop {
        grace: Option<Duration>,
    },
    Restart {
        opts: StartOpts,
        force: bool,
    },
    /// Clear the start count, recreate the containers (or reset-failed and
    /// restart the unit), and wait for active.
    Rescue {
        opts: StartOpts,
    },
    /// The supervisor's restart: counts like any restart, and is skipped when,
    /// by the time the module's lock is taken, a person has stopped it.
    AutoRestart {
        opts: StartOpts,
    },
    /// The supervisor's smallest repair of a stack: only these containers
    /// are started, restarted or recreated. Counts like any restart.
    Repair {
        fixes: Vec<stack::Fix>,
        opts: StartOpts,
    },
}

impl Verb {
    pub(crate) fn name(&self) -> &'static str {
        match self {
            Verb::Start { .. } => "start",
            Verb::Stop { .. } => "stop",
            Verb::Restart { .. } | Verb::AutoRestart { .. } => "restart",
            Verb::Rescue { .. } => "rescue",
            Verb::Repair { .. } => "repair",
        }
    }

    /// The runner's context on an error of this verb on `label`.
    pub(crate) fn step(&self, label: String) -> Step {
        Step {
            action: self.name(),
            label,
        }
    }

    /// Whether the verb starts the module, so a failure leaves it failed.
    /// Exhaustive on purpose: a new verb must say.
    pub(crate) fn starts(&self) -> bool {
        match self {
            Verb::Start { .. }
            | Verb::Restart { .. }
            | Verb::AutoRestart { .. }
            | Verb::Rescue { .. }
            | Verb::Repair { .. } => true,
            Verb::Stop { .. } => false,
        }
    }
}

/// The runner's context on one module's error (`start web`): read back as
/// a type by `report::cause`, never recognised by its words.
#[derive(Debug)]
pub(crate) struct Step {
    /// The verb's word (`start`, `update`).
    pub action: &'static str,
    /// `web`, or `web/worker` for one service.
    pub label: String,
}

impl std::fmt::Display for Step {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.action, self.label)
    }
}
