//! The update's gate holds what requires the module: the modules that require it (declared or inferred, transitively) and were active before its recreate must be active again after it, or the module is rolled back naming the one that is not.
//!
//! A dependent that a new image breaks (another port, another protocol) may
//! take a healthcheck or two to say so: the gate watches them for [`WATCH`]
//! (at most until the update's timeout) after the module is active, and a
//! dependent seen not active then has until the timeout to be active again.
//! The namespace followers are restarted after the gate (`follow.rs`): a
//! container left in the old namespace would fail it for that alone.

use std::time::Duration;

use futures_util::future::BoxFuture;

use crate::error::Detailed;
use crate::module::Module;
use crate::module::deps::Tie;
use crate::module::status::{Desired, Detail, State};
use crate::run::node::Node;
use crate::stack::Bound;

/// How long the gate watches the dependents once the module is active.
const WATCH: Duration = Duration::from_secs(8);

/// How often it reads them.
const POLL: Duration = Duration::from_millis(500);

/// The modules that require `name`, transitively, wanted up and active
/// now (before the recreate), namespace followers left to `follow.rs`.
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
    let modules: Vec<Module> = found
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

/// Waits until every one of `deps` is active, watched for [`WATCH`], within
/// `bound`; an error naming the first that is not.
pub(crate) fn held<'a>(
    node: &'a Node,
    deps: &'a [String],
    bound: Bound,
) -> BoxFuture<'a, anyhow::Result<()>> {
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
                    return Err(Detailed { summary, details }.into());
                }
                _ => {}
            }
            tokio::time::sleep(POLL.min(bound.left().max(Duration::from_millis(10)))).await;
        }
    })
}
