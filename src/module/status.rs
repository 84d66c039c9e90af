//! What hal reports about a module: its state, the reason, its services or unit, its start limit.

use std::time::Duration;

use serde::{Deserialize, Serialize};

pub(crate) use crate::module::reason::{MissingService, ProviderFate, Reasons, StaleNamespace};
use crate::module::recorded_causes::{HoldCause, RollbackCause};
use crate::module::run_state::{Health, ServiceState};
pub(crate) use crate::module::state::State;
use crate::module::{KindTag, Module};
use crate::util::stored;
use crate::util::timefmt::Stamp;

/// Whether a person last asked for the module to run or to be stopped.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Desired {
    Up,
    Down,
}

impl Desired {
    pub fn as_str(self) -> &'static str {
        match self {
            Desired::Up => "up",
            Desired::Down => "down",
        }
    }
}

/// One container of a stack, or the unit of a host module.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub(crate) struct ServiceStatus {
    /// The compose service, or the unit name.
    pub name: String,
    /// The container name (stacks).
    pub container: Option<String>,
    /// The unit name (host modules).
    pub unit: Option<String>,
    /// The engine's own word: `running`, `exited`, `restarting`…, or a unit's `ActiveState/SubState`.
    pub state: ServiceState,
    /// `healthy`, `unhealthy`, `starting`, or null without a healthcheck.
    pub health: Option<Health>,
    pub exit_code: Option<i64>,
    pub restart_count: Option<i64>,
    /// When it last started: RFC 3339 as the engine prints it (the fraction
    /// without trailing zeros; a unit's to the second).
    #[serde(with = "stored::rfc3339_trimmed::option")]
    pub started_at: Option<Stamp>,
    /// How a container counts toward its module's state (stacks only): the
    /// one rule that status and the supervisor both read. Not published.
    #[serde(skip)]
    pub verdict: Option<Verdict>,
    /// What the container is doing, in the words of the module's reason
    /// (stacks only): the supervisor's log says the same. Not published.
    #[serde(skip)]
    pub why: Option<String>,
    /// Running in a network namespace its provider no longer has (stacks
    /// only): it must be restarted (or recreated) to join the provider's
    /// current one. Said in the module's reason; not published on its own.
    #[serde(skip)]
    pub stale: Option<StaleNamespace>,
    /// The container whose network namespace it shares, by id (stacks only;
    /// the watch looks at it again when that one starts). Not published.
    #[serde(skip)]
    pub netns_of: Option<String>,
}

/// The start-limit figures of a module.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub(crate) struct LimitStatus {
    /// Starts counted in the current window.
    pub used: u32,
    pub burst: u32,
    /// The window, written as the config writes it (`2m`, `1h30m`).
    #[serde(with = "stored::span")]
    pub interval: Duration,
    /// When a held module may start again (RFC 3339, to the second), or null when it may start now.
    #[serde(with = "stored::rfc3339::option")]
    pub free_at: Option<Stamp>,
}

/// A module's status, as `status --json` publishes it.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct ModuleStatus {
    pub name: String,
    /// Only for `status MODULE/SERVICE`: the one service this status is of
    /// (its state, and its containers alone in `services`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub service: Option<String>,
    pub kind: KindTag,
    pub state: State,
    /// Why the module is not `active`: its causes, said in one line.
    pub reason: Reasons,
    /// When the module's current state began, where known (RFC 3339, to the second).
    #[serde(with = "stored::rfc3339::option")]
    pub since: Option<Stamp>,
    /// `up` (started by request), `down` (stopped by request), or null when hal never touched it.
    pub desired: Option<Desired>,
    pub limit: LimitStatus,
    pub services: Vec<ServiceStatus>,
    /// A timer module's runs (absent for other modules).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timer: Option<TimerStatus>,
    /// Set while `hal watch` holds the module (its start limit is hit), or null.
    pub held: Option<HeldStatus>,
    /// Services of the expected set (what compose resolved: active profiles,
    /// replicas) with fewer containers than expected (stacks only).
    pub missing: Vec<MissingService>,
    /// Services a person stopped alone (`hal stop MODULE/SERVICE`): expected down.
    pub expected_down: Vec<String>,
    /// Only for `status MODULE`: the failed runs hal kept before it removed or
    /// recreated their containers (each service's last), oldest lines first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_runs: Option<Vec<crate::module::last_run::Run>>,
    /// Wanted up and not active while what it requires is not active either:
    /// those requirements (`hal watch` waits on them rather than charging it).
    pub waiting_on: Vec<String>,
    /// The data its last update checkpointed (issue 48), or null.
    pub checkpoint: Option<CheckpointStatus>,
    /// The digests a rollback put aside, one per service: not applied again
    /// until another digest is, or `hal update --force` tries it once more.
    pub quarantined: Vec<QuarantinedStatus>,
}

