//! `hal update` (`hal module update`): pull modules' images, recreate what changed behind the health gate, report per module, exit with the worst code.

use crate::cli::UpdateArgs;
use crate::cmd::ctx::Ctx;
use crate::error::{Exit, HalError};
use crate::run::update::UpdateOpts;

pub(crate) async fn run(ctx: &Ctx, a: UpdateArgs) -> anyhow::Result<Exit> {
    let targets = ctx.node.targets(&a.targets.modules, a.targets.all)?;
    if let Some(t) = targets.iter().find(|t| t.service.is_some()) {
        return Err(HalError::Usage(format!(
            "update works on whole modules: name {} (it recreates only the services whose image changed)",
            t.module.name
        ))
        .into());
    }
    let modules: Vec<_> = targets.into_iter().map(|t| t.module).collect();
    if !a.check {
        // A hal that cannot write the engine's state is refused, never given its own.
        ctx.node.store.check_writable()?;
    }
    crate::run::update::check_reachable(&ctx.node, &modules).await?;
    let opts = UpdateOpts {
        check: a.check,
        force: a.force,
        timeout: a.timeout,
        // One module at a time unless asked (`UPDATE_JOBS`): a bad image stops at the first.
        jobs: usize::from(a.targets.jobs),
        max_failures: usize::try_from(a.max_failures).unwrap_or(usize::MAX),
        by_supervisor: false,
    };
    let began = std::time::Instant::now();
    let each = |r: &crate::run::update::UpdateReport| crate::output::updates::finished(&ctx.ui, r);
    let reports = crate::run::update::run(&ctx.node, &ctx.ui, modules, &opts, &each).await;
    crate::output::updates::end(&ctx.ui, &reports, began.elapsed());
    Ok(reports.iter().fold(Exit::Ok, |acc, r| acc.worst(r.exit())))
}
