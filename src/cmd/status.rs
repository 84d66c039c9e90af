//! `hal status` / `hal module status`: the state of modules, exit 0 only when all are active.

use crate::cli::StatusArgs;
use crate::cmd::ctx::Ctx;
use crate::error::{Exit, HalError};
use crate::module::status::{ModuleStatus, State};
use crate::module::target::Target;
use crate::output::node_view::StatusView;

/// Prints the status table (or document) and exits 0 when every module
/// asked about is active, 3 when one is not, 6 when an engine cannot be asked.
///
/// `--failed` keeps only what needs a person and exits 0 when nothing does.
/// `-q` prints no table: the exit code is the answer, as `systemctl
/// is-active -q` gives it (errors and warnings still go to stderr). With
/// `--json` the document is printed all the same: a script that asks for it
/// gets it.
///
/// A services root that is missing, not a directory or unreadable is an
/// error of the node, whatever the modules say: exit 1, with the error
/// document under `--json`.
pub(crate) async fn run(ctx: &Ctx, a: StatusArgs) -> anyhow::Result<Exit> {
    if let Some(p) = &ctx.node.inventory.root_problem {
        return Err(HalError::NodeBroken(format!(
            "{p}: point hal at the services directory (--services-dir, HAL_SERVICES_DIR or services_dir in the config), or create it"
        ))
        .into());
    }
    let every = a.modules.is_empty();
    let targets: Vec<Target> = if every {
        // With the stacks whose directory is gone: a row when something of them runs.
        let inv = &ctx.node.inventory;
        inv.modules
            .iter()
            .chain(&inv.gone)
            .cloned()
            .map(Target::whole)
            .collect()
    } else {
        ctx.node.inventory.targets_to_show(&a.modules)?
    };
    let node = crate::run::collect_status_of(&ctx.node, &targets, ctx.ui.status_detail()).await;
    check_unseen_services(ctx, &targets, &node.modules).await?;
    for w in &node.warnings {
        ctx.ui.warn(w);
    }
    let unwritable = ctx.node.store.cannot_write();
    if let Some(why) = &unwritable {
        ctx.ui.warn(&format!(
            "hal's state cannot be written ({why}): hal watch goes on repairing and keeps its start counts in memory; starts, stops and updates are refused until it can be"
        ));
    }
    for e in &node.errors {
        ctx.ui.problem(e);
    }
    let (mut statuses, mut exit) = (node.modules, node.exit);
    let mut whole = None;
    if every {
        let gone = &ctx.node.inventory.gone;
        statuses.retain(|s| s.state == State::Orphaned || !gone.iter().any(|g| g.name == s.name));
        if exit == Exit::NotActive && statuses.iter().all(|s| s.state == State::Active) {
            exit = Exit::Ok;
        }
        // The node's state is of all its modules: read before `--failed` keeps some.
        let mut summary = crate::run::node_summary(&ctx.node, &statuses);
        summary.unwritable = unwritable;
        whole = Some(summary);
    }
    if a.failed {
        statuses.retain(|s| s.needs_person());
        if !matches!(exit, Exit::Unreachable | Exit::Usage | Exit::Failed) {
            exit = if statuses.is_empty() {
                Exit::Ok
            } else {
                Exit::NotActive
            };
        }
    }
    if !every {
        for t in &targets {
            attach_last_runs(ctx, t, &mut statuses);
        }
    }
    let why = if a.failed {
        "no module needs attention".to_string()
    } else {
        format!(
            "no modules: no stack directories under {} and no host units in the config",
            ctx.node.inventory.root.display()
        )
    };
    // What updates left in hal's state: read only for Prometheus text.
    let updates = || ctx.node.store.update_tallies();
    let view = StatusView::new(&statuses, whole.as_ref(), &updates);
    ctx.ui
        .show_or_nothing(&view, statuses.is_empty().then_some(why.as_str()));
    Ok(exit)
}

/// Puts what hal kept of a named stack's failed runs (of its one service, for
/// `MODULE/SERVICE`) into its status, for the table and the document alike.
fn attach_last_runs(ctx: &Ctx, t: &Target, statuses: &mut [crate::module::status::ModuleStatus]) {
    if !t.module.is_stack() {
        return;
    }
    let Some(s) = statuses
        .iter_mut()
        .find(|s| s.name == t.module.name && s.service == t.service)
    else {
        return;
    };
    let mut kept = crate::state::last_run::read(ctx.node.store.dir(), &t.module.name).runs;
    if let Some(service) = &t.service {
        kept.retain(|r| r.service == *service);
    }
    s.last_runs = Some(kept);
}

/// Refuses a named service the stack does not have (exit 4), before anything
/// is said. A service the status's own list showed (running or stopped) is
/// there, with no second list; only the others are asked about.
async fn check_unseen_services(
    ctx: &Ctx,
    targets: &[Target],
    statuses: &[ModuleStatus],
) -> anyhow::Result<()> {
    let unseen: Vec<Target> = targets
        .iter()
        .zip(statuses)
        .filter(|(t, s)| t.service.is_some() && s.services.is_empty())
        .map(|(t, _)| t.clone())
        .collect();
    crate::run::check_services(&ctx.node, &unseen).await
}
