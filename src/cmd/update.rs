//! `hal update` (`hal module update`): pull modules' images, recreate what changed behind the health gate, report per module, exit with the worst code.

use crate::cli::UpdateArgs;
use crate::cmd::ctx::Ctx;
use crate::error::{Exit, HalError};
use crate::run::{self, UpdateOpts, Verb};

pub(crate) async fn run(ctx: &Ctx, a: UpdateArgs) -> anyhow::Result<Exit> {
    let targets = ctx.node.targets(&a.targets.modules, a.targets.all)?;
    if let Some(t) = targets.iter().find(|t| t.service.is_some()) {
        return Err(HalError::Usage(format!(
            "update works on whole modules: name {} (it recreates only the services whose image changed)",
            t.module.name
        ))
        .into());
    }
    if !a.check {
        // A hal that cannot write the engine's state is refused, never given its own.
        ctx.node.store.check_writable()?;
    }
    let opts = UpdateOpts {
        check: a.check,
        force: a.force,
        timeout: a.timeout,
        max_failures: usize::try_from(a.max_failures).unwrap_or(usize::MAX),
        by_supervisor: false,
    };
    let verb = Verb::Update { opts };
    run::check_reachable(&ctx.node, &targets, &verb).await?;
    // One module at a time unless asked (`UPDATE_JOBS`): a bad image stops at the first.
    let jobs = usize::from(a.targets.jobs);
    let began = std::time::Instant::now();
    let each =
        |r: &run::Report| crate::output::reports::finished(&ctx.ui, &verb.view(), &r.view(&verb));
    let mut reports = run::run_targets(&ctx.node, &ctx.ui, targets, &verb, jobs, &each).await;
    if !a.check {
        let followed = |r: &run::Report, v: &run::Verb| {
            crate::output::reports::finished(&ctx.ui, &v.view(), &r.view(v));
        };
        run::follow::after_update(&ctx.node, &ctx.ui, &mut reports, jobs, &followed).await;
    }
    let because = Default::default();
    let views = reports.iter().map(|r| r.view(&verb)).collect();
    crate::output::reports::end(&ctx.ui, &verb.view(), views, began.elapsed(), &because);
    Ok(reports.iter().fold(Exit::Ok, |acc, r| acc.worst(r.exit())))
}
