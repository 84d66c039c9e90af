//! Why a module is not `active`: a list of typed causes, joined with `"; "` only when printed or serialized (their words: `output/reason_words.rs`).

use serde::{Serialize, Serializer};

use crate::module::container_trouble::ContainerTrouble;
use crate::module::recorded_causes::{RollbackCause, SeenCause, StartCause};
use crate::module::state::State;
use crate::util::timefmt::Stamp;

/// One cause of a module's state, in the order the reason says them.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Reason {
    /// A stack with no container at all.
    NoContainers,
    /// What one container is doing (`service web exited with code 1`…).
    Container(ContainerTrouble),
    /// Every container stopped (none merely created).
    Stopped,
    /// Services of the expected set with fewer containers than compose runs for them.
    Missing(Vec<MissingService>),
    /// Services a person stopped alone, while the rest is active.
    StoppedByRequest(Vec<String>),
    /// A running container left in a dead network namespace.
    StaleNamespace {
        service: String,
        stale: StaleNamespace,
    },
    /// A cause said elsewhere in words: a unit's state, an engine that could
    /// not be read, an invalid module, a project of another directory.
    Said(String),
    /// A start that failed (of one service, when it names one), until a start succeeds.
    Failed {
        service: Option<String>,
        cause: StartCause,
    },
    /// The start limit is hit until `free_at`.
    StartLimit {
        used: u32,
        /// The window, said as the config writes it (`2m`).
        interval: std::time::Duration,
        free_at: Stamp,
    },
    /// `hal watch` holds the module until `until`.
    Held { until: Stamp },
    /// An update rolled back, until the next update or `reset-failed`.
    RolledBack {
        services: Vec<String>,
        at: Stamp,
        cause: RollbackCause,
    },
    /// The last pull's warning.
    PullWarning(String),
    /// Digests a rollback put aside, not applied again: `(service, digest)`.
    Quarantined(Vec<(String, String)>),
    /// Wanted up while what it requires is not active.
    WaitingOn(Vec<Requirement>),
    /// An update not tried: `--max-failures` updates (this many) had failed before its turn.
    NotUpdated { max_failures: usize },
}

/// A requirement a module waits on, with its state and reason.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Requirement {
    pub name: String,
    pub state: State,
    pub reason: Reasons,
}

impl Reason {
    /// Whether this cause, a failed start's, already says `other`: no
    /// containers, or a cause the failure saw (the same container doing the
    /// same, or the same cause said elsewhere).
    pub(crate) fn covers(&self, other: &Reason) -> bool {
        let Reason::Failed { cause, .. } = self else {
            return false;
        };
        match other {
            Reason::NoContainers => true,
            _ => cause.seen().iter().any(|seen| other.is_seen(seen)),
        }
    }

    /// Whether this cause is the one a failure saw.
    fn is_seen(&self, seen: &SeenCause) -> bool {
        match (self, seen) {
            (Reason::Container(live), SeenCause::Container(saw)) => live == saw,
            (Reason::Said(live), SeenCause::Said(saw)) => live == saw,
            _ => false,
        }
    }

    /// The cause as a failure that saw it records it: a container's trouble or
    /// a cause said elsewhere (none for the rest).
    pub(crate) fn as_seen(&self) -> Option<SeenCause> {
        match self {
            Reason::Container(t) => Some(SeenCause::Container(t.clone())),
            Reason::Said(w) => Some(SeenCause::Said(w.clone())),
            _ => None,
        }
    }
}

/// A module's reason: its causes, first said first; none while it is `active`.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Reasons(pub Vec<Reason>);

impl Reasons {
    /// No cause.
    pub(crate) fn none() -> Reasons {
        Reasons(Vec::new())
    }

    /// One cause.
    pub(crate) fn one(r: Reason) -> Reasons {
        Reasons(vec![r])
    }

