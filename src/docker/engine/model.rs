//! The engine's answers in hal's own types (`Listed`, `Inspected`, events, log chunks, pull progress): bollard's stream models are read here and nowhere else (list and inspect are read off the wire in `answers.rs`), so a second engine's words and states are this file's business.

use std::collections::HashMap;

use bollard::auth::DockerCredentials;
use bollard::container::LogOutput;
use bollard::models::{CreateImageInfo, EventMessage};

use crate::docker::credentials::RegistryAuth;
use crate::docker::labels::Identity;
use crate::error::HalError;
use crate::logs::line::Stream;
use crate::module::run_state::{ContainerRun, Health, RestartPolicy};
use crate::util::timefmt::Stamp;

/// An engine call that failed, told in hal's terms with the engine's own message.
#[derive(Debug)]
pub enum EngineError {
    /// The engine cannot be reached, or not by this user (exit 6, with the likely fix).
    Unreachable(HalError),
    /// The engine answered with an error: its own words.
    Refused(String),
    /// The engine answered, but hal's client could not read the answer (a word
    /// or shape it does not know): the engine is there.
    Decode(anyhow::Error),
    /// Anything else the client met, as it tells it.
    Other(anyhow::Error),
}

impl From<EngineError> for anyhow::Error {
    fn from(e: EngineError) -> anyhow::Error {
        match e {
            EngineError::Unreachable(h) => anyhow::Error::new(h),
            EngineError::Refused(message) => anyhow::anyhow!(message),
            EngineError::Decode(e) | EngineError::Other(e) => e,
        }
    }
}

/// One container as the list call describes it.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Listed {
    pub id: String,
    /// Its name, without the leading `/`.
    pub name: String,
    pub image: String,
    pub image_id: Option<String>,
    /// Its labels: compose's identity, config hash and `depends_on` live here.
    pub labels: HashMap<String, String>,
    /// Who it is in compose's terms; `None` outside any compose project.
    pub identity: Option<Identity>,
    pub state: Option<ContainerRun>,
    /// The engine's display text (`Up 5 minutes (healthy)`).
    pub status_text: Option<String>,
    /// Health where the list states it in a field of its own (newer APIs):
    /// `None` when it has no such field, `Some(None)` when the field says the
    /// container has no healthcheck.
    pub health: Option<Option<Health>>,
    /// Creation time (the engine says it to the second).
    pub created: Stamp,
    /// The run of a running container: its network endpoint ids, sorted and
    /// joined, new at every start; `None` when it has none to tell one run from the next.
    pub run: Option<String>,
    /// The container whose network namespace it shares (`network_mode: container:ID`): that id.
    pub netns_of: Option<String>,
    /// The host ports it publishes (a running container holds them).
    pub ports: Vec<Published>,
}

/// One host port a container publishes, as the list says it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Published {
    /// The host address (`0.0.0.0`, `::` or one address).
    pub ip: String,
    pub port: u16,
    /// `tcp`, `udp` or `sctp`.
    pub protocol: String,
}

impl Listed {
    pub(crate) fn is_running(&self) -> bool {
        self.state == Some(ContainerRun::Running)
    }

    /// Its compose service, when it has one.
    pub(crate) fn service(&self) -> Option<&str> {
        self.identity.as_ref().map(|who| who.service.as_str())
    }

    /// Whether compose made it for `compose run`.
    pub(crate) fn is_oneoff(&self) -> bool {
        self.identity.as_ref().is_some_and(|who| who.oneoff)
    }
}

/// What an inspect adds to the list: how the container runs and ran.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Inspected {
    pub state: Option<ContainerRun>,
    /// The engine's own health field: `None` when it has none, `Some(None)`
    /// when it says the container has no healthcheck.
    pub health: Option<Option<Health>>,
    pub exit_code: Option<i64>,
    pub restart: RestartPolicy,
    pub restart_count: Option<i64>,
    /// `None` when the engine says never (its zero time) or nothing.
    pub started_at: Option<Stamp>,
    pub finished_at: Option<Stamp>,
    pub oom_killed: bool,
    /// The engine's error for its last start, when it has one.
    pub error: Option<String>,
    /// Where the engine sends its lines (`HostConfig.LogConfig`).
    pub log: Option<LogConfig>,
}

/// The log driver that sends a container's lines to the node's journal: its one definition.
pub(crate) const JOURNALD: &str = "journald";

/// A container's log driver and the label names it copies into each line (`labels=` log-opt).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct LogConfig {
    /// `json-file`, `local`, `journald`…
    pub driver: String,
    pub labels: Vec<String>,
}

impl LogConfig {
    /// Whether its lines go to the node's journal.
    pub(crate) fn to_journal(&self) -> bool {
        self.driver == JOURNALD
    }

