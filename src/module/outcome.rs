//! What a verb asks for and what it left behind: shared by every backend and the runner.

use std::time::Duration;

use serde::Serialize;

use crate::module::config::{PullPolicy, RestartLimit, Settings};
use crate::module::reason::Reasons;
use crate::module::status::State;
use crate::module::warning::Warning;

/// What a verb left behind.
#[derive(Clone, Debug)]
pub(crate) struct Outcome {
    pub state: State,
    /// Why it is not `active` (none when it is), typed until it is printed.
    pub reason: Reasons,
    pub warnings: Vec<Warning>,
}

/// How a start behaves.
#[derive(Clone, Debug)]
pub(crate) struct StartOpts {
    pub pull: Option<PullPolicy>,
    pub wait: bool,
    pub timeout: Option<Duration>,
}

/// A start's flags and the module's config resolved once, into what the
/// start does (ripgrep's low and high arguments): a flag where one was given,
/// else the module's section, else the defaults. Built by [`StartPlan::new`]
/// alone, then passed down; nothing below it reads a flag or the config.
#[derive(Clone, Copy, Debug)]
pub(crate) struct StartPlan {
    /// Which images are pulled before the start.
    pub pull: PullPolicy,
    /// How long one image's pull may take.
    pub pull_timeout: Duration,
    /// When the whole start (pull, compose, wait) must be over.
    pub timeout: Duration,
    /// Whether the start waits for `active`.
    pub wait: bool,
    /// How many starts the module may have in its window.
    pub limit: RestartLimit,
}

impl StartPlan {
    /// `opts` (the flags) over `settings` (the module's config).
    pub(crate) fn new(opts: &StartOpts, settings: &Settings) -> StartPlan {
        StartPlan {
            pull: opts.pull.unwrap_or(settings.pull),
            pull_timeout: settings.pull_timeout,
            timeout: opts.timeout.unwrap_or(settings.timeout),
            wait: opts.wait,
            limit: settings.limit,
        }
    }
}

/// A stop's flag over the module's config, resolved once as a start's is.
#[derive(Clone, Copy, Debug)]
pub(crate) struct StopPlan {
    /// `-t`: how long a container may take to stop before SIGKILL (compose's
    /// own default when `None`).
    pub grace: Option<Duration>,
    /// How long hal waits for a unit's stop job: `-t`, else the module's
    /// timeout (systemd's own `TimeoutStopSec=` decides when it is killed).
    pub unit_wait: Duration,
}

impl StopPlan {
    /// `grace` (the flag) over `settings` (the module's config).
    pub(crate) fn new(grace: Option<Duration>, settings: &Settings) -> StopPlan {
        StopPlan {
            grace,
            unit_wait: grace.unwrap_or(settings.timeout),
        }
    }
}

/// What a verb would do to one module (`--dry-run`'s answer).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Would {
    /// Nothing: a start of an active module, a stop of a stopped one.
    None,
    /// Start what is not running (a module not active, or a container its plan makes or starts).
    Start,
    /// Create some of its containers again: its plan replaces or removes one (a changed
    /// configuration or image, an orphan).
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

/// What an update found and did to one module, besides its outcome.
#[derive(Clone, Debug, Default)]
pub(crate) struct UpdateFacts {
    /// Each service's image, before and after (under `--check`: now and in the registry).
    pub images: Vec<ImageChange>,
    /// Rolled back (its error says why): whether the previous images became active again.
    pub rolled_back: Option<bool>,
    /// A check (`--check`): the registries were asked, nothing was pulled.
    pub check: bool,
    /// Under `--check`: whether some service has another image in its
    /// registry; `None` when none has and some registry could not be asked.
    pub available: Option<bool>,
    /// Not tried: `--max-failures` updates had failed before its turn.
    pub skipped: bool,
    /// The update failed, and counts toward `--max-failures`: it was tried
    /// (past the refusals: an unusable config, an engine that cannot be
    /// reached, a module no longer wanted up, its start limit) and could not
    /// pull or recreate, or was rolled back. A refused module is "not
    /// updated", never a failure: `hal update` and `hal watch`'s scheduled
    /// updates both count by this one rule.
    pub failed: bool,
    /// Only for a failed update: what it said beside its error (the namespace
    /// dependents restarted after its rollback), which an error has no outcome
    /// to carry; its document's `warnings`, where a success says them.
    pub beside_error: Vec<Warning>,
    /// The modules that require it (declared or inferred, transitively) and
    /// were active before its recreate: the gate holds them too, and after
    /// a rollback each one not active is restarted.
    pub dependents: Vec<String>,
    /// The modules in its namespace (`network_mode: container:`/`service:`,
    /// `pid:`, `ipc:`, `volumes_from`), transitively, wanted up and active
    /// before its recreate: the gate restarts them into its new containers
    /// and holds them as it holds `dependents`.
    pub followers: Vec<String>,
}

/// One service's image before and after an update (under `--check`: what it
/// runs, and what the registry has now).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub(crate) struct ImageChange {
    pub service: String,
    /// The service's image reference, as compose resolved it.
    pub image: String,
    /// What it ran: its repository digest (`sha256:…`) where it has one, else its image id.
    pub from: Option<String>,
    /// What it runs after the update (the registry's digest, under `--check`;
    /// `None` there when the registry could not be asked).
    pub to: Option<String>,
    /// Whether the image changed (would change, under `--check`).
    pub changed: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flag_wins_over_the_config_and_the_config_fills_the_rest() {
        let settings = Settings {
            pull: PullPolicy::Missing,
            limit: RestartLimit::default(),
            timeout: Duration::from_secs(120),
            pull_timeout: Duration::from_secs(300),
        };
        let flags = StartOpts {
            pull: Some(PullPolicy::Never),
            wait: false,
            timeout: None,
        };
        let plan = StartPlan::new(&flags, &settings);
        assert_eq!(plan.pull, PullPolicy::Never);
        assert_eq!(plan.timeout, Duration::from_secs(120));
        assert_eq!(plan.pull_timeout, Duration::from_secs(300));
        assert!(!plan.wait);
        let timed = StartOpts {
            timeout: Some(Duration::from_secs(5)),
            ..flags
        };
        assert_eq!(
            StartPlan::new(&timed, &settings).timeout,
            Duration::from_secs(5)
        );
    }
}