/// A module's checkpoint: how much disk it holds, and when it was taken.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub(crate) struct CheckpointStatus {
    pub bytes: u64,
    /// When it was taken (RFC 3339).
    #[serde(with = "stored::rfc3339")]
    pub at: Stamp,
}

/// A digest hal rolled back and will not apply again.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct QuarantinedStatus {
    pub service: String,
    /// The image's digest in its reference's repository (`sha256:…`).
    pub digest: String,
    /// When it was rolled back (RFC 3339, to the second).
    #[serde(with = "stored::rfc3339")]
    pub since: Stamp,
    /// Why it was rolled back, on one line (in words: `output/record_causes.rs`).
    #[serde(serialize_with = "in_words")]
    pub reason: RollbackCause,
}

/// A cause carried typed to the printer, published as its words (`output/`).
fn in_words<T: std::fmt::Display, S: serde::Serializer>(
    cause: &T,
    s: S,
) -> Result<S::Ok, S::Error> {
    s.collect_str(cause)
}

/// A hold of `hal watch`'s: since when, until when, and why.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub(crate) struct HeldStatus {
    /// When the hold began (RFC 3339).
    #[serde(with = "stored::rfc3339")]
    pub since: Stamp,
    /// When hal watch tries the module again (RFC 3339).
    #[serde(with = "stored::rfc3339")]
    pub until: Stamp,
    /// Why it is held, in the watch log's words (`output/record_causes.rs`).
    #[serde(serialize_with = "in_words")]
    pub reason: HoldCause,
}

/// The runs of a host module whose unit is a timer: the job it starts, how it last went, when next.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub(crate) struct TimerStatus {
    /// The unit the timer starts (`Triggers=`).
    pub job: String,
    /// When the timer last started the job (RFC 3339), or null if it never did.
    #[serde(with = "stored::rfc3339::option")]
    pub last_run: Option<Stamp>,
    /// When the job last ended (RFC 3339), or null.
    #[serde(with = "stored::rfc3339::option")]
    pub last_exit: Option<Stamp>,
    /// `success`, or the init's word for how the last run failed (`exit-code`, `signal`, `timeout`…); null if it never ran.
    pub last_result: Option<String>,
    /// The last run's exit status (128+N for signal N), or null.
    pub last_exit_code: Option<i64>,
    /// When the timer next elapses (RFC 3339), or null when it does not know yet.
    #[serde(with = "stored::rfc3339::option")]
    pub next_run: Option<Stamp>,
}

impl ModuleStatus {
    /// A module's status with nothing known but its state: no reason, time,
    /// desired state, services or limit figures yet.
    pub(crate) fn of(m: &Module, state: State) -> ModuleStatus {
        ModuleStatus::named(&m.name, m.kind_tag(), state)
    }

    /// [`ModuleStatus::of`] by name and kind.
    pub(crate) fn named(name: &str, kind: KindTag, state: State) -> ModuleStatus {
        ModuleStatus {
            name: name.to_string(),
            service: None,
            kind,
            state,
            reason: Reasons::none(),
            since: None,
            desired: None,
            limit: LimitStatus::default(),
            services: Vec::new(),
            timer: None,
            held: None,
            missing: Vec::new(),
            expected_down: Vec::new(),
            last_runs: None,
            waiting_on: Vec::new(),
            checkpoint: None,
            quarantined: Vec::new(),
        }
    }

    /// Whether a person asked for it to run (hal started it and nobody stopped it since).
    pub(crate) fn wanted_up(&self) -> bool {
        self.desired == Some(Desired::Up)
    }

    /// `web`, or `web/worker` for one service's status.
    pub(crate) fn label(&self) -> String {
        match &self.service {
            Some(s) => format!("{}/{s}", self.name),
            None => self.name.clone(),
        }
    }

    /// Whether a requirement is up enough for a dependent to start (issue 39):
    /// active, or a stack starting with every container running and nothing
    /// left but its settle second (systemd's `Requires=` + `After=` waits for
    /// the start, not for the settle). A healthcheck that has not said
    /// `healthy` yet holds it back, unless `running_will_do` (a network
    /// namespace tie needs the provider's container running, nothing more).
    /// A container the engine restarted after a crash waits its settle second
    /// out: it may be a requirement's crash loop.
    pub(crate) fn started(&self, running_will_do: bool) -> bool {
        match self.state {
            State::Active => true,
            State::Starting if self.kind == KindTag::Stack && !self.services.is_empty() => {
                self.services.iter().all(|c| match c.verdict {
                    Some(Verdict::Up | Verdict::Completed) => true,
                    // One Docker restarted after a crash may be crashing again: not yet.
                    Some(Verdict::Starting) if matches!(c.restart_count, Some(n) if n > 0) => false,
                    Some(Verdict::Starting) => running_will_do || c.health.is_none(),
                    _ => false,
                })
            }
            _ => false,
        }
    }

