//! The update's gate holds what requires the module: the modules that require it (declared or inferred, transitively) and were active before its recreate must be active again after it, or the module is rolled back naming the one that is not.
//!
//! A dependent that a new image breaks (another port, another protocol) may
//! take a healthcheck or two to say so: the gate watches them for [`WATCH`]
//! (at most until the update's timeout) after the module is active, and a
//! dependent seen not active then has until the timeout to be active again.
//! The namespace followers (a container in one of the module's network, pid
//! or ipc namespaces, or using its volumes) cannot outlive its recreate: the
//! gate first restarts them into the new containers (`follow.rs`, through the
//! runner), then holds them as it holds the other dependents.

use std::time::Duration;

use futures_util::future::LocalBoxFuture;

use std::sync::Mutex;

use crate::module::Module;
use crate::module::deps::Tie;
use crate::module::diagnosed::Detailed;
use crate::module::outcome::StartOpts;
use crate::module::status::{Desired, Detail, State};
use crate::module::target::Target;
use crate::module::warning::Warning;
use crate::run::node::Node;
use crate::run::report::Report;
use crate::run::steps::Again;
use crate::run::verb::Verb;
use crate::stack::Bound;

/// How long the gate watches the dependents once the module is active.
const WATCH: Duration = Duration::from_secs(8);

/// How often it reads them.
const POLL: Duration = Duration::from_millis(500);

/// The modules that require `name`, transitively, wanted up and active
/// now (before the recreate), namespace followers apart ([`active_followers`]).
pub(crate) async fn active_dependents(node: &Node, name: &str) -> Vec<String> {
    let Ok(graph) = node.graph() else {
        return Vec::new();
    };
    let (state, _) = node.store.read();
    let mut found: Vec<String> = Vec::new();
    let mut i = 0;
    let mut from = vec![name.to_string()];
    while i < from.len() {
        for e in graph.required_by(&from[i]) {
            let wanted = state
                .modules
                .get(&e.from)
                .is_some_and(|r| r.desired == Some(Desired::Up));
            if e.tie != Tie::Namespace && wanted && e.from != name && !found.contains(&e.from) {
                found.push(e.from.clone());
                from.push(e.from.clone());
            }
        }
        i += 1;
    }
    active(node, &found).await
}

/// The namespace followers of `name`, transitively, wanted up and active
/// now (before the recreate), in start order.
pub(crate) async fn active_followers(node: &Node, name: &str) -> Vec<String> {
    let names = dependents_to_restart(node, &[name.to_string()], &[]);
    active(node, &names).await
}

/// Those of `names` that are active now, in their order.
async fn active(node: &Node, names: &[String]) -> Vec<String> {
    let modules: Vec<Module> = names
        .iter()
        .filter_map(|n| node.inventory.get(n).cloned())
        .collect();
    if modules.is_empty() {
        return Vec::new();
    }
    let read = crate::run::status::collect_status(node, &modules, Detail::Settled).await;
    read.modules
        .into_iter()
        .filter(|s| s.state == State::Active)
        .map(|s| s.name)
        .collect()
}

/// What the gate holds besides the module: its dependents, and its namespace
/// followers, restarted first; their restarts' reports go to `said`.
pub(crate) struct Held<'a, 'r> {
    pub node: &'a Node,
    /// The runner, to restart the followers through.
    pub run: Again<'r>,
    pub module: &'a str,
    pub dependents: &'a [String],
    pub followers: &'a [String],
    pub said: &'a Mutex<Vec<Report>>,
}

