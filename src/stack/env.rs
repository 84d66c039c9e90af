//! What the stack verbs work with: one engine connection and one compose CLI per run, hal's state, and where progress goes.

use tokio::sync::{Mutex, OnceCell};

use crate::docker::compose::Compose;
use crate::docker::endpoint::Endpoint;
use crate::docker::engine::Engine;
use crate::error::HalError;
use crate::module::progress::Progress;
use crate::state::Store;

/// The stack backend's connection, held as `node.stacks` and `Env.stacks`:
/// the endpoint, the engine connected once (asked through a [`Session`]) and
/// the compose CLI found once, lazily, so a command that needs neither
/// touches neither.
///
/// [`Session`]: crate::stack::session::Session
pub(crate) struct Stacks {
    /// The one endpoint hal and every compose child use (or why there is none).
    endpoint: Result<Endpoint, HalError>,
    engine: Mutex<Option<Engine>>,
    compose: OnceCell<Result<Compose, NoCompose>>,
}

/// Why no compose CLI could be used, found once per run and said at every use.
#[derive(Clone, Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct NoCompose(String);

impl Stacks {
    /// `flag` is `-H`; the rest of the resolution is the docker CLI's (`endpoint.rs`).
    pub(crate) fn new(flag: Option<String>) -> Stacks {
        Stacks {
            endpoint: Endpoint::resolve(flag.as_deref()),
            engine: Mutex::new(None),
            compose: OnceCell::new(),
        }
    }

    /// The endpoint in use; an unknown context or an ssh:// endpoint is an error here (exit 2).
    pub(crate) fn endpoint(&self) -> Result<&Endpoint, HalError> {
        self.endpoint.as_ref().map_err(Clone::clone)
    }

    /// The Docker engine: connected once and reused; a failed connection is
    /// not remembered, so a long-running command can try again later.
    pub(super) async fn engine(&self) -> Result<Engine, HalError> {
        let mut slot = self.engine.lock().await;
        if let Some(e) = slot.as_ref() {
            return Ok(e.clone());
        }
        let e = Engine::connect(self.endpoint()?).await?;
        *slot = Some(e.clone());
        Ok(e)
    }

    /// Whether the engine answers a new connection now (not the one kept:
    /// `rescue` waits for an engine that went away to come back).
    pub(crate) async fn reach(&self) -> Result<(), HalError> {
        Engine::connect(self.endpoint()?).await.map(drop)
    }

    /// The compose CLI, found once per run; the layers above ask
    /// `compose_found` and `check_compose_config` (`compose_cli.rs`) instead.
    pub(super) async fn compose(&self) -> anyhow::Result<Compose> {
        let r = self
            .compose
            .get_or_init(|| async {
                Compose::detect()
                    .await
                    .map_err(|e| NoCompose(crate::error::OneLine(&e).to_string()))
            })
            .await;
        r.clone().map_err(anyhow::Error::new)
    }
}

/// Everything one stack verb needs, borrowed from the runner.
#[derive(Clone, Copy)]
pub(crate) struct Env<'a> {
    pub stacks: &'a Stacks,
    pub store: &'a Store,
    pub progress: &'a dyn Progress,
}
