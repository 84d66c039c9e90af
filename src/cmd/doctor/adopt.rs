//! Is this node hal's alone: no `hal-module@` instance still running or enabled beside hal (two supervisors), no running stack hal has no desired state for.

use super::check::Check;
use crate::cmd::adopt::plan::{TEMPLATE, live};
use crate::cmd::ctx::Ctx;
use crate::error::OneLine;
use crate::module::config::Scope;
use crate::stack::Session;

const NAME: &str = "adoption";
const FIX: &str =
    "hal adopt (it takes them over without stopping a container; --dry-run shows the plan)";

/// One line: what still needs `hal adopt`, or that nothing does.
pub(super) async fn check(ctx: &Ctx, session: Option<&Session>) -> Check {
    let mut found = Vec::new();
    let mut asked_init = false;
    for scope in [Scope::System, Scope::User] {
        let init = ctx.node.hosts.init(scope);
        // An init without template units has nothing of the kind to adopt.
        let Some(adopt) = init.adoption().filter(|_| init.reachable().is_ok()) else {
            continue;
        };
        asked_init = true;
        match adopt.instances(TEMPLATE).await {
            Ok(all) => found.extend(all.iter().filter(|i| live(i)).map(|i| {
                let mut w = vec![i.activity.as_str().to_string()];
                if i.enabled {
                    w.push("enabled".into());
                }
                format!("{} ({}: {})", i.unit, scope.as_str(), w.join(", "))
            })),
            Err(e) => {
                return Check::fail(
                    NAME,
                    format!("cannot list {TEMPLATE}@ units: {}", OneLine(&e)),
                    "fix the systemd check first",
                );
            }
        }
    }
    let unowned = unowned(ctx, session).await;
    let asked_engine = unowned.is_some();
    let unowned = unowned.unwrap_or_default();
    if !asked_init && !asked_engine {
        return Check::not_checked(
            NAME,
            "neither a systemd init with hal-module@ units nor the Docker engine could be asked (see the checks above)",
        );
    }
    let mut problems = Vec::new();
    if !found.is_empty() {
        problems.push(format!(
            "two supervisors: {} still run or start their stack beside hal",
            found.join(", ")
        ));
    }
    if !unowned.is_empty() {
        problems.push(format!(
            "running with no desired state in hal (hal watch and rescue leave them alone): {}",
            unowned.join(", ")
        ));
    }
    if problems.is_empty() {
        Check::pass(
            NAME,
            format!(
                "no {TEMPLATE}@ unit runs or is enabled, and every running stack has a desired state"
            ),
        )
    } else {
        Check::fail(NAME, problems.join("; "), FIX)
    }
}

/// The stacks running with no desired state in hal, or `None` when the engine
/// could not be asked.
async fn unowned(ctx: &Ctx, session: Option<&Session>) -> Option<Vec<String>> {
    let running = session?.running_projects().await.ok()?;
    let (state, _) = ctx.node.store.read();
    let owned = |name: &str| state.modules.get(name).is_some_and(|r| r.desired.is_some());
    Some(
        ctx.node
            .inventory
            .modules
            .iter()
            .filter(|m| m.is_stack() && !owned(&m.name))
            .filter(|m| running.contains(&m.name))
            .map(|m| m.name.clone())
            .collect(),
    )
}