    /// One cause said in words elsewhere, or none.
    pub(crate) fn said(why: Option<String>) -> Reasons {
        Reasons(why.map(Reason::Said).into_iter().collect())
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Says `r` before the rest.
    pub(crate) fn first(&mut self, r: Reason) {
        self.0.insert(0, r);
    }

    /// Says `r` after the rest.
    pub(crate) fn then(&mut self, r: Reason) {
        self.0.push(r);
    }

    /// Says `rest` after these.
    pub(crate) fn extend(&mut self, rest: Reasons) {
        self.0.extend(rest.0);
    }

    /// The reason as one line, or `None` without a cause.
    pub(crate) fn text(&self) -> Option<String> {
        (!self.is_empty()).then(|| self.to_string())
    }
}

impl From<Option<Reason>> for Reasons {
    fn from(r: Option<Reason>) -> Reasons {
        Reasons(r.into_iter().collect())
    }
}

/// As `status --json` has it: the causes in one string, or null.
impl Serialize for Reasons {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.text() {
            Some(t) => s.serialize_str(&t),
            None => s.serialize_none(),
        }
    }
}

/// A container left in a dead network namespace (`network_mode: container:X`):
/// X started again after it, is stopped, or is gone (recreated, removed).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct StaleNamespace {
    /// X's name, or its short id when it is gone.
    pub provider: String,
    /// What became of X.
    pub fate: ProviderFate,
}

/// What became of the container whose network namespace a running one joined.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum ProviderFate {
    /// It runs again, in a new namespace: a restart of the container joins it.
    StartedAgain,
    /// It is stopped (not removed): there is no namespace to join until it runs again.
    Stopped,
    /// It is gone: the container must be recreated to find X's successor by name.
    Gone,
}

/// A service of a stack's expected set that has fewer containers than compose runs for it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub(crate) struct MissingService {
    pub name: String,
    /// How many containers compose runs for it.
    pub expected: u32,
    /// How many it has.
    pub containers: u32,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::module::container_trouble::Doing;

    fn exited(container: &str, code: i64) -> ContainerTrouble {
        ContainerTrouble {
            container: container.into(),
            doing: Doing::Exited { code },
        }
    }

    fn failed_on(seen: Vec<SeenCause>) -> Reason {
        Reason::Failed {
            service: None,
            cause: StartCause::Diagnosed {
                summary: "did not start: service db exited with code 1".into(),
                seen,
            },
        }
    }

    #[test]
    fn a_failed_start_covers_the_container_trouble_it_saw() {
        let failed = failed_on(vec![SeenCause::Container(exited("db", 1))]);
        assert!(failed.covers(&Reason::NoContainers));
        assert!(failed.covers(&Reason::Container(exited("db", 1))));
        let unit = Reason::Failed {
            service: None,
            cause: StartCause::Diagnosed {
                summary: "did not start: unit failed".into(),
                seen: vec![SeenCause::Said("unit failed".into())],
            },
        };
        assert!(unit.covers(&Reason::Said("unit failed".into())));
    }

    #[test]
    fn a_failed_start_does_not_cover_another_containers_trouble() {
        let failed = failed_on(vec![SeenCause::Container(exited("db", 1))]);
        // Another container, the same container doing another thing.
        assert!(!failed.covers(&Reason::Container(exited("web", 1))));
        assert!(!failed.covers(&Reason::Container(exited("db", 2))));
        let db_dead = ContainerTrouble {
            container: "db".into(),
            doing: Doing::Dead,
        };
        assert!(!failed.covers(&Reason::Container(db_dead)));
        // A name within another's (`db` in `db-2`) says nothing of it.
        assert!(!failed.covers(&Reason::Container(exited("db-2", 1))));
        assert!(!failed.covers(&Reason::Said("service db exited with code 1".into())));
        assert!(!failed.covers(&Reason::Stopped));
        assert!(!Reason::Stopped.covers(&Reason::NoContainers));
        // A cause in words alone (an error, an older hal's record) saw nothing.
        let words = Reason::Failed {
            service: None,
            cause: StartCause::Words("did not start: service db exited with code 1".into()),
        };
        assert!(words.covers(&Reason::NoContainers));
        assert!(!words.covers(&Reason::Container(exited("db", 1))));
    }
}
