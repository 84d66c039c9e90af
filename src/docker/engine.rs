//! The one place that talks to the Docker Engine API (Docker, or Podman's compatible API): hal's own GETs (`wire.rs`) read every list and inspect into tolerant types (`answers.rs`) on every transport, bollard serves the streams and the calls whose answers it reads tolerantly; hal's own types in and out, no printing.

mod answers;
mod connect;
mod control;
pub(crate) mod images;
mod model;
mod networks;
mod probe;
mod published;
mod tls;
mod volumes;
mod wire;

use std::collections::HashMap;
use std::time::Duration;

use anyhow::Context;
use bollard::Docker;
use bollard::query_parameters::{CreateImageOptions, EventsOptions, LogsOptions};
use futures_util::stream::{BoxStream, StreamExt};

use crate::docker::credentials::RegistryAuth;
use crate::docker::endpoint::Endpoint;
use crate::docker::labels;
use crate::error::HalError;
use crate::util::timefmt::Stamp;

use connect::{
    CONNECT_TIMEOUT, is_connection_error, negotiate, ping_headers, raw, received, unreachable,
};
use wire::Wire;

pub(crate) use connect::EngineKind;
pub(crate) use probe::ProbeError;

#[cfg(test)]
pub(crate) use model::Published;
pub(crate) use model::{
    EngineError, EngineEvent, EventAction, Inspected, JOURNALD, Listed, LogChunk, PullProgress,
};

/// A stream of engine answers, each read into hal's type.
pub(crate) type EngineStream<T> = BoxStream<'static, Result<T, EngineError>>;

/// How long hal waits for a list or inspect (bollard's own calls wait 120 s).
const CALL_TIMEOUT: Duration = Duration::from_secs(120);

/// A connection to one engine that speaks the Docker Engine API (Docker, or Podman's compatible API).
#[derive(Clone)]
pub(crate) struct Engine {
    api: Docker,
    /// hal's own requests (ping, list, inspect) and who answers them.
    conn: std::sync::Arc<Conn>,
    /// The endpoint as the user would write it, for messages.
    pub endpoint: String,
    pub api_version: String,
}

/// hal's own way to the engine, and which engine it is.
struct Conn {
    /// The engine's socket, TCP or TLS address: every list and inspect goes this way.
    wire: Wire,
    /// Which engine answers (from its ping), for messages and per-engine checks.
    kind: EngineKind,
}

impl Engine {
    /// Connects and takes the API version from the engine's ping (`Api-Version`),
    /// never from `GET /version` (Podman answers that in half a second).
    pub(crate) async fn connect(to: &Endpoint) -> Result<Engine, HalError> {
        let endpoint = to.host.clone();
        let wire = Wire::of(to)?;
        let (version, kind) = ping_headers(&wire, &endpoint).await?;
        let asked = version.as_ref().unwrap_or(bollard::API_DEFAULT_VERSION);
        let client = match (&wire, &to.tls) {
            (Wire::Unix(path), _) => Docker::connect_with_unix(&path.to_string_lossy(), 120, asked),
            (Wire::Tls(..), Some(dir)) => Docker::connect_with_ssl(
                &endpoint,
                &dir.join("key.pem"),
                &dir.join("cert.pem"),
                &dir.join("ca.pem"),
                120,
                asked,
            ),
            _ => Docker::connect_with_http(&endpoint, 120, asked),
        };
        let client = client.map_err(|e| unreachable(&endpoint, &e))?;
        let api = match version {
            Some(_) => client,
            None => negotiate(client, &endpoint).await?,
        };
        let api_version = api.client_version().to_string();
        Ok(Engine {
            api,
            conn: std::sync::Arc::new(Conn { wire, kind }),
            endpoint,
            api_version,
        })
    }

    /// Which engine answers (from its ping), for messages and per-engine checks.
    pub(crate) fn kind(&self) -> EngineKind {
        self.conn.kind
    }

    /// `GET path` on the engine's own API version, the whole answer.
    async fn get(&self, wire: &Wire, path: &str) -> Result<wire::Answer, EngineError> {
        let path = format!("/v{}{path}", self.api_version);
        wire.get(&path, CALL_TIMEOUT)
            .await
            .map_err(|e| EngineError::Unreachable(unreachable(&self.endpoint, &e)))
    }

    /// Turns an engine error met mid-operation into an error the user can act on.
    fn fail(&self, err: bollard::errors::Error) -> EngineError {
        match err {
            e if is_connection_error(&e) => {
                EngineError::Unreachable(unreachable(&self.endpoint, &e))
            }
            // The engine's own words; the HTTP status adds nothing for a person.
            bollard::errors::Error::DockerResponseServerError { message, .. } => {
                EngineError::Refused(message)
            }
            bollard::errors::Error::DockerStreamError { error } => EngineError::Refused(error),
            other => raw(other),
        }
    }

