//! Edges between modules: what each requires, what it only comes after, and where each edge came from.
//!
//! Pure data and rules: the config gives the declared edges, the stack
//! backend hands over what each module's compose files say ([`Ties`]), and
//! this file turns both into one [`Graph`] that every verb orders by.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

/// How hard an edge is.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Strength {
    /// The dependent needs the requirement running (systemd's `Requires=` + `After=`).
    Requires,
    /// Order only (systemd's `After=`).
    After,
}

/// Why a dependent is tied to its requirement: decides whether the dependent survives a restart of it.
#[derive(Copy, Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) enum Tie {
    /// `requires`/`after` in the config.
    Declared,
    /// `network_mode: container:X` or `volumes_from: container:X`: cannot survive a restart of X.
    Namespace,
    /// An external network the requirement's compose file creates: survives.
    Network,
    /// `external_links`: survives.
    Link,
}

impl Tie {
    pub(crate) fn word(self) -> &'static str {
        match self {
            Tie::Declared => "declared",
            Tie::Namespace => "namespace",
            Tie::Network => "network",
            Tie::Link => "link",
        }
    }
}

/// Where an edge came from, for `list` and for errors.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Origin {
    /// A key of the module's config section (`requires` or `after`), at its line.
    Config {
        key: &'static str,
        line: Option<usize>,
    },
    /// A compose file's key, e.g. `services.vpn.network_mode`.
    Compose { file: PathBuf, key: String },
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Origin::Config { key, line: Some(l) } => write!(f, "config line {l}: {key}"),
            Origin::Config { key, line: None } => write!(f, "config: {key}"),
            Origin::Compose { file, key } => write!(f, "{}: {key}", file.display()),
        }
    }
}

/// One edge: `from` (the dependent) needs or comes after `to` (the requirement).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Edge {
    pub(crate) from: String,
    pub(crate) to: String,
    pub(crate) strength: Strength,
    pub(crate) tie: Tie,
    pub(crate) origin: Origin,
}

/// Every edge between the node's modules.
#[derive(Clone, Debug, Default)]
pub(crate) struct Graph {
    edges: Vec<Edge>,
    unowned: Vec<Unowned>,
    /// The files the inferred edges were read from (each stack's compose inputs).
    read: Vec<PathBuf>,
}

impl Graph {
    pub(crate) fn new(edges: Vec<Edge>) -> Graph {
        Graph::with_unowned(edges, Vec::new())
    }

    /// The graph, and the inferred uses no module owns (doctor warns of them).
    pub(crate) fn with_unowned(edges: Vec<Edge>, unowned: Vec<Unowned>) -> Graph {
        Graph {
            edges,
            unowned,
            read: Vec::new(),
        }
    }

    /// The graph, read from `files` (see [`Graph::read_from`]).
    pub(crate) fn with_files(mut self, files: Vec<PathBuf>) -> Graph {
        self.read = files;
        self
    }

    /// Every file the inferred edges were read from: what a change to the edges may come from.
    pub(crate) fn read_from(&self) -> &[PathBuf] {
        &self.read
    }

    pub(crate) fn unowned(&self) -> &[Unowned] {
        &self.unowned
    }

    pub(crate) fn edges(&self) -> &[Edge] {
        &self.edges
    }

    /// Every edge out of `m` (what it requires or comes after).
    pub(crate) fn of(&self, m: &str) -> Vec<&Edge> {
        self.edges.iter().filter(|e| e.from == m).collect()
    }

    /// Hard edges out of `m`: what `m` needs.
    pub(crate) fn requires(&self, m: &str) -> Vec<&Edge> {
        self.edges
            .iter()
            .filter(|e| e.from == m && e.strength == Strength::Requires)
            .collect()
    }

    /// Hard edges into `m`: who needs `m`.
    pub(crate) fn required_by(&self, m: &str) -> Vec<&Edge> {
        self.edges
            .iter()
            .filter(|e| e.to == m && e.strength == Strength::Requires)
            .collect()
    }

    /// `names` and all they require, transitively: `names` first, in their
    /// order, then the rest as found.
    pub(crate) fn pull_in(&self, names: &[String]) -> Vec<String> {
        self.closure(names, |e| {
            (e.strength == Strength::Requires).then_some((&e.from, &e.to))
        })
    }

    /// `names` and all that require them, transitively.
    pub(crate) fn push_out(&self, names: &[String]) -> Vec<String> {
        self.closure(names, |e| {
            (e.strength == Strength::Requires).then_some((&e.to, &e.from))
        })
    }

    /// `names` in layers that may run at once: each after what it requires
    /// or comes after among `names` (others are not waited for).
    /// `stopping` reverses them: dependents first.
    pub(crate) fn layers(&self, names: &[String], stopping: bool) -> Vec<Vec<String>> {
        let after =
            |n: &str| -> Vec<String> { self.of(n).into_iter().map(|e| e.to.clone()).collect() };
        crate::module::order::layers(names, &after, stopping)
    }