    /// From `HostConfig.LogConfig`: its `Type`, and the `labels` option's names.
    pub(crate) fn of(
        driver: Option<String>,
        options: Option<&std::collections::HashMap<String, String>>,
    ) -> LogConfig {
        LogConfig {
            driver: driver.unwrap_or_default(),
            labels: options
                .and_then(|c| c.get("labels"))
                .map(|v| v.split(',').map(|x| x.trim().to_string()).collect())
                .unwrap_or_default(),
        }
    }
}

/// What a container event says happened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum EventAction {
    Start,
    Die,
    Oom,
    Destroy,
    /// A health check's result changed (or, on some engines, was made).
    Health {
        unhealthy: bool,
    },
    Other(String),
}

impl EventAction {
    /// The action an engine's word names (`health_status: unhealthy` carries its result).
    pub(crate) fn from_word(word: &str) -> EventAction {
        match word {
            "start" => EventAction::Start,
            // Podman 4 says `died`, and `remove` for `destroy`.
            "die" | "died" => EventAction::Die,
            "oom" => EventAction::Oom,
            "destroy" | "remove" => EventAction::Destroy,
            w if w.starts_with("health_status") => EventAction::Health {
                unhealthy: w.ends_with("unhealthy"),
            },
            other => EventAction::Other(other.to_string()),
        }
    }

    /// The word the engine's `event` filter takes for this action.
    pub(crate) fn filter_word(&self) -> &str {
        match self {
            EventAction::Start => "start",
            EventAction::Die => "die",
            EventAction::Oom => "oom",
            EventAction::Destroy => "destroy",
            EventAction::Health { .. } => "health_status",
            EventAction::Other(w) => w,
        }
    }
}

/// One container event.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct EngineEvent {
    pub action: EventAction,
    /// The container's id.
    pub id: Option<String>,
    /// The container's labels, and `name` (its name).
    pub attributes: HashMap<String, String>,
    /// When it happened (to the nanosecond where the engine says so).
    pub at: Stamp,
}

impl EngineEvent {
    /// The container's name.
    pub(crate) fn container(&self) -> Option<&str> {
        self.attributes.get("name").map(String::as_str)
    }
}

/// One chunk of a container's log, from one of its streams.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct LogChunk {
    pub stream: Stream,
    pub bytes: bytes::Bytes,
}

/// One progress message of a pull.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct PullProgress {
    /// The layer it is about.
    pub id: Option<String>,
    pub status: Option<String>,
    pub current: Option<i64>,
    pub total: Option<i64>,
}

pub(super) fn event(ev: EventMessage) -> EngineEvent {
    let at = match (ev.time_nano, ev.time) {
        (Some(n), _) => Stamp::from_micros(n / 1000),
        (None, Some(s)) => Stamp::from_secs(s),
        (None, None) => Stamp::now(),
    };
    let (id, attributes) = match ev.actor {
        Some(a) => (a.id, a.attributes.unwrap_or_default()),
        None => (None, HashMap::new()),
    };
    let action = match ev.action.as_deref().unwrap_or("") {
        // Podman says a bare `health_status` at every check (its result is in a
        // field of its own): not a verdict, only a reason to read the container again.
        "health_status" => EventAction::Other("health_status".into()),
        word => EventAction::from_word(word),
    };
    EngineEvent {
        action,
        id,
        attributes,
        at,
    }
}

pub(super) fn log_chunk(frame: LogOutput) -> LogChunk {
    let stream = match frame {
        LogOutput::StdErr { .. } => Stream::Stderr,
        _ => Stream::Stdout,
    };
    LogChunk {
        stream,
        bytes: frame.into_bytes(),
    }
}

pub(super) fn pull_progress(info: CreateImageInfo) -> PullProgress {
    let detail = info.progress_detail.unwrap_or_default();
    PullProgress {
        id: info.id,
        status: info.status,
        current: detail.current,
        total: detail.total,
    }
}

pub(super) fn credentials(a: RegistryAuth) -> DockerCredentials {
    DockerCredentials {
        username: a.username,
        password: a.password,
        identitytoken: a.identitytoken,
        serveraddress: a.serveraddress,
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bollard::models::EventActor;

    #[test]
    fn events_carry_their_action_labels_and_time() {
        let ev = event(EventMessage {
            action: Some("health_status: unhealthy".into()),
            actor: Some(EventActor {
                id: Some("abc".into()),
                attributes: Some(HashMap::from([("name".into(), "m-web-1".into())])),
            }),
            time: Some(1_700_000_000),
            time_nano: Some(1_700_000_000_500_000_000),
            ..Default::default()
        });
        assert_eq!(ev.action, EventAction::Health { unhealthy: true });
        assert_eq!(ev.container(), Some("m-web-1"));
        assert_eq!(ev.at.secs(), 1_700_000_000);
        assert_eq!(EventAction::from_word("died"), EventAction::Die);
        assert_eq!(
            EventAction::from_word("health_status: healthy"),
            EventAction::Health { unhealthy: false }
        );
    }
}