    /// Every compose container on the node (one list call), or those of one project.
    pub(crate) async fn compose_containers(
        &self,
        project: Option<&str>,
    ) -> anyhow::Result<Vec<Listed>> {
        let label = labels::project_filter(project);
        let wire = &self.conn.wire;
        let filters = serde_json::json!({ "label": [label] }).to_string();
        let filters = wire::encode(&filters);
        let path = format!("/containers/json?all=1&filters={filters}");
        let list = self.read::<Vec<answers::Summary>>(wire, &path);
        let (list, health) = if self.kind() == EngineKind::Podman {
            // Podman's list tells health only in its own API's list (asked at the same time).
            let path = format!("/v4.0.0/libpod/containers/json?all=true&filters={filters}");
            let health = async {
                let answer = wire.get(&path, CALL_TIMEOUT).await.ok()?;
                let rows: Vec<answers::LibpodRow> = serde_json::from_slice(&answer.body).ok()?;
                Some(rows)
            };
            let (list, health) = tokio::join!(list, health);
            (list, health.unwrap_or_default())
        } else {
            (list.await, Vec::new())
        };
        let list = list
            .map_err(anyhow::Error::from)
            .context("list containers")?;
        let mut listed: Vec<Listed> = list
            .unwrap_or_default()
            .into_iter()
            .map(answers::Summary::listed)
            .collect();
        answers::add_health(&mut listed, health);
        Ok(listed)
    }

    /// What an inspect says of a container; `None` when it is gone (removed
    /// between list and inspect).
    ///
    /// An engine error (5xx) is asked again, twice at most: Podman answers
    /// 500 ("read /proc/PID/cgroup: no such process") for a container whose
    /// process ends while it is inspected, and the next answer says it exited.
    pub(crate) async fn inspect(&self, id: &str) -> anyhow::Result<Option<Inspected>> {
        let path = format!("/containers/{}/json", wire::encode(id));
        let mut tries = 0;
        let answer = loop {
            let answer = self.get(&self.conn.wire, &path).await;
            tries += 1;
            match answer {
                Ok(a) if a.status >= 500 && tries < 3 => continue,
                other => break other,
            }
        };
        let inspect: Option<answers::Inspect> = answer
            .and_then(decode)
            .map_err(anyhow::Error::from)
            .with_context(|| format!("inspect container {id}"))?;
        Ok(inspect.map(answers::Inspect::inspected))
    }

    /// A GET's JSON answer read into `T`; `None` for a 404. A body hal cannot
    /// read is a decode error (the engine is there), never an unreachable engine.
    async fn read<T: serde::de::DeserializeOwned>(
        &self,
        wire: &Wire,
        path: &str,
    ) -> Result<Option<T>, EngineError> {
        decode(self.get(wire, path).await?)
    }

    /// A container's log stream, `since` and `until` to the second; `tail` is "all" or a count.
    pub(crate) fn logs(
        &self,
        id: &str,
        follow: bool,
        tail: Option<u64>,
        since: Option<Stamp>,
        until: Option<Stamp>,
    ) -> EngineStream<LogChunk> {
        let secs =
            |s: Stamp| i32::try_from(s.secs().clamp(0, i64::from(i32::MAX))).unwrap_or(i32::MAX);
        let options = LogsOptions {
            follow,
            stdout: true,
            stderr: true,
            // The API takes 32-bit seconds: clamp rather than wrap (a far-future
            // --since shows nothing, as it should).
            since: since.map_or(0, secs),
            // 0 is "no end" to the API: an end at or before the epoch is the epoch's first second.
            until: until.map_or(0, |u| secs(u).max(1)),
            timestamps: true,
            tail: tail.map_or_else(|| "all".to_string(), |n| n.to_string()),
        };
        let engine = self.clone();
        self.api
            .logs(id, Some(options))
            .map(move |r| r.map(model::log_chunk).map_err(|e| engine.fail(e)))
            .boxed()
    }

    /// Container starts of compose projects (what `logs -f` follows).
    /// An error is the client's own (the follower that reads these says itself
    /// that the engine was lost).
    pub(crate) fn container_events(&self, since: Option<Stamp>) -> EngineStream<EngineEvent> {
        self.container_events_of(since, &[EventAction::Start])
    }

    /// Container events of compose projects since a time (to the second), only the given actions
    /// (`die`, `health_status`…): the engine filters, so healthcheck execs never arrive.
    /// The filter is one both engines honour: `type=container` and both engines'
    /// words for each action (Docker ignores Podman's `died`, Podman ignores `die`);
    /// the project label is checked here (Podman's `label=KEY` matches nothing).
    pub(crate) fn container_events_of(
        &self,
        since: Option<Stamp>,
        actions: &[EventAction],
    ) -> EngineStream<EngineEvent> {
        let words: Vec<String> = actions
            .iter()
            .flat_map(|a| filter_words(a))
            .map(str::to_string)
            .collect();
        let filters = HashMap::from([
            ("type".to_string(), vec!["container".to_string()]),
            ("event".to_string(), words),
        ]);
        let options = EventsOptions {
            since: since.map(|s| s.secs().to_string()),
            until: None,
            filters: Some(filters),
        };
        let engine = self.clone();
        self.api
            .events(Some(options))
            .map(move |r| r.map(model::event).map_err(|e| engine.fail(e)))
            .filter(|r| {
                let compose = match r {
                    Ok(ev) => ev.attributes.contains_key(labels::PROJECT),
                    Err(_) => true,
                };
                std::future::ready(compose)
            })
            .boxed()
    }

