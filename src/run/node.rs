//! What the runner works with: the node's config, its modules, hal's state, and the engines behind them.

use std::path::{Path, PathBuf};
use std::sync::{Arc, PoisonError};

use crate::error::HalError;
use crate::host::Inits;
use crate::module::config::Config;
use crate::module::deps::Graph;
use crate::module::inventory::Inventory;
use crate::module::load;
use crate::module::progress::Progress;
use crate::module::target::Target;
use crate::stack::{Env, Models, Stacks};
use crate::state::Store;
use crate::state::shared::locate;

/// The node as hal sees it. Holds no output: whoever drives it says where progress goes.
pub(crate) struct Node {
    pub config: Config,
    pub inventory: Inventory,
    pub store: Store,
    /// Shared with the node read again under the watch ([`Node::again`]): one engine connection.
    pub stacks: Arc<Stacks>,
    pub hosts: Inits,
    /// The module graph, built on first use ([`Node::graph`]), or at once
    /// for a node the watch read again ([`Node::again`]).
    graph: std::sync::Mutex<Option<Result<Arc<Graph>, HalError>>>,
    /// What compose reads in each stack directory, kept in the state
    /// (`compose-models.json`): the inventory and the graph read through it.
    models: Arc<Models>,
}

impl Node {
    /// Loads the config and scans the services root; touches no engine.
    pub(crate) fn load(
        config: Option<&Path>,
        services_dir: Option<&Path>,
        endpoint: Option<String>,
    ) -> Result<Node, HalError> {
        let config = load::config(config)?;
        let hosts = Inits::default();
        hosts.check_units(&config)?;
        let root: PathBuf = load::services_root(services_dir, &config);
        let (dir, place) = locate(endpoint.as_deref());
        let store = Store::at(dir, place);
        let models = Arc::new(Models::read(&store));
        let mut inventory = load::inventory_listed(&root, &config, &|d| models.listing(d));
        models.keep(&store);
        load::remember(&mut inventory, store.read().0.modules.keys());
        Ok(Node {
            config,
            inventory,
            store,
            stacks: Arc::new(Stacks::new(endpoint)),
            hosts,
            graph: std::sync::Mutex::new(None),
            models,
        })
    }

    /// The cache of what compose reads (and said), shared by this process's reads.
    pub(crate) fn models(&self) -> &Models {
        &self.models
    }

    /// Writes the cache of what compose reads, if this process changed it.
    pub(crate) fn keep_models(&self) {
        self.models.keep(&self.store);
    }

    /// The stacks whose directory this read of the node found under the services root.
    pub(crate) fn found_stacks(&self) -> std::collections::BTreeSet<String> {
        self.inventory.stacks().map(|m| m.name.clone()).collect()
    }

    /// The modules under the services root now (the watch's pass), each
    /// directory's listing read through the cache of what compose reads.
    pub(crate) fn inventory_now(&self, config: &Config) -> Inventory {
        let models = self.models.again();
        let inventory =
            load::inventory_listed(&self.inventory.root, config, &|d| models.listing(d));
        models.keep(&self.store);
        inventory
    }

    /// What a stack verb needs, reporting to `progress`.
    pub(crate) fn stack_env<'a>(&'a self, progress: &'a dyn Progress) -> Env<'a> {
        Env {
            stacks: &self.stacks,
            store: &self.store,
            progress,
        }
    }

    /// What the command line names (modules, patterns, `MODULE/SERVICE`),
    /// or every valid module with `--all`.
    pub(crate) fn targets(&self, names: &[String], all: bool) -> Result<Vec<Target>, HalError> {
        if all {
            Ok(self
                .inventory
                .modules
                .iter()
                .filter(|m| !m.is_invalid())
                .cloned()
                .map(Target::whole)
                .collect())
        } else {
            self.inventory.targets(names)
        }
    }

    /// How many modules to work on at once.
    ///
    /// A module's start is mostly waiting (on compose, on the engine, on a
    /// healthcheck), so the bound is above the core count: on 2 cores, 40
    /// stacks started fastest 8 at a time (BENCHMARKS.md: `--jobs 8` 16 s,
    /// `--jobs 4` 20 s, `--jobs 2` 39 s), where the engine's own floor is
    /// `docker start` 8 at a time.
    pub(crate) fn jobs(&self, flag: Option<u16>) -> usize {
        flag.map(usize::from).unwrap_or_else(|| {
            default_jobs(std::thread::available_parallelism().map_or(1, |n| n.get()))
        })
    }

