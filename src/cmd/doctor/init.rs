//! Is the init reachable in every scope the config's host units use, and do those units exist there?

use super::check::Check;
use super::modules::check_name;
use crate::cmd::ctx::Ctx;
use crate::host::init::{Init, ManagerHealth};
use crate::module::config::Scope;

/// A host module's name and its unit.
type HostUnit<'a> = (&'a str, &'a str);

/// One line per scope in use (or one saying none is), and a failed check per
/// host module whose unit the init does not know.
pub(super) async fn checks(ctx: &Ctx) -> (Vec<Check>, Vec<Check>) {
    let mut scopes: Vec<(Scope, Vec<HostUnit<'_>>)> = Vec::new();
    for m in &ctx.node.inventory.modules {
        let Some((unit, scope)) = m.host_unit() else {
            continue;
        };
        let unit = (m.name.as_str(), unit);
        match scopes.iter_mut().find(|(s, _)| *s == scope) {
            Some((_, units)) => units.push(unit),
            None => scopes.push((scope, vec![unit])),
        }
    }
    scopes.sort_by_key(|(s, _)| s.as_str());
    if scopes.is_empty() {
        let init = ctx.node.hosts.init(Scope::System);
        let line = Check::pass(init.name(), "not needed: no host modules in the config");
        return (vec![line], Vec::new());
    }
    let per_scope = scopes.into_iter().map(|(scope, units)| async move {
        scope_checks(&*ctx.node.hosts.init(scope), scope, &units).await
    });
    let results = futures_util::future::join_all(per_scope).await;
    let mut lines = Vec::new();
    let mut problems = Vec::new();
    for (line, unit_problems) in results {
        lines.push(line);
        problems.extend(unit_problems);
    }
    (lines, problems)
}

async fn scope_checks(
    init: &dyn Init,
    scope: Scope,
    units: &[HostUnit<'_>],
) -> (Check, Vec<Check>) {
    let name = format!("{}-{}", init.name(), scope.as_str());
    let manager = scope.manager();
    // Every init call is bounded in time (see `Init`).
    let (state, note) = match init.health().await {
        ManagerHealth::Up { state, note } => (state, note),
        ManagerHealth::Down { why, hint } => return (Check::fail(name, why, hint), Vec::new()),
    };
    let mut problems = Vec::new();
    for (module, unit) in units {
        if let Some(p) = init.load_problem(unit).await {
            problems.push(Check::fail(
                check_name(module),
                format!("unit {unit}: {} in {manager}", p.words),
                format!(
                    "install {unit} ({}), or fix unit = in [module.{module}] of the config",
                    p.look
                ),
            ));
        }
    }
    let detail = match note {
        Some(note) => format!("{manager} answers: {state} ({note})"),
        None => format!("{manager} answers: {state}"),
    };
    (Check::pass(name, detail), problems)
}