    /// The engine's default log driver (`/info`'s `LoggingDriver`), for
    /// containers that set none. Podman's compatible `/info` leaves it empty:
    /// its own (`/libpod/info`'s `host.logDriver`, containers.conf's
    /// `log_driver`) names it.
    pub(crate) async fn logging_driver(&self) -> anyhow::Result<Option<String>> {
        if self.kind() == EngineKind::Podman {
            let wire = &self.conn.wire;
            #[derive(serde::Deserialize, Default)]
            #[serde(default)]
            struct Info {
                host: Host,
            }
            #[derive(serde::Deserialize, Default)]
            #[serde(default, rename_all = "camelCase")]
            struct Host {
                log_driver: Option<String>,
            }
            let info: Option<Info> = self
                .read(wire, "/libpod/info")
                .await
                .map_err(anyhow::Error::from)
                .context("ask Podman for its log driver")?;
            return Ok(info
                .and_then(|i| i.host.log_driver)
                .filter(|d| !d.is_empty()));
        }
        let info = self
            .api
            .info()
            .await
            .map_err(|e| anyhow::Error::from(self.fail(e)))
            .context("ask the engine for its log driver")?;
        Ok(info.logging_driver.filter(|d| !d.is_empty()))
    }

    /// Answers whether the engine is there right now.
    pub(crate) async fn ping(&self) -> anyhow::Result<()> {
        let answer = self.conn.wire.get("/_ping", CONNECT_TIMEOUT).await;
        let answer = answer.map_err(|e| unreachable(&self.endpoint, &e))?;
        match answer.status {
            200 => Ok(()),
            _ => Err(anyhow::anyhow!(answer.refusal())),
        }
    }

    /// How long the engine takes to deliver an event of hal's own making (a test
    /// volume made and removed), or why it delivered none within `limit`.
    pub(crate) async fn event_round_trip(&self, limit: Duration) -> Result<Duration, ProbeError> {
        probe::event_round_trip(&self.api, limit).await
    }

    /// Whether an image is present locally.
    pub(crate) async fn image_present(&self, image: &str) -> anyhow::Result<bool> {
        match self.api.inspect_image(image).await {
            Ok(_) => Ok(true),
            Err(bollard::errors::Error::DockerResponseServerError {
                status_code: 404, ..
            }) => Ok(false),
            Err(e) => Err(anyhow::Error::from(self.fail(e)))
                .with_context(|| format!("inspect image {image}")),
        }
    }

    /// The local image id of a reference, or `None` when it is absent.
    pub(crate) async fn image_id(&self, image: &str) -> anyhow::Result<Option<String>> {
        match self.api.inspect_image(image).await {
            Ok(i) => Ok(i.id),
            Err(bollard::errors::Error::DockerResponseServerError {
                status_code: 404, ..
            }) => Ok(None),
            Err(e) => Err(anyhow::Error::from(self.fail(e)))
                .with_context(|| format!("inspect image {image}")),
        }
    }

    /// Pulls `repo:tag` with the given registry credentials, streaming the
    /// engine's progress messages.
    pub(crate) fn pull(
        &self,
        repo: &str,
        tag: Option<&str>,
        credentials: Option<RegistryAuth>,
    ) -> EngineStream<PullProgress> {
        let options = CreateImageOptions {
            from_image: Some(repo.to_string()),
            tag: tag.map(str::to_string),
            ..Default::default()
        };
        let engine = self.clone();
        self.api
            .create_image(Some(options), None, credentials.map(model::credentials))
            .map(move |r| r.map(model::pull_progress).map_err(|e| engine.fail(e)))
            .boxed()
    }
}

/// The `event` filter's words for an action, in both engines' words.
fn filter_words(action: &EventAction) -> Vec<&str> {
    match action {
        EventAction::Die => vec!["die", "died"],
        EventAction::Destroy => vec!["destroy", "remove"],
        other => vec![other.filter_word()],
    }
}

/// A network on the engine: its name, compose project (if any) and subnets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct NetworkFacts {
    pub name: String,
    pub project: Option<String>,
    pub subnets: Vec<String>,
}

/// One of the engine's default address pools: subnets of `/size` carved out of `base`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct AddressPool {
    pub base: String,
    pub size: u8,
}

/// A GET's answer read into `T`: `None` for a 404, the engine's own words for
/// any other error, a decode error (the engine is there) for a body hal cannot
/// read, saying what came (cut short), not the decoder's words.
fn decode<T: serde::de::DeserializeOwned>(answer: wire::Answer) -> Result<Option<T>, EngineError> {
    match answer.status {
        200 => serde_json::from_slice(&answer.body).map(Some).map_err(|_| {
            EngineError::Decode(anyhow::anyhow!(
                "the engine's answer could not be read: {}",
                received(&answer.body)
            ))
        }),
        404 => Ok(None),
        _ => Err(EngineError::Refused(answer.refusal())),
    }
}
