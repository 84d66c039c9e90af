//! A verb that changes modules, and what sets one verb apart from another, as methods rather than words.

use std::time::Duration;

use crate::module::Module;
use crate::module::config::PullPolicy;
use crate::module::fix::Fix;
use crate::module::outcome::StartOpts;
use crate::output::reports::VerbView;
use crate::run::rehearsal::Rehearsal;

/// How an update run goes: the command line's, or the supervisor's schedule.
#[derive(Clone, Debug)]
pub(crate) struct UpdateOpts {
    /// `--check`: ask the registries, pull nothing, change nothing.
    pub check: bool,
    /// Update even when the start limit is hit (it still counts).
    pub force: bool,
    /// How long an updated module has to become active (the module's timeout when `None`).
    pub timeout: Option<Duration>,
    /// No update starts once this many have failed (see `UpdateFacts::failed`).
    pub max_failures: usize,
    /// The supervisor's scheduled update: only modules still wanted up once
    /// their lock is taken; a failure is recorded as the supervisor's.
    pub by_supervisor: bool,
    /// `--no-checkpoint`: recreate without copying the data first.
    pub no_checkpoint: bool,
    /// Pinned modules (`pin = true`) named with `--force`: updated anyway.
    /// Any other pinned module is left as it is, and says so.
    pub unpinned: Vec<String>,
}

