//! The one place that talks to the Docker Engine API (bollard): hal's own types in and out (`model.rs` maps bollard's), no printing.

mod model;

use std::collections::HashMap;
use std::error::Error as StdError;
use std::io;
use std::time::Duration;

use anyhow::Context;
use bollard::Docker;
use bollard::query_parameters::{
    CreateImageOptions, EventsOptions, InspectContainerOptions, ListContainersOptions, LogsOptions,
};
use futures_util::stream::{BoxStream, StreamExt};

use crate::error::HalError;
use crate::stack::credentials::RegistryAuth;
use crate::stack::endpoint::Endpoint;
use crate::stack::labels;

pub use model::{
    EngineError, EngineEvent, EventAction, Inspected, Listed, LogChunk, LogConfig, PullProgress,
    RunState,
};

/// A stream of engine answers, each read into hal's type.
pub type EngineStream<T> = BoxStream<'static, Result<T, EngineError>>;

/// How long hal waits for the engine to answer the first call.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// A connection to one Docker engine.
#[derive(Clone)]
pub struct Engine {
    api: Docker,
    /// The endpoint as the user would write it, for messages.
    pub endpoint: String,
    pub api_version: String,
}

impl Engine {
    /// Connects and negotiates the API version (engine 20.10 speaks 1.41).
    pub async fn connect(to: &Endpoint) -> Result<Engine, HalError> {
        let endpoint = to.host.clone();
        let client = if let Some(path) = endpoint.strip_prefix("unix://") {
            Docker::connect_with_unix(path, 120, bollard::API_DEFAULT_VERSION)
        } else if let Some(dir) = &to.tls {
            Docker::connect_with_ssl(
                &endpoint,
                &dir.join("key.pem"),
                &dir.join("cert.pem"),
                &dir.join("ca.pem"),
                120,
                bollard::API_DEFAULT_VERSION,
            )
        } else if endpoint.starts_with("tcp://") || endpoint.starts_with("http://") {
            Docker::connect_with_http(&endpoint, 120, bollard::API_DEFAULT_VERSION)
        } else {
            return Err(HalError::DockerUnreachable {
                endpoint,
                why: "unsupported endpoint (use unix:///path or tcp://host:port)".into(),
            });
        };
        let client = client.map_err(|e| unreachable(&endpoint, &e))?;
        let api = match tokio::time::timeout(CONNECT_TIMEOUT, client.negotiate_version()).await {
            Ok(Ok(api)) => api,
            Ok(Err(e)) => return Err(unreachable(&endpoint, &e)),
            Err(_) => {
                return Err(HalError::DockerUnreachable {
                    endpoint,
                    why: format!("no answer within {}s", CONNECT_TIMEOUT.as_secs()),
                });
            }
        };
        let api_version = api.client_version().to_string();
        Ok(Engine {
            api,
            endpoint,
            api_version,
        })
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
    pub async fn compose_containers(&self, project: Option<&str>) -> anyhow::Result<Vec<Listed>> {
        let label = labels::project_filter(project);
        let options = ListContainersOptions {
            all: true,
            filters: Some(HashMap::from([("label".to_string(), vec![label])])),
            ..Default::default()
        };
        let list = self
            .api
            .list_containers(Some(options))
            .await
            .map_err(|e| anyhow::Error::from(self.fail(e)))
            .context("list containers")?;
        Ok(list.into_iter().map(model::listed).collect())
    }

    /// What an inspect says of a container; `None` when it is gone (removed
    /// between list and inspect).
    pub async fn inspect(&self, id: &str) -> anyhow::Result<Option<Inspected>> {
        match self
            .api
            .inspect_container(id, None::<InspectContainerOptions>)
            .await
        {
            Ok(inspect) => Ok(Some(model::inspected(inspect))),
            Err(bollard::errors::Error::DockerResponseServerError {
                status_code: 404, ..
            }) => Ok(None),
            Err(e) => Err(anyhow::Error::from(self.fail(e))),
        }
    }

    /// A container's log stream. `since` is a unix time; `tail` is "all" or a count.
    pub fn logs(
        &self,
        id: &str,
        follow: bool,
        tail: Option<u64>,
        since: Option<i64>,
        until: Option<i64>,
    ) -> EngineStream<LogChunk> {
        let secs = |s: i64| i32::try_from(s.clamp(0, i64::from(i32::MAX))).unwrap_or(i32::MAX);
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

    /// The last `n` log lines of a container, without timestamps.
    pub async fn last_lines(&self, id: &str, n: u64) -> Vec<String> {
        let chunks: Vec<LogChunk> = self
            .logs(id, false, Some(n), None, None)
            .take(n as usize * 4)
            .filter_map(|r| async move { r.ok() })
            .collect()
            .await;
        let mut lines = Vec::new();
        for chunk in chunks {
            let text = String::from_utf8_lossy(&chunk.bytes).into_owned();
            for line in text.lines() {
                let (_, message) = crate::logs::line::split_timestamp(line);
                lines.push(message.to_string());
            }
        }
        let skip = lines.len().saturating_sub(n as usize);
        lines.split_off(skip)
    }

    /// Container events (start, die, health_status, oom…) of compose projects.
    /// An error is the client's own (the follower that reads these says itself
    /// that the engine was lost).
    pub fn container_events(&self, since: Option<i64>) -> EngineStream<EngineEvent> {
        let filters = HashMap::from([
            ("type".to_string(), vec!["container".to_string()]),
            ("label".to_string(), vec![labels::PROJECT.to_string()]),
        ]);
        let options = EventsOptions {
            since: since.map(|s| s.to_string()),
            until: None,
            filters: Some(filters),
        };
        self.api
            .events(Some(options))
            .map(|r| r.map(model::event).map_err(raw))
            .boxed()
    }

    /// Container events of compose projects since a unix time, only the given actions
    /// (`die`, `health_status`…): the engine filters, so healthcheck execs never arrive.
    pub fn container_events_of(
        &self,
        since: Option<i64>,
        actions: &[EventAction],
    ) -> EngineStream<EngineEvent> {
        let filters = HashMap::from([
            ("type".to_string(), vec!["container".to_string()]),
            ("label".to_string(), vec![labels::PROJECT.to_string()]),
            (
                "event".to_string(),
                actions
                    .iter()
                    .map(|a| a.filter_word().to_string())
                    .collect(),
            ),
        ]);
        let options = EventsOptions {
            since: since.map(|s| s.to_string()),
            until: None,
            filters: Some(filters),
        };
        let engine = self.clone();
        self.api
            .events(Some(options))
            .map(move |r| r.map(model::event).map_err(|e| engine.fail(e)))
            .boxed()
    }

    /// The engine's default log driver (`/info`'s `LoggingDriver`), for containers that set none.
    pub async fn logging_driver(&self) -> anyhow::Result<Option<String>> {
        let info = self
            .api
            .info()
            .await
            .map_err(|e| anyhow::Error::from(self.fail(e)))
            .context("ask the engine for its log driver")?;
        Ok(info.logging_driver)
    }

    /// Answers whether the engine is there right now.
    pub async fn ping(&self) -> anyhow::Result<()> {
        self.api
            .ping()
            .await
            .map(|_| ())
            .map_err(|e| self.fail(e).into())
    }

    /// Starts an existing container (used by the fast path).
    pub async fn start_container(&self, id: &str) -> anyhow::Result<()> {
        self.api
            .start_container(id, None::<bollard::query_parameters::StartContainerOptions>)
            .await
            .map_err(|e| anyhow::Error::from(self.fail(e)))
            .with_context(|| format!("start container {id}"))
    }

    /// Restarts a container as `docker restart` does (stop, then start; the
    /// container's own stop timeout unless `grace` is given): the supervisor's
    /// repair of one unhealthy or crash-looping container.
    pub async fn restart_container(&self, id: &str, grace: Option<Duration>) -> anyhow::Result<()> {
        let options = bollard::query_parameters::RestartContainerOptions {
            signal: None,
            t: grace.map(|g| i32::try_from(g.as_secs()).unwrap_or(i32::MAX)),
        };
        self.api
            .restart_container(id, Some(options))
            .await
            .map_err(|e| anyhow::Error::from(self.fail(e)))
            .with_context(|| format!("restart container {id}"))
    }

    /// Whether an image is present locally.
    pub async fn image_present(&self, image: &str) -> anyhow::Result<bool> {
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
    pub async fn image_id(&self, image: &str) -> anyhow::Result<Option<String>> {
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
    pub fn pull(
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

/// A network on the engine: its name, compose project (if any) and subnets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NetworkFacts {
    pub name: String,
    pub project: Option<String>,
    pub subnets: Vec<String>,
}

/// One of the engine's default address pools: subnets of `/size` carved out of `base`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AddressPool {
    pub base: String,
    pub size: u8,
}

impl Engine {
    /// Every network on the engine (one list call).
    pub async fn networks(&self) -> anyhow::Result<Vec<NetworkFacts>> {
        let list = self
            .api
            .list_networks(None::<bollard::query_parameters::ListNetworksOptions>)
            .await
            .map_err(|e| anyhow::Error::from(self.fail(e)))
            .context("list networks")?;
        Ok(list
            .into_iter()
            .map(|n| NetworkFacts {
                name: n.name.unwrap_or_default(),
                project: n.labels.and_then(|l| l.get(labels::PROJECT).cloned()),
                subnets: n
                    .ipam
                    .and_then(|i| i.config)
                    .unwrap_or_default()
                    .into_iter()
                    .filter_map(|c| c.subnet)
                    .collect(),
            })
            .collect())
    }

    /// The default address pools the engine reports (`docker info`), or `None`
    /// when it reports none (older engines, or the stock pools).
    pub async fn address_pools(&self) -> anyhow::Result<Option<Vec<AddressPool>>> {
        let info = self
            .api
            .info()
            .await
            .map_err(|e| anyhow::Error::from(self.fail(e)))
            .context("engine info")?;
        let pools: Vec<AddressPool> = info
            .default_address_pools
            .unwrap_or_default()
            .into_iter()
            .filter_map(|p| {
                Some(AddressPool {
                    base: p.base?,
                    size: u8::try_from(p.size?).ok()?,
                })
            })
            .collect();
        Ok((!pools.is_empty()).then_some(pools))
    }
}

fn io_kind(err: &(dyn StdError + 'static)) -> Option<io::ErrorKind> {
    let mut cur: Option<&(dyn StdError + 'static)> = Some(err);
    while let Some(e) = cur {
        if let Some(io) = e.downcast_ref::<io::Error>() {
            return Some(io.kind());
        }
        cur = e.source();
    }
    None
}

/// A client error that is not the engine being away: an answer hal's client
/// could not read, or anything else, in the client's own words.
fn raw(err: bollard::errors::Error) -> EngineError {
    use bollard::errors::Error as E;
    match err {
        e @ (E::JsonDataError { .. } | E::JsonSerdeError { .. }) => {
            EngineError::Decode(anyhow::Error::new(e))
        }
        other => EngineError::Other(anyhow::Error::new(other)),
    }
}

fn is_connection_error(err: &bollard::errors::Error) -> bool {
    use bollard::errors::Error as E;
    match err {
        E::SocketNotFoundError(_) | E::RequestTimeoutError => true,
        E::HyperLegacyError { err } => err.is_connect() || io_kind(err).is_some(),
        E::IOError { .. } => true,
        _ => false,
    }
}

/// The message for an engine that cannot be reached, with the likely fix.
fn unreachable(endpoint: &str, err: &bollard::errors::Error) -> HalError {
    let socket = endpoint.strip_prefix("unix://").unwrap_or(endpoint);
    let why = match io_kind(err) {
        Some(io::ErrorKind::PermissionDenied) => {
            return HalError::DockerPermission {
                socket: socket.to_string(),
                user: crate::util::sys::user_name(),
            };
        }
        Some(io::ErrorKind::NotFound) => "no socket there (is dockerd running?)".to_string(),
        Some(io::ErrorKind::ConnectionRefused) => {
            "connection refused (is dockerd running?)".to_string()
        }
        _ => match err {
            bollard::errors::Error::SocketNotFoundError(_) => {
                "no socket there (is dockerd running?)".to_string()
            }
            other => crate::error::OneLine(&anyhow::anyhow!(other.to_string())).to_string(),
        },
    };
    HalError::DockerUnreachable {
        endpoint: endpoint.to_string(),
        why,
    }
}
