//! `hal module start|stop|restart`: change modules, report per module, exit with the worst code.

use crate::cli::{StartArgs, StopArgs, Targets};
use crate::cmd::ctx::Ctx;
use crate::error::Exit;
use crate::module::outcome::StartOpts;
use crate::module::target::Target;
use crate::run::pulled::{self, Expanded};
use crate::run::{self, Verb};

pub(crate) async fn start(ctx: &Ctx, a: StartArgs) -> anyhow::Result<Exit> {
    let verb = Verb::Start {
        opts: start_opts(&a),
        force: a.force,
    };
    run(ctx, &a.targets, verb, false, a.dry_run).await
}

pub(crate) async fn stop(ctx: &Ctx, a: StopArgs) -> anyhow::Result<Exit> {
    let verb = Verb::Stop { grace: a.timeout };
    run(ctx, &a.targets, verb, true, a.dry_run).await
}

pub(crate) async fn restart(ctx: &Ctx, a: StartArgs) -> anyhow::Result<Exit> {
    let verb = Verb::Restart {
        opts: start_opts(&a),
        force: a.force,
    };
    run(ctx, &a.targets, verb, true, a.dry_run).await
}

fn start_opts(a: &StartArgs) -> StartOpts {
    StartOpts {
        pull: a.pull,
        wait: !a.wait.no_wait,
        timeout: a.wait.timeout,
    }
}

async fn run(
    ctx: &Ctx,
    t: &Targets,
    verb: Verb,
    confirm_all: bool,
    dry_run: bool,
) -> anyhow::Result<Exit> {
    let targets = ctx.node.targets(&t.modules, t.all)?;
    if dry_run {
        return plan(ctx, targets, &verb).await;
    }
    // A hal that cannot write the engine's state is refused, never given its own.
    ctx.node.store.check_writable()?;
    // An engine nobody can reach, or a service the stack does not have, is
    // refused before anything is touched.
    run::check_reachable(&ctx.node, &targets, &verb).await?;
    run::check_services(&ctx.node, &targets).await?;
    let Expanded { targets, because } = expand(ctx, targets, &verb, false).await?;
    if t.all && confirm_all && !targets.is_empty() {
        let question = format!("{} all {} modules?", verb.name(), targets.len());
        if !ctx.ui.confirm(&question)? {
            return Ok(Exit::Failed);
        }
    }
    let began = std::time::Instant::now();
    let each =
        |r: &run::Report| crate::output::reports::finished(&ctx.ui, &verb.view(), &r.view(&verb));
    let jobs = ctx.node.jobs(t.jobs);
    let mut reports = run::run_targets(&ctx.node, &ctx.ui, targets, &verb, jobs, &each).await;
    if let Verb::Restart { opts, .. } = &verb {
        let node = &ctx.node;
        let more = run::follow::restart_dependents(node, &ctx.ui, &reports, opts, jobs, &each);
        reports.extend(more.await);
    }
    let views = reports.iter().map(|r| r.view(&verb)).collect();
    crate::output::reports::end(&ctx.ui, &verb.view(), views, began.elapsed(), &because);
    Ok(reports.iter().fold(Exit::Ok, |acc, r| acc.worst(r.exit())))
}

/// `--dry-run`: what each module would undergo, and nothing done.
async fn plan(ctx: &Ctx, targets: Vec<Target>, verb: &Verb) -> anyhow::Result<Exit> {
    run::check_reachable(&ctx.node, &targets, verb).await?;
    run::check_services(&ctx.node, &targets).await?;
    let Expanded { targets, because } = expand(ctx, targets, verb, true).await?;
    let began = std::time::Instant::now();
    let reports = run::would::plan(&ctx.node, targets, verb).await;
    for r in &reports {
        crate::output::reports::finished(&ctx.ui, &verb.view(), &r.view(verb));
    }
    let views = reports.iter().map(|r| r.view(verb)).collect();
    crate::output::reports::end(&ctx.ui, &verb.view(), views, began.elapsed(), &because);
    Ok(Exit::Ok)
}

/// A start's targets with what they require and is not up; a stop's with
/// what requires them and is up; each added module said on stderr (as what
/// it would undergo under `--dry-run`).
async fn expand(
    ctx: &Ctx,
    targets: Vec<Target>,
    verb: &Verb,
    dry_run: bool,
) -> anyhow::Result<Expanded> {
    let (expanded, starting) = match verb {
        Verb::Start { .. } => (pulled::pull_in(&ctx.node, targets).await?, true),
        Verb::Stop { .. } => (pulled::push_out(&ctx.node, targets).await?, false),
        _ => {
            return Ok(Expanded {
                targets,
                because: Default::default(),
            });
        }
    };
    for t in &expanded.targets {
        if let Some(why) = expanded.because.get(&t.module.name) {
            let said = pulled::words(&t.module.name, why, starting, dry_run);
            ctx.ui.note(&said);
        }
    }
    Ok(expanded)
}
