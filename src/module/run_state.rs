//! What a service row of a status is doing, typed: a container's run state, health and restart policy, or a unit's activity, each with its words defined once (read tolerantly, published as those words).

use serde::{Serialize, Serializer};

/// Where a unit is in its life, in the words systemd made common (its
/// `ActiveState`); an init with other words maps them onto these.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Activity {
    Active,
    Activating,
    Reloading,
    Deactivating,
    Inactive,
    Failed,
    /// A word this hal does not know yet.
    Other(String),
}

impl Activity {
    /// The activity an init's word names.
    pub(crate) fn from_word(word: &str) -> Activity {
        match word {
            "active" => Activity::Active,
            "activating" => Activity::Activating,
            "reloading" => Activity::Reloading,
            "deactivating" => Activity::Deactivating,
            "inactive" => Activity::Inactive,
            "failed" => Activity::Failed,
            other => Activity::Other(other.to_string()),
        }
    }

    /// The word, as `from_word` reads it.
    pub(crate) fn as_str(&self) -> &str {
        match self {
            Activity::Active => "active",
            Activity::Activating => "activating",
            Activity::Reloading => "reloading",
            Activity::Deactivating => "deactivating",
            Activity::Inactive => "inactive",
            Activity::Failed => "failed",
            Activity::Other(w) => w,
        }
    }
}

/// Its word (`hal adopt --json`'s units).
impl Serialize for Activity {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// A container's run state, as the engine words it. Reading is tolerant: a
/// word hal does not know is read as the nearest one it does (Podman's
/// transient `stopped` is `exited`), never a failed call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ContainerRun {
    Created,
    Running,
    Paused,
    Restarting,
    Removing,
    Stopping,
    Exited,
    Dead,
}

impl ContainerRun {
    /// The state an engine's word names; `None` for an empty word (the engine said nothing).
    pub(crate) fn from_word(word: &str) -> Option<ContainerRun> {
        Some(match word {
            "" => return None,
            "running" => ContainerRun::Running,
            // Podman's states before a first start.
            "created" | "configured" | "initialized" => ContainerRun::Created,
            "paused" => ContainerRun::Paused,
            "restarting" => ContainerRun::Restarting,
            "removing" => ContainerRun::Removing,
            "stopping" => ContainerRun::Stopping,
            // Podman reports `stopped` for a moment after a container exits.
            "exited" | "stopped" => ContainerRun::Exited,
            // Anything else cannot be started as it is.
            _ => ContainerRun::Dead,
        })
    }

    /// Docker's word for the state (what `status --json` and the logs print).
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            ContainerRun::Created => "created",
            ContainerRun::Running => "running",
            ContainerRun::Paused => "paused",
            ContainerRun::Restarting => "restarting",
            ContainerRun::Removing => "removing",
            ContainerRun::Stopping => "stopping",
            ContainerRun::Exited => "exited",
            ContainerRun::Dead => "dead",
        }
    }
}

/// A container's health, from the engine's own health field. A container
/// without a healthcheck has none (`Option<Health>`: the engine's `none`, or
/// nothing). Reading is tolerant: a word hal does not know counts as healthy,
/// as a container whose healthcheck says nothing against it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Health {
    Starting,
    Healthy,
    Unhealthy,
}

impl Health {
    /// The health an engine's word names; `None` for no healthcheck.
    pub(crate) fn from_word(word: &str) -> Option<Health> {
        Some(match word {
            "" | "none" => return None,
            "starting" => Health::Starting,
            "unhealthy" => Health::Unhealthy,
            _ => Health::Healthy,
        })
    }

    /// The engine's word (what `status --json` prints).
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Health::Starting => "starting",
            Health::Healthy => "healthy",
            Health::Unhealthy => "unhealthy",
        }
    }
}

impl Serialize for Health {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// A container's restart policy: what the engine does when it exits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum RestartPolicy {
    /// `no` (or none given): never restarted.
    #[default]
    No,
    /// Restarted whenever it exits, and when the engine starts.
    Always,
    /// As `Always`, except after a stop by a person (`docker stop`).
    UnlessStopped,
    /// Restarted when it exits non-zero, at most N times (0: no limit).
    OnFailure(i64),
}

impl RestartPolicy {
    /// The policy an engine's name (and `on-failure`'s retry limit) says; a
    /// name hal does not know reads as `no`, as the engine would not restart.
    pub(crate) fn from_word(name: &str, max_retries: i64) -> RestartPolicy {
        match name {
            "always" => RestartPolicy::Always,
            "unless-stopped" => RestartPolicy::UnlessStopped,
            "on-failure" => RestartPolicy::OnFailure(max_retries),
            _ => RestartPolicy::No,
        }
    }

