//! `hal plan`: what the next start would do to each service of the modules asked, and why, changing nothing.

use crate::cli::PlanArgs;
use crate::cmd::ctx::Ctx;
use crate::error::Exit;
use crate::module::outcome::StartOpts;
use crate::module::service_action::ModulePlan;
use crate::output::plan_table::PlanView;
use crate::run::{self, Verb};

/// Plans every module asked, or fails as a start would (an engine nobody can
/// reach, a module that cannot be read) with no partial plan shown. The
/// plan is the runner's one entry's (`run::verb` with [`Verb::Plan`]), the
/// one `start --dry-run` says.
pub(crate) async fn run(ctx: &Ctx, a: PlanArgs) -> anyhow::Result<Exit> {
    let node = &ctx.node;
    let targets = node.targets(&a.modules, a.all)?;
    for t in &targets {
        t.module.usable()?;
    }
    let opts = StartOpts {
        pull: None,
        wait: false,
        timeout: None,
    };
    let verb = Verb::Plan { opts };
    let caller = run::Caller {
        progress: &ctx.ui,
        note: &|_| {},
        confirm: None,
        finished: &|_, _| {},
    };
    let call = run::Call {
        verb: &verb,
        targets,
        jobs: node.jobs(None),
        dry_run: true,
    };
    let ran = run::verb(node, &caller, call).await?;
    // A module that cannot be planned is reported as `start --all` reports a
    // module that cannot start: its error, the others planned, exit non-zero.
    let mut failed = None;
    let plans: Vec<ModulePlan> = ran
        .reports
        .into_iter()
        .map(|r| match (r.result, r.plan) {
            (Ok(_), Some(plan)) => plan,
            (Err(e), _) => {
                ctx.ui.fail(&e);
                failed.get_or_insert(crate::error::exit_of(&e));
                unplanned(&r.module.name, &e)
            }
            (Ok(_), None) => {
                let e = anyhow::anyhow!("no plan was made");
                failed.get_or_insert(crate::error::exit_of(&e));
                unplanned(&r.module.name, &e)
            }
        })
        .collect();
    ctx.ui.show(&PlanView::new(&plans, a.verbose));
    Ok(match failed {
        Some(exit) => exit,
        None if plans.iter().any(ModulePlan::changes) => Exit::NotActive,
        None => Exit::Ok,
    })
}

/// A stack that could not be planned: its error, and no services (the plan
/// is not whole).
fn unplanned(name: &str, e: &anyhow::Error) -> ModulePlan {
    ModulePlan {
        name: name.to_string(),
        kind: "stack",
        services: Vec::new(),
        waits: Vec::new(),
        fails: Vec::new(),
        error: Some(crate::error::OneLine(e).to_string()),
    }
}