    /// Whether a person should look at it (`status --failed`): failed,
    /// degraded or unknown, or wanted up (started by request) and not active.
    /// A module stopped on purpose, or never started and merely inactive or
    /// invalid, is not listed.
    pub(crate) fn needs_person(&self) -> bool {
        matches!(
            self.state,
            State::Failed | State::Degraded | State::Unknown | State::Conflict | State::Orphaned
        ) || (self.wanted_up() && self.state != State::Active)
    }
}

/// How much a status needs to know about each container.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Detail {
    /// Inspect every container (exact start times and restart counts).
    Full,
    /// Inspect only containers the summary cannot describe.
    Settled,
}

/// How one container counts toward its module's state.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Running, healthy where it has a healthcheck.
    Up,
    /// Exited 0 and not meant to be restarted: a finished job.
    Completed,
    /// Running; its healthcheck has not decided yet.
    Starting,
    Unhealthy,
    /// Not running, and not a failure: stopped by request, or created and never started.
    Stopped,
    /// Exited though its restart policy says it should run (`always`,
    /// `unless-stopped`), whatever its exit code: stopped behind hal's back
    /// (`docker stop`, a kill) and the engine is not bringing it back. Not
    /// done: in a module wanted up it counts as down, like a missing service.
    Halted,
    /// Exited non-zero, dead, or restarting. `terminal` when Docker will not bring it back.
    Failed {
        terminal: bool,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hold_and_a_quarantine_publish_their_typed_causes_in_words() {
        use crate::module::recorded_causes::StartCause;
        let held = HeldStatus {
            reason: HoldCause::Refused {
                trouble: "service web exited with code 1".into(),
                refusal: "start limit hit".into(),
            },
            ..HeldStatus::default()
        };
        let j = serde_json::to_value(&held).unwrap();
        assert_eq!(
            j["reason"],
            "service web exited with code 1; start limit hit"
        );
        let q = QuarantinedStatus {
            service: "api".into(),
            digest: "sha256:2b".into(),
            since: Stamp::from_millis(0),
            reason: RollbackCause::NewImage(StartCause::Error("no such image".into())),
        };
        let j = serde_json::to_value(&q).unwrap();
        assert_eq!(j["reason"], "new image no such image");
    }

    fn status(state: State, desired: Option<Desired>) -> ModuleStatus {
        ModuleStatus {
            desired,
            ..ModuleStatus::named("web", KindTag::Stack, state)
        }
    }

    #[test]
    fn what_needs_a_person() {
        for s in [
            State::Failed,
            State::Degraded,
            State::Unknown,
            State::Conflict,
            State::Orphaned,
        ] {
            for d in [None, Some(Desired::Up), Some(Desired::Down)] {
                assert!(status(s, d).needs_person(), "{s:?} {d:?}");
            }
        }
        // Wanted up and not active.
        for s in [State::Inactive, State::Starting, State::Invalid] {
            assert!(status(s, Some(Desired::Up)).needs_person(), "{s:?}");
            assert!(!status(s, Some(Desired::Down)).needs_person(), "{s:?}");
            assert!(!status(s, None).needs_person(), "{s:?}");
        }
        for d in [None, Some(Desired::Up), Some(Desired::Down)] {
            assert!(!status(State::Active, d).needs_person());
        }
    }

    /// Every state, and a compile error here when one is added.
    fn every_state() -> Vec<State> {
        use State::*;
        let all = [
            Active, Starting, Degraded, Inactive, Failed, Conflict, Orphaned, Invalid, Unknown,
        ];
        for s in all {
            match s {
                Active | Starting | Degraded | Inactive | Failed | Conflict | Orphaned
                | Invalid | Unknown => {}
            }
        }
        all.to_vec()
    }

    /// `hal --help` (so hal(1)) and `hal status --help` name every state.
    #[test]
    fn the_help_names_every_state() {
        use clap::CommandFactory;
        let root = crate::cli::Cli::command();
        let about = root
            .get_long_about()
            .map(|t| t.to_string())
            .unwrap_or_default();
        let status = root
            .find_subcommand("status")
            .and_then(|c| c.get_long_about())
            .map(|t| t.to_string())
            .unwrap_or_default();
        for s in every_state() {
            let word = s.as_str();
            for (what, text) in [("hal --help", &about), ("hal status --help", &status)] {
                let named = text
                    .split(|c: char| !c.is_ascii_alphabetic())
                    .any(|w| w == word);
                assert!(named, "{what} does not name the state {word}: {text}");
            }
        }
    }
}