    /// The engine's name of the policy.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            RestartPolicy::No => "no",
            RestartPolicy::Always => "always",
            RestartPolicy::UnlessStopped => "unless-stopped",
            RestartPolicy::OnFailure(_) => "on-failure",
        }
    }

    /// `on-failure`'s retry limit (0: none, or another policy).
    pub(crate) fn max_retries(self) -> i64 {
        match self {
            RestartPolicy::OnFailure(n) => n,
            _ => 0,
        }
    }

    /// Whether the engine restarts the container at all, on some exit.
    pub(crate) fn restarts(self) -> bool {
        self != RestartPolicy::No
    }

    /// Whether the policy says the container should always be running
    /// (`always`, `unless-stopped`): one that is not running is not done,
    /// whatever its exit code.
    pub(crate) fn keeps_running(self) -> bool {
        matches!(self, RestartPolicy::Always | RestartPolicy::UnlessStopped)
    }
}

/// The state of one service row: a container's, or a unit's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum ServiceState {
    /// A container's run state; `None` when the engine said nothing of it.
    Container(Option<ContainerRun>),
    Unit {
        activity: Activity,
        /// The init's own words for people, e.g. systemd's `active/running`.
        words: String,
    },
}

impl ServiceState {
    /// What the status document says: the engine's word, or the init's words.
    pub(crate) fn as_str(&self) -> &str {
        match self {
            ServiceState::Container(run) => run.map_or("", ContainerRun::as_str),
            ServiceState::Unit { words, .. } => words,
        }
    }

    /// The container's run state, if this is a container.
    pub(crate) fn container(&self) -> Option<ContainerRun> {
        match self {
            ServiceState::Container(run) => *run,
            ServiceState::Unit { .. } => None,
        }
    }

    /// The unit's activity, if this is a unit.
    pub(crate) fn unit(&self) -> Option<&Activity> {
        match self {
            ServiceState::Unit { activity, .. } => Some(activity),
            ServiceState::Container(_) => None,
        }
    }
}

impl Default for ServiceState {
    /// A container the engine said nothing of.
    fn default() -> ServiceState {
        ServiceState::Container(None)
    }
}

impl std::fmt::Display for ServiceState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for ServiceState {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// The node state `running` (`module/node_state.rs`), spelt here with the other state words.
pub(crate) const RUNNING_WORD: &str = "running";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_round_trip() {
        for w in [
            "active",
            "activating",
            "reloading",
            "deactivating",
            "inactive",
            "failed",
            "maintenance",
        ] {
            assert_eq!(Activity::from_word(w).as_str(), w);
        }
        assert_eq!(Activity::from_word("failed"), Activity::Failed);
    }

    #[test]
    fn container_states_are_read_tolerantly() {
        assert_eq!(
            ContainerRun::from_word("stopped"),
            Some(ContainerRun::Exited)
        );
        assert_eq!(
            ContainerRun::from_word("configured"),
            Some(ContainerRun::Created)
        );
        assert_eq!(
            ContainerRun::from_word("initialized"),
            Some(ContainerRun::Created)
        );
        assert_eq!(
            ContainerRun::from_word("running"),
            Some(ContainerRun::Running)
        );
        assert_eq!(ContainerRun::from_word("what"), Some(ContainerRun::Dead));
        assert_eq!(ContainerRun::from_word(""), None);
        for w in [
            "created",
            "running",
            "paused",
            "restarting",
            "removing",
            "stopping",
            "exited",
            "dead",
        ] {
            assert_eq!(
                ContainerRun::from_word(w).map(ContainerRun::as_str),
                Some(w)
            );
        }
        assert_eq!(ServiceState::default().as_str(), "");
    }

    #[test]
    fn health_and_restart_policy_are_read_tolerantly() {
        assert_eq!(Health::from_word("none"), None);
        assert_eq!(Health::from_word(""), None);
        assert_eq!(Health::from_word("what"), Some(Health::Healthy));
        for w in ["starting", "healthy", "unhealthy"] {
            assert_eq!(Health::from_word(w).map(Health::as_str), Some(w));
        }
        assert_eq!(RestartPolicy::from_word("", 0), RestartPolicy::No);
        assert_eq!(RestartPolicy::from_word("what", 3), RestartPolicy::No);
        assert_eq!(
            RestartPolicy::from_word("on-failure", 3),
            RestartPolicy::OnFailure(3)
        );
        for p in [
            RestartPolicy::No,
            RestartPolicy::Always,
            RestartPolicy::UnlessStopped,
            RestartPolicy::OnFailure(2),
        ] {
            assert_eq!(RestartPolicy::from_word(p.as_str(), p.max_retries()), p);
        }
        assert!(RestartPolicy::UnlessStopped.keeps_running());
        assert!(!RestartPolicy::OnFailure(0).keeps_running());
        assert!(RestartPolicy::OnFailure(0).restarts());
        assert!(!RestartPolicy::No.restarts());
    }
}
