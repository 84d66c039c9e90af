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
    // A module named (not matched by `--all` or a pattern) that is pinned
    // is refused without `--force`: a person asked for what the config forbids.
    let named: Vec<String> = targets
        .iter()
        .filter(|t| a.targets.modules.contains(&t.module.name))
        .filter(|t| ctx.node.config.pinned(&t.module.name))
        .map(|t| t.module.name.clone())
        .collect();
    if let Some(name) = named.first().filter(|_| !a.force && !a.check) {
        return Err(HalError::Usage(format!(
            "{name} is pinned (`pin = true` in its section of the config): `hal update --force {name}` updates it once anyway; remove `pin` to let updates in again"
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
        no_checkpoint: a.no_checkpoint,
        unpinned: if a.force { named } else { Vec::new() },
    };
    let verb = Verb::Update { opts };
    let finished = |r: &run::Report, v: &Verb| {
        crate::output::reports::finished(&ctx.ui, &v.view(), &r.view(v));
    };
    let caller = run::Caller {
        progress: &ctx.ui,
        note: &|_| {},
        confirm: None,
        finished: &finished,
    };
    let call = run::Call {
        verb: &verb,
        targets,
        // One module at a time unless asked (`UPDATE_JOBS`): a bad image stops at the first.
        jobs: usize::from(a.targets.jobs),
        dry_run: false,
    };
    let ran = run::verb(&ctx.node, &caller, call).await?;
    let views = ran.reports.iter().map(|r| r.view(&verb)).collect();
    crate::output::reports::end(&ctx.ui, &verb.view(), views, ran.took, &ran.because);
    Ok(ran
        .reports
        .iter()
        .fold(Exit::Ok, |acc, r| acc.worst(r.exit())))
}
