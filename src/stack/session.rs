//! The engine as the layers above may ask it: a connected session whose methods are what doctor, logs, adopt and the watch need (the probe, the event subscription, the log plan and lines, history, identity, the running projects), with typed answers; the adapter's handle stays inside `stack/`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::Duration;

use futures_util::stream::{BoxStream, StreamExt};
use tokio::sync::mpsc;

use crate::docker::engine::{
    AddressPool, Engine, EngineError, EngineEvent, EngineKind, EventAction, NetworkFacts,
    ProbeError,
};
use crate::error::{HalError, OneLine};
use crate::logs::stream::{Event, Lines, Window};
use crate::module::fix::Fix;
use crate::module::target::Target;
use crate::stack::env::Stacks;
use crate::stack::logs::history::{self, Keeping};
use crate::stack::logs::log_plan::{self, LogPlan};
use crate::stack::look::node;
use crate::state::Store;
use crate::util::timefmt::Stamp;

/// One connection to the engine (Docker, or Podman's compatible API), as
/// `Stacks::session` made it; cheap to clone.
#[derive(Clone)]
pub(crate) struct Session(pub(super) Engine);

/// The engine's events as the watch reads them.
pub(crate) type Events = BoxStream<'static, Result<EngineEvent, Missed>>;

/// An event the subscription could not hand over.
#[derive(Debug)]
pub(crate) enum Missed {
    /// The engine sent something hal could not read; the stream goes on.
    Unreadable(String),
    /// The stream broke: the engine is gone (or went away for a moment).
    Lost(String),
}

impl Stacks {
    /// The engine as the layers above ask it: the one connection of the run.
    pub(crate) async fn session(&self) -> Result<Session, HalError> {
        self.engine().await.map(Session)
    }
}

impl Session {
    /// The endpoint as the user would write it.
    pub(crate) fn endpoint(&self) -> &str {
        &self.0.endpoint
    }

    /// The API version the engine and hal agreed on.
    pub(crate) fn api_version(&self) -> &str {
        &self.0.api_version
    }

    /// Whether Podman answers (its Docker-compatible API).
    pub(crate) fn is_podman(&self) -> bool {
        self.0.kind() == EngineKind::Podman
    }

    /// The engine's name for messages (`docker`, `podman`).
    pub(crate) fn name(&self) -> &'static str {
        self.0.kind().name()
    }

    /// Whether the engine answers right now.
    pub(crate) async fn ping(&self) -> anyhow::Result<()> {
        self.0.ping().await
    }

    /// How long the engine takes to deliver an event of hal's own making (a
    /// test volume made and removed), or why it delivered none within `limit`.
    pub(crate) async fn probe(&self, limit: Duration) -> Result<Duration, ProbeError> {
        self.0.event_round_trip(limit).await
    }

    /// The container events of these actions from `since` (to the second) on.
    pub(crate) fn events(&self, since: Stamp, actions: &[EventAction]) -> Events {
        self.0
            .container_events_of(Some(since), actions)
            .map(|item| {
                item.map_err(|e| match e {
                    // The engine is there and said something hal could not read.
                    EngineError::Decode(e) => Missed::Unreadable(OneLine(&e).to_string()),
                    e => Missed::Lost(OneLine(&e.into()).to_string()),
                })
            })
            .boxed()
    }

    /// The engine's default address pools (`None`: it states none).
    pub(crate) async fn address_pools(&self) -> anyhow::Result<Option<Vec<AddressPool>>> {
        self.0.address_pools().await
    }

    /// The engine's networks.
    pub(crate) async fn networks(&self) -> anyhow::Result<Vec<NetworkFacts>> {
        self.0.networks().await
    }

    /// How the engine keeps its containers' lines by default (`daemon_json`: Docker's config).
    pub(crate) async fn keeping(&self, daemon_json: &Path) -> anyhow::Result<Keeping> {
        history::keeping(&self.0, daemon_json).await
    }

    /// The services of `modules` whose journal lines lack the compose labels.
    pub(crate) async fn unlabelled(&self, modules: &[&str]) -> anyhow::Result<Vec<String>> {
        history::unlabelled(&self.0, modules).await
    }

    /// The directories each project's containers were run from, by project (one list call).
    pub(crate) async fn project_dirs(&self) -> anyhow::Result<BTreeMap<String, BTreeSet<String>>> {
        let list = self.0.compose_containers(None).await?;
        Ok(crate::stack::look::identity::dirs_by_project(&list))
    }

    /// The compose projects with a running container (one list call).
    pub(crate) async fn running_projects(&self) -> anyhow::Result<BTreeSet<String>> {
        node::running_projects(&self.0).await
    }

    /// Every fix, then the containers compose restarts with them (`depends_on: {restart: true}`).
    pub(crate) async fn plan_repair(
        &self,
        module: &str,
        fixes: Vec<Fix>,
    ) -> anyhow::Result<Vec<Fix>> {
        crate::stack::repair::plan(&self.0, module, fixes).await
    }

    /// Where each of the targets' containers keeps its lines.
    pub(crate) async fn log_plan(
        &self,
        store: &Store,
        targets: &[Target],
    ) -> anyhow::Result<LogPlan> {
        log_plan::plan(&self.0, store, targets).await
    }

    /// A container's lines in the window (and on, when `follow`).
    pub(crate) fn container_lines(&self, id: &str, follow: bool, w: Window) -> Lines {
        crate::stack::logs::container_lines(&self.0, id, follow, w)
    }

    /// Announces every container start of the given projects (or services) on `tx`.
    pub(crate) fn watch_starts(&self, projects: Vec<Target>, tx: mpsc::Sender<Event>) {
        crate::stack::logs::watch_starts(self.0.clone(), projects, tx);
    }
}
