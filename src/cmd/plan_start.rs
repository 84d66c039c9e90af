//! `hal plan`: what the next start would do to each service of the modules asked, and why, changing nothing.

use crate::cli::PlanArgs;
use crate::cmd::ctx::Ctx;
use crate::error::Exit;
use crate::module::outcome::StartOpts;
use crate::module::service_action::ModulePlan;
use crate::output::plan_table::PlanView;
use crate::run::{self, Rehearsal, Verb};

/// Plans every module asked, or fails as a start would (an engine nobody can
/// reach, a module that cannot be read) with no partial plan shown. The
/// plan is run's, the one `start --dry-run` says.
pub(crate) async fn run(ctx: &Ctx, a: PlanArgs) -> anyhow::Result<Exit> {
    let node = &ctx.node;
    let targets = node.targets(&a.modules, a.all)?;
    let opts = StartOpts {
        pull: None,
        wait: false,
        timeout: None,
    };
    let verb = Verb::Start {
        opts: opts.clone(),
        force: false,
    };
    // A graph that cannot be built is refused as `start` refuses it (exit 2).
    node.graph()?;
    run::check_reachable(node, &targets, &verb).await?;
    run::check_services(node, &targets).await?;
    for t in &targets {
        t.module.usable()?;
    }
    let how = Rehearsal { opts, anew: false };
    // A module that cannot be planned is reported as `start --all` reports a
    // module that cannot start: its error, the others planned, exit non-zero.
    let mut failed = None;
    let mut plans = Vec::with_capacity(targets.len());
    for (t, plan) in targets
        .iter()
        .zip(run::plan_each(node, &targets, &how).await)
    {
        plans.push(plan.unwrap_or_else(|e| {
            ctx.ui.fail(&e);
            failed.get_or_insert(crate::error::exit_of(&e));
            unplanned(t, &e)
        }));
    }
    ctx.ui.show(&PlanView::new(&plans, a.verbose));
    Ok(match failed {
        Some(exit) => exit,
        None if plans.iter().any(ModulePlan::changes) => Exit::NotActive,
        None => Exit::Ok,
    })
}

/// A stack that could not be planned: its error, and no services (the plan
/// is not whole).
fn unplanned(t: &crate::module::target::Target, e: &anyhow::Error) -> ModulePlan {
    ModulePlan {
        name: t.module.name.clone(),
        kind: "stack",
        services: Vec::new(),
        waits: Vec::new(),
        fails: Vec::new(),
        error: Some(crate::error::OneLine(e).to_string()),
    }
}
