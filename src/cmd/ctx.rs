//! The context every command shares: config, inventory, output, and lazily the engines.

use std::path::PathBuf;

use tokio::sync::OnceCell;

use crate::cli::Global;
use crate::error::HalError;
use crate::module::config::Config;
use crate::module::inventory::{Inventory, Module, services_root};
use crate::output::ui::Ui;
use crate::stack::compose::Compose;
use crate::stack::engine::Engine;
use crate::state::{Store, state_dir};

pub struct Ctx {
    pub ui: Ui,
    pub config: Config,
    pub inventory: Inventory,
    /// `-H`, passed on to compose as DOCKER_HOST.
    pub host: Option<String>,
    pub store: Store,
    engine: tokio::sync::Mutex<Option<Engine>>,
    compose: OnceCell<Result<Compose, String>>,
}

impl Ctx {
    /// Loads the config and scans the services root; touches no engine.
    pub fn new(g: &Global) -> Result<Ctx, HalError> {
        let ui = Ui::new(g);
        let config = Config::load(g.config.as_deref())?;
        let root: PathBuf = services_root(g.services_dir.as_deref(), &config);
        let inventory = Inventory::discover(&root, &config);
        Ok(Ctx {
            ui,
            config,
            inventory,
            host: g.host.clone(),
            store: Store::new(state_dir()),
            engine: tokio::sync::Mutex::new(None),
            compose: OnceCell::new(),
        })
    }

    /// The Docker engine: connected once and reused; a failed connection is
    /// not remembered, so a long-running command can try again later.
    pub async fn engine(&self) -> Result<Engine, HalError> {
        let mut slot = self.engine.lock().await;
        if let Some(e) = slot.as_ref() {
            return Ok(e.clone());
        }
        let e = Engine::connect(self.host.as_deref()).await?;
        *slot = Some(e.clone());
        Ok(e)
    }

    /// The compose CLI, found once per run.
    pub async fn compose(&self) -> anyhow::Result<Compose> {
        let r = self
            .compose
            .get_or_init(|| async {
                Compose::detect()
                    .await
                    .map_err(|e| crate::error::OneLine(&e).to_string())
            })
            .await;
        r.clone().map_err(|e| anyhow::anyhow!(e))
    }

    /// Modules named on the command line, or all of them with `--all`.
    pub fn targets(&self, names: &[String], all: bool) -> Result<Vec<Module>, HalError> {
        if all {
            Ok(self
                .inventory
                .modules
                .iter()
                .filter(|m| !matches!(m.kind, crate::module::inventory::Kind::Invalid { .. }))
                .cloned()
                .collect())
        } else {
            self.inventory.resolve(names)
        }
    }

    /// How many modules to work on at once.
    ///
    /// A module's start is mostly waiting (on compose, on the engine, on a
    /// healthcheck), so the bound is above the core count: on 2 cores, 40
    /// stacks started fastest 8 at a time (BENCHMARKS.md: `--jobs 8` 16 s,
    /// `--jobs 4` 20 s, `--jobs 2` 39 s), where the engine's own floor is
    /// `docker start` 8 at a time.
    pub fn jobs(&self, flag: Option<u16>) -> usize {
        flag.map(usize::from).unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map(|n| n.get() * 4)
                .unwrap_or(8)
                .clamp(8, 16)
        })
    }
}