    /// The module graph: declared edges from the config, inferred ones from
    /// what compose reads. Built once, on first use (`status` never needs
    /// it); a cycle or a `requires` naming no module is a config error (exit 2).
    pub(crate) fn graph(&self) -> anyhow::Result<Arc<Graph>> {
        let mut slot = self.graph.lock().unwrap_or_else(PoisonError::into_inner);
        let built = slot.get_or_insert_with(|| {
            let graph = super::graph::build(&self.config, &self.inventory, &self.models);
            self.models.keep(&self.store);
            graph.map(Arc::new)
        });
        built.clone().map_err(Into::into)
    }

    /// The node read again under the watch (its config file or a compose
    /// file changed, modules came or went, or a resync): `config`, the modules
    /// the services root holds now, and its graph built now, with this node's
    /// state, engine and inits. Err when `config` names a unit its init
    /// refuses or the graph cannot be built (a cycle, a `requires` naming no module).
    pub(crate) fn again(&self, config: Config) -> Result<Node, HalError> {
        self.hosts.check_units(&config)?;
        let models = self.models.again();
        let mut inventory =
            load::inventory_listed(&self.inventory.root, &config, &|d| models.listing(d));
        load::remember(&mut inventory, self.store.read().0.modules.keys());
        let graph = super::graph::build(&config, &inventory, &models);
        models.keep(&self.store);
        let mut node = self.with(config, inventory, Some(Ok(Arc::new(graph?))));
        node.models = Arc::new(models);
        Ok(node)
    }

    /// This node with `config`, `inventory` and `graph` (the watch keeps the
    /// graph it had when a new one cannot be built: [`Node::again`]).
    pub(crate) fn with(
        &self,
        config: Config,
        inventory: Inventory,
        graph: Option<Result<Arc<Graph>, HalError>>,
    ) -> Node {
        Node {
            config,
            inventory,
            store: self.store.clone(),
            stacks: Arc::clone(&self.stacks),
            hosts: self.hosts.clone(),
            graph: std::sync::Mutex::new(graph),
            models: Arc::new(self.models.again()),
        }
    }

    /// The graph as built so far: none yet, the graph, or why it cannot be built.
    pub(crate) fn graph_as_built(&self) -> Option<Result<Arc<Graph>, HalError>> {
        self.graph
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// `names` in the graph's order (`requires` and `after`): layers that
    /// may run at once (`stopping`: dependents first). A graph that cannot be
    /// built (the verb says why through [`Node::graph`]) orders by the
    /// config's edges alone.
    pub(crate) fn layers(&self, names: &[String], stopping: bool) -> Vec<Vec<String>> {
        match self.graph() {
            Ok(g) => g.layers(names, stopping),
            Err(_) => Graph::new(self.config.declared_edges()).layers(names, stopping),
        }
    }
}

/// `--jobs`'s default on `cpus` cores: 4 per CPU, 8 to 16 (what start's help says).
fn default_jobs(cpus: usize) -> usize {
    cpus.saturating_mul(4).clamp(8, 16)
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    /// The `--jobs` help of the verbs that share `Targets` says the default
    /// `Node::jobs` uses; `update` has its own (see `cli::UPDATE_JOBS`).
    #[test]
    fn the_jobs_default_is_what_the_help_says() {
        let cli = crate::cli::Cli::command();
        for verb in ["start", "stop", "restart"] {
            let cmd = cli.find_subcommand(verb).unwrap();
            let jobs = cmd.get_arguments().find(|a| a.get_id() == "jobs").unwrap();
            let help = jobs.get_help().map(ToString::to_string).unwrap_or_default();
            assert!(
                help.contains("[default: 4 per CPU, 8 to 16]"),
                "{verb}: {help}"
            );
        }
        for (cpus, want) in [(1, 8), (2, 8), (3, 12), (4, 16), (64, 16)] {
            assert_eq!(super::default_jobs(cpus), want, "{cpus} CPUs");
        }
    }
}