    /// The dependents of `m` tied by a shared namespace, transitively (they
    /// cannot survive a restart of `m`), in start order; `m` not included.
    pub(crate) fn restart_with(&self, m: &str) -> Vec<String> {
        let start = [m.to_string()];
        let mut found = self.closure(&start, |e| {
            (e.strength == Strength::Requires && e.tie == Tie::Namespace)
                .then_some((&e.to, &e.from))
        });
        found.retain(|n| n != m);
        self.layers(&found, false).concat()
    }

    /// The first cycle among all edges, as `a → b → a`.
    pub(crate) fn cycle(&self) -> Option<Vec<String>> {
        let mut g: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for e in &self.edges {
            g.entry(e.from.clone()).or_default().push(e.to.clone());
        }
        crate::module::order::find_cycle(&g)
    }

    /// The edge that closes `a → b` in a cycle, to say where it came from.
    pub(crate) fn edge(&self, from: &str, to: &str) -> Option<&Edge> {
        self.edges.iter().find(|e| e.from == from && e.to == to)
    }

    /// A cycle's words: `a → b → a (a → b: config line 3: requires; b → a: FILE: KEY)`.
    pub(crate) fn describe_cycle(&self, cycle: &[String]) -> String {
        let whys: Vec<String> = cycle
            .windows(2)
            .filter_map(|w| self.edge(&w[0], &w[1]))
            .map(|e| format!("{} → {}: {}", e.from, e.to, e.origin))
            .collect();
        format!("a cycle: {} ({})", cycle.join(" → "), whys.join("; "))
    }

    fn closure<'a>(
        &'a self,
        names: &[String],
        step: impl Fn(&'a Edge) -> Option<(&'a String, &'a String)>,
    ) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        let mut seen: BTreeSet<String> = BTreeSet::new();
        for n in names {
            if seen.insert(n.clone()) {
                out.push(n.clone());
            }
        }
        let mut i = 0;
        while i < out.len() {
            let cur = out[i].clone();
            for (a, b) in self.edges.iter().filter_map(&step) {
                if *a == cur && seen.insert(b.clone()) {
                    out.push(b.clone());
                }
            }
            i += 1;
        }
        out
    }
}

/// What one module's compose files say about things outside the project,
/// read by the stack backend and handed over as plain facts.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Ties {
    /// The names its containers get: `container_name`, else compose's
    /// default `PROJECT-SERVICE-1` (and v1's `PROJECT_SERVICE_1`).
    pub(crate) containers: Vec<String>,
    /// The names of the networks it creates (not `external`).
    pub(crate) networks: Vec<String>,
    /// What it uses that another project may own.
    pub(crate) uses: Vec<Use>,
}

/// One use of something outside the project.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Use {
    /// A container (`Namespace`, `Link`) or a network (`Network`).
    pub(crate) tie: Tie,
    /// The container's or network's name.
    pub(crate) name: String,
    pub(crate) file: PathBuf,
    /// Where in the file, e.g. `services.vpn.network_mode`.
    pub(crate) key: String,
}

/// An inferred use whose target no module owns: a doctor warning.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Unowned {
    pub(crate) module: String,
    pub(crate) what: Use,
}

/// The `requires` edges compose's files imply between modules, and the uses
/// no other module owns (a container or network made by hand, or a typo).
pub(crate) fn infer(ties: &BTreeMap<String, Ties>) -> (Vec<Edge>, Vec<Unowned>) {
    let mut containers: BTreeMap<&str, &str> = BTreeMap::new();
    let mut networks: BTreeMap<&str, &str> = BTreeMap::new();
    for (module, t) in ties {
        for c in &t.containers {
            containers.entry(c.as_str()).or_insert(module.as_str());
        }
        for n in &t.networks {
            networks.entry(n.as_str()).or_insert(module.as_str());
        }
    }
    let mut edges = Vec::new();
    let mut unowned = Vec::new();
    for (module, t) in ties {
        for u in &t.uses {
            let owners = match u.tie {
                Tie::Network => &networks,
                _ => &containers,
            };
            match owners.get(u.name.as_str()) {
                Some(owner) if owner == module => {}
                Some(owner) => edges.push(Edge {
                    from: module.clone(),
                    to: owner.to_string(),
                    strength: Strength::Requires,
                    tie: u.tie,
                    origin: Origin::Compose {
                        file: u.file.clone(),
                        key: u.key.clone(),
                    },
                }),
                None => unowned.push(Unowned {
                    module: module.clone(),
                    what: u.clone(),
                }),
            }
        }
    }
    (edges, unowned)
}

#[cfg(test)]
mod tests;