impl Held<'_, '_> {
    /// Restarts the followers into the module's new containers (within
    /// `bound`), then waits until every dependent and follower is active,
    /// watched for [`WATCH`], within `bound`; an error naming the first that
    /// is not.
    pub(crate) fn hold(&self, bound: Bound) -> LocalBoxFuture<'_, anyhow::Result<()>> {
        Box::pin(async move {
            let opts = StartOpts {
                pull: Some(crate::module::config::PullPolicy::Missing),
                wait: true,
                timeout: Some(bound.left()),
            };
            let up = [self.module.to_string()];
            let reports = restart_after_with(self.node, &up, self.followers, &opts, self.run).await;
            let failed = reports.iter().find_map(|r| {
                r.result
                    .as_ref()
                    .err()
                    .map(|e| (r.module.name.clone(), Warning::cause(e)))
            });
            if let Ok(mut said) = self.said.lock() {
                said.extend(reports);
            }
            if let Some((name, why)) = failed {
                let summary =
                    format!("left {name} not active (it shares its namespace or volumes): {why}");
                let details = vec![format!(
                    "{name} was active before the update and did not restart into the new containers"
                )];
                return Err(Detailed {
                    summary,
                    details,
                    seen: Vec::new(),
                }
                .into());
            }
            let all: Vec<String> = self
                .dependents
                .iter()
                .chain(self.followers)
                .cloned()
                .collect();
            held(self.node, &all, bound).await
        })
    }
}

/// Waits until every one of `deps` is active, watched for [`WATCH`], within
/// `bound`; an error naming the first that is not.
fn held<'a>(
    node: &'a Node,
    deps: &'a [String],
    bound: Bound,
) -> LocalBoxFuture<'a, anyhow::Result<()>> {
    Box::pin(async move {
        let modules: Vec<Module> = deps
            .iter()
            .filter_map(|n| node.inventory.get(n).cloned())
            .collect();
        let watched = Bound::from_now(WATCH.min(bound.left()));
        loop {
            let read = crate::run::status::collect_status(node, &modules, Detail::Settled).await;
            let down = read.modules.iter().find(|s| s.state != State::Active);
            match down {
                None if watched.passed() => return Ok(()),
                Some(s) if bound.passed() => {
                    let summary = format!(
                        "left {} {} (it requires the module): {}",
                        s.name,
                        s.state.as_str(),
                        s.reason
                    );
                    let details = vec![format!(
                        "{} was active before the update and not within {}",
                        s.name,
                        crate::util::duration::format(bound.timeout)
                    )];
                    return Err(Detailed {
                        summary,
                        details,
                        seen: Vec::new(),
                    }
                    .into());
                }
                _ => {}
            }
            tokio::time::sleep(POLL.min(bound.left().max(Duration::from_millis(10)))).await;
        }
    })
}

/// The modules to restart after `restarted` (modules now active whose containers
/// were recreated): each one's namespace dependents, transitively, that are wanted
/// up and were not among `acted` (already restarted by the same call), in start order.
pub(crate) fn dependents_to_restart(
    node: &Node,
    restarted: &[String],
    acted: &[String],
) -> Vec<String> {
    let Ok(graph) = node.graph() else {
        return Vec::new();
    };
    let (state, _) = node.store.read();
    let mut out: Vec<String> = Vec::new();
    for m in restarted {
        for d in graph.restart_with(m) {
            let wanted = state
                .modules
                .get(&d)
                .is_some_and(|r| r.desired == Some(Desired::Up));
            if wanted && !acted.contains(&d) && !out.contains(&d) {
                out.push(d);
            }
        }
    }
    out
}

/// Restarts `names` (namespace dependents of `up`, in start order) through
/// `run` (the runner), each saying which of `up` it was restarted after.
pub(crate) async fn restart_after_with(
    node: &Node,
    up: &[String],
    names: &[String],
    opts: &StartOpts,
    run: Again<'_>,
) -> Vec<Report> {
    if names.is_empty() {
        return Vec::new();
    }
    let graph = node.graph().ok();
    let why = |d: &str| -> Warning {
        let of: Vec<String> = graph
            .as_ref()
            .map(|g| {
                g.requires(d)
                    .into_iter()
                    .filter(|e| up.contains(&e.to) || names.contains(&e.to))
                    .map(|e| e.to.clone())
                    .collect()
            })
            .unwrap_or_default();
        Warning::RestartedAfter(of)
    };
    let verb = Verb::AutoRestart { opts: opts.clone() };
    let targets: Vec<Target> = names
        .iter()
        .filter_map(|n| node.inventory.get(n).cloned())
        .map(Target::whole)
        .collect();
    let mut out = run(targets, verb).await;
    for r in &mut out {
        if let Ok(o) = &mut r.result {
            o.warnings.insert(0, why(&r.module.name));
        }
    }
    out
}