impl UpdateOpts {
    /// The update's recreate as a start's flags, for its plan: every image
    /// pulled, waited for `active` within `--timeout`.
    pub(crate) fn start(&self) -> StartOpts {
        StartOpts {
            pull: Some(PullPolicy::Always),
            wait: true,
            timeout: self.timeout,
        }
    }
}

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
        fixes: Vec<Fix>,
        opts: StartOpts,
    },
    /// Pull a stack's images and recreate the services whose image changed,
    /// behind the health gate (`--check`: only ask the registries).
    Update {
        opts: UpdateOpts,
    },
    /// `hal plan`: what the next start would do, said and never done (a
    /// requirement not active is a wait of the plan, not a module added).
    Plan {
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
            Verb::Update { .. } => "update",
            Verb::Plan { .. } => "plan",
        }
    }

    /// The verb as the printer says it.
    pub(crate) fn view(&self) -> VerbView {
        VerbView {
            name: self.name(),
            stops: self.stops(),
            updates: self.updates(),
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
            // An update's failure says its state from its rollback; a plan touches nothing.
            Verb::Stop { .. } | Verb::Update { .. } | Verb::Plan { .. } => false,
        }
    }

    /// Whether the verb updates images: its reports say what it found ([`crate::module::outcome::UpdateFacts`]).
    pub(crate) fn updates(&self) -> bool {
        matches!(self, Verb::Update { .. })
    }

    /// Whether the verb stops modules: dependents go first, requirements last.
    pub(crate) fn stops(&self) -> bool {
        matches!(self, Verb::Stop { .. })
    }

    /// Whether a module whose requirement did not come up in the same run
    /// is left untried (`not started: db did not start`).
    /// The verbs that start a module need what it requires up; an update
    /// recreates only what runs, and a stop needs nothing.
    pub(crate) fn needs_requirements_up(&self) -> bool {
        self.starts()
    }

    /// Whether the verb touches a module of this kind at all: a host unit
    /// has no image to update (its report is its state now).
    pub(crate) fn acts_on(&self, m: &Module) -> bool {
        match self {
            Verb::Update { .. } => !m.is_host(),
            _ => true,
        }
    }

    /// Whether the verb refuses, before anything is touched, a node whose
    /// module graph cannot be built (a cycle, a `requires` naming no
    /// module; exit 2, naming it): every verb a person runs does, `update
    /// --check` included. The supervisor's keep the graph the watch holds
    /// (a config that cannot be used keeps the one before). Exhaustive on
    /// purpose: a new verb must say.
    pub(crate) fn refuses_a_bad_graph(&self) -> bool {
        match self {
            Verb::Start { .. }
            | Verb::Stop { .. }
            | Verb::Restart { .. }
            | Verb::Rescue { .. }
            | Verb::Plan { .. } => true,
            Verb::Update { opts } => !opts.by_supervisor,
            Verb::AutoRestart { .. } | Verb::Repair { .. } => false,
        }
    }

    /// Whether the verb ends at once (exit 6) when no target's engine
    /// answers, rather than with one failed report per module: rescue waits
    /// for the engine itself, and the supervisor reports each module.
    pub(crate) fn checks_reachable(&self) -> bool {
        match self {
            Verb::Start { .. } | Verb::Stop { .. } | Verb::Restart { .. } | Verb::Plan { .. } => {
                true
            }
            Verb::Update { opts } => !opts.by_supervisor,
            Verb::Rescue { .. } | Verb::AutoRestart { .. } | Verb::Repair { .. } => false,
        }
    }

    /// Whether the verb adds, before its targets, what they require and is
    /// not active (a start).
    pub(crate) fn pulls_in(&self) -> bool {
        matches!(self, Verb::Start { .. })
    }

    /// Whether the verb adds, before its targets, what requires them and
    /// is not inactive (a stop).
    pub(crate) fn pushes_out(&self) -> bool {
        self.stops()
    }

    /// Whether the verb on every module (`--all`) asks once before it begins.
    pub(crate) fn confirms_all(&self) -> bool {
        matches!(self, Verb::Stop { .. } | Verb::Restart { .. })
    }

    /// Whether the critical modules, and what they require among the
    /// targets, all go before the rest begins (each round in the graph's
    /// layers): a rescue.
    pub(crate) fn critical_first(&self) -> bool {
        matches!(self, Verb::Rescue { .. })
    }

    /// Whether the state of the dependents it may restart after is read
    /// before anything is touched, for the report to say what each was
    /// ([`Ran::followers_were`](crate::run::call::Ran)): a rescue's.
    pub(crate) fn reads_followers_before(&self) -> bool {
        matches!(self, Verb::Rescue { .. })
    }

    /// How the modules whose tie to a module the verb recreated did not
    /// survive (its network namespace, its volumes) are restarted after it,
    /// if at all. Exhaustive on purpose: a new verb must say.
    pub(crate) fn restarts_dependents(&self) -> Option<Followers> {
        match self {
            Verb::Restart { opts, .. } | Verb::Rescue { opts } => {
                Some(Followers::Beside(opts.clone()))
            }
            Verb::Update { opts } if !opts.check => Some(Followers::Within),
            // The watch looks at the modules in a namespace whose container
            // started (`watch/netns.rs`); a start or stop leaves nothing a
            // dependent joined behind.
            Verb::Update { .. }
            | Verb::Start { .. }
            | Verb::Stop { .. }
            | Verb::AutoRestart { .. }
            | Verb::Repair { .. }
            | Verb::Plan { .. } => None,
        }
    }

    /// Whether the verb only says its plan, with or without `--dry-run`.
    pub(crate) fn only_plans(&self) -> bool {
        matches!(self, Verb::Plan { .. })
    }

    /// How this verb's dry run reads the plan, or `None` when it says only
    /// `would` (a stop, and the verbs with no dry run of their own). A start
    /// plans as itself; a restart makes every container anew; an update
    /// (`--check`, `--dry-run`) plans the start after its pull: pull
    /// `always`, the registry's digest asked as `update --check` asks it.
    /// Exhaustive on purpose: a new verb must say.
    pub(crate) fn rehearsal(&self) -> Option<Rehearsal> {
        match self {
            Verb::Start { opts, .. } | Verb::Plan { opts } => Some(Rehearsal {
                opts: opts.clone(),
                anew: false,
            }),
            Verb::Restart { opts, .. } => Some(Rehearsal {
                opts: opts.clone(),
                anew: true,
            }),
            Verb::Update { opts } if opts.check && !opts.by_supervisor => Some(Rehearsal {
                opts: opts.start(),
                anew: false,
            }),
            Verb::Update { .. }
            | Verb::Stop { .. }
            | Verb::Rescue { .. }
            | Verb::AutoRestart { .. }
            | Verb::Repair { .. } => None,
        }
    }

    /// Whether a module gives its `--jobs` slot back before it only waits
    /// for `active`; an update holds it to the end, so a bad image stops
    /// at the first module.
    pub(crate) fn releases_slot_before_wait(&self) -> bool {
        !matches!(self, Verb::Update { .. })
    }

    /// After this many failed modules (see `UpdateFacts::failed`), no other
    /// is tried (`--max-failures`); `None`: every module is tried.
    pub(crate) fn stops_after_failures(&self) -> Option<usize> {
        match self {
            Verb::Update { opts } if !opts.check => Some(opts.max_failures),
            _ => None,
        }
    }
}

/// How a verb restarts the dependents of what it recreated ([`Verb::restarts_dependents`]).
pub(crate) enum Followers {
    /// With these flags, each with its own report after the verb's
    /// (`restart`, `rescue`).
    Beside(StartOpts),
    /// Said on the report of the module that caused it, in its warnings
    /// (`update`, its rollback too).
    Within,
}

/// The runner's context on one module's error (`start web`): read back as
/// a type by `report::cause`, never recognised by its words.
#[derive(Debug)]
pub(crate) struct Step {
    /// The verb's word (`start`, `update`), said before the label.
    pub action: &'static str,
    /// `web`, or `web/worker` for one service.
    pub label: String,
}

impl std::fmt::Display for Step {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.action, self.label)
    }
}
