//! Can the module graph be built (no cycle, no `requires` naming no module), and which uses compose's files imply, or `after`s the config declares, point at no module (a warning, never a failure).

use super::check::Check;
use crate::cmd::ctx::Ctx;
use crate::error::OneLine;
use crate::module::deps::{Strength, Tie};

/// The `dependencies` line; each use no module owns is warned of on stderr
/// and named in the line's detail.
pub(super) fn check(ctx: &Ctx) -> Check {
    let graph = match ctx.node.graph() {
        Ok(g) => g,
        Err(e) => {
            return Check::fail(
                "dependencies",
                OneLine(&e).to_string(),
                "fix the config's requires/after, or the compose files that tie the modules",
            );
        }
    };
    let hard = graph
        .edges()
        .iter()
        .filter(|e| e.strength == Strength::Requires)
        .count();
    let inferred = graph
        .edges()
        .iter()
        .filter(|e| e.tie != Tie::Declared)
        .count();
    let mut detail = format!(
        "{} edge(s) between modules, {hard} of them hard, {inferred} inferred from compose",
        graph.edges().len()
    );
    let strangers: Vec<String> = graph
        .unowned()
        .iter()
        .map(|u| {
            let what = match u.what.tie {
                Tie::Network => "network",
                _ => "container",
            };
            format!(
                "{}: {} {} names {what} {:?}, which no module creates; hal does not order {} after it",
                u.module,
                u.what.file.display(),
                u.what.key,
                u.what.name,
                u.module
            )
        })
        .collect();
    let nowhere = graph
        .edges()
        .iter()
        .filter(|e| ctx.node.inventory.get(&e.to).is_none())
        .map(|e| {
            format!(
                "{}: {} names {:?}, which is no module; hal orders nothing by it",
                e.from, e.origin, e.to
            )
        });
    let strangers: Vec<String> = strangers.into_iter().chain(nowhere).collect();
    for s in &strangers {
        ctx.ui.warn(s);
    }
    if !strangers.is_empty() {
        detail.push_str(&format!("; warning: {}", strangers.join("; ")));
    }
    Check::pass("dependencies", detail)
}
