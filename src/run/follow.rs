//! The dependents that cannot outlive a restart of what they require: those in its network namespace or using its volumes (`volumes_from`), restarted after it is active again, as compose's `depends_on.restart` does inside one project.
//!
//! A restart (or rescue, update, rollback) of a module recreates its containers;
//! a container that joined one of their namespaces stays in the old one, without a
//! network. Its module is restarted too (through the runner: its lock, its count),
//! once the module it needs is active again. Modules tied by a network or a link
//! keep their containers and uptime: a network outlives the containers on it.

use futures_util::future::LocalBoxFuture;

use crate::module::outcome::StartOpts;
use crate::module::progress::Progress;
use crate::module::status::State;
use crate::module::target::Target;
use crate::module::warning::Warning;
use crate::run::node::Node;
use crate::run::report::Report;
use crate::run::runner::run_targets;
use crate::run::verb::Verb;

/// Restarts the namespace dependents of the modules whose reports say they were
/// restarted and are active, in layers; their reports, each saying why.
pub(crate) async fn restart_dependents(
    node: &Node,
    progress: &dyn Progress,
    reports: &[Report],
    opts: &StartOpts,
    jobs: usize,
    finished: &dyn Fn(&Report),
) -> Vec<Report> {
    let up: Vec<String> = reports
        .iter()
        .filter(|r| r.changed && r.result.as_ref().is_ok_and(|o| o.state == State::Active))
        .map(|r| r.module.name.clone())
        .collect();
    let acted: Vec<String> = reports.iter().map(|r| r.module.name.clone()).collect();
    let out = restart_after(node, progress, &up, &acted, opts, jobs).await;
    for r in &out {
        finished(r);
    }
    out
}

/// Restarts the namespace dependents of `up` (not among `acted`), in layers.
pub(crate) async fn restart_after(
    node: &Node,
    progress: &dyn Progress,
    up: &[String],
    acted: &[String],
    opts: &StartOpts,
    jobs: usize,
) -> Vec<Report> {
    let names = crate::run::dependents::dependents_to_restart(node, up, acted);
    restart_named(node, progress, up, &names, opts, jobs).await
}

/// Restarts `names` (namespace dependents of `up`, in start order), in
/// layers, at most `jobs` at once, each saying which of `up` it was restarted after.
pub(crate) async fn restart_named(
    node: &Node,
    progress: &dyn Progress,
    up: &[String],
    names: &[String],
    opts: &StartOpts,
    jobs: usize,
) -> Vec<Report> {
    let run = |targets: Vec<Target>, verb: Verb| -> LocalBoxFuture<'_, Vec<Report>> {
        Box::pin(async move { run_targets(node, progress, targets, &verb, jobs, &|_| {}).await })
    };
    crate::run::dependents::restart_after_with(node, up, names, opts, &run).await
}

/// After `update` (or its rollback) recreated modules' containers: their
/// namespace dependents restarted, each one handed to `finished` with the verb
/// it underwent as it ends (the update's own lines are out by then: this is
/// where a person reads `restarted after gw`), and its result said on the
/// report of the module that caused it: in its outcome's warnings, or after a
/// rollback (an error) in its update's facts, both its document's `warnings`.
pub(crate) async fn after_update(
    node: &Node,
    progress: &dyn Progress,
    reports: &mut [Report],
    jobs: usize,
    finished: &dyn Fn(&Report, &Verb),
) {
    let opts = crate::module::outcome::StartOpts {
        pull: Some(crate::module::config::PullPolicy::Missing),
        wait: true,
        timeout: None,
    };
    let acted: Vec<String> = reports.iter().map(|r| r.module.name.clone()).collect();
    for r in reports.iter_mut() {
        let rolled_back = r.update.as_ref().is_some_and(|u| u.rolled_back.is_some());
        // The followers its gate restarted: in its new containers after a
        // success; after a rollback, left in the namespace it took away.
        let gated = std::mem::take(&mut r.followed);
        if !(r.changed || rolled_back) {
            continue;
        }
        let mut again = if rolled_back { Vec::new() } else { gated };
        let mut skip = acted.clone();
        skip.extend(again.iter().map(|d| d.module.name.clone()));
        let name = [r.module.name.clone()];
        again.extend(restart_after(node, progress, &name, &skip, &opts, jobs.max(1)).await);
        // The dependents the gate held that are not active after the rollback: brought back.
        let broke = r.update.as_ref().map(|u| u.dependents.clone());
        if rolled_back && let Some(broke) = broke {
            again.extend(bring_back(node, progress, &broke, &opts, jobs.max(1)).await);
        }
        for d in again {
            finished(&d, &Verb::AutoRestart { opts: opts.clone() });
            let said = Warning::RestartedWith {
                module: d.module.name.clone(),
                result: match &d.result {
                    Ok(o) => Ok(o.state),
                    Err(e) => Err(Warning::cause(e)),
                },
            };
            match (&mut r.result, r.update.as_mut()) {
                (Ok(o), _) => o.warnings.push(said),
                (Err(_), Some(u)) => u.beside_error.push(said),
                (Err(_), None) => {}
            }
        }
    }
}

/// Restarts those of `names` that are not active now (the dependents an
/// update's gate held, after its rollback), each saying why.
async fn bring_back(
    node: &Node,
    progress: &dyn Progress,
    names: &[String],
    opts: &StartOpts,
    jobs: usize,
) -> Vec<Report> {
    let modules: Vec<crate::module::Module> = names
        .iter()
        .filter_map(|n| node.inventory.get(n).cloned())
        .collect();
    if modules.is_empty() {
        return Vec::new();
    }
    let now =
        crate::run::status::collect_status(node, &modules, crate::module::status::Detail::Settled)
            .await;
    let targets: Vec<Target> = now
        .modules
        .iter()
        .filter(|s| s.state != State::Active)
        .filter_map(|s| node.inventory.get(&s.name).cloned())
        .map(Target::whole)
        .collect();
    let verb = Verb::AutoRestart { opts: opts.clone() };
    run_targets(node, progress, targets, &verb, jobs, &|_| {}).await
}
