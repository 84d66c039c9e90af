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
    let plans = run::plan_all(node, &targets, &how).await?;
    ctx.ui.show(&PlanView::new(&plans, a.verbose));
    Ok(if plans.iter().any(ModulePlan::changes) {
        Exit::NotActive
    } else {
        Exit::Ok
    })
}
