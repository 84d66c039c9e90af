//! `hal module start|stop|restart`: change modules, report per module, exit with the worst code.

use crate::cli::{StartArgs, StopArgs, Targets};
use crate::cmd::ctx::Ctx;
use crate::error::Exit;
use crate::module::outcome::StartOpts;
use crate::run::{self, Verb};

pub(crate) async fn start(ctx: &Ctx, a: StartArgs) -> anyhow::Result<Exit> {
    let verb = Verb::Start {
        opts: start_opts(&a),
        force: a.force,
    };
    run(ctx, &a.targets, verb, a.dry_run).await
}

pub(crate) async fn stop(ctx: &Ctx, a: StopArgs) -> anyhow::Result<Exit> {
    let verb = Verb::Stop { grace: a.timeout };
    run(ctx, &a.targets, verb, a.dry_run).await
}

pub(crate) async fn restart(ctx: &Ctx, a: StartArgs) -> anyhow::Result<Exit> {
    let verb = Verb::Restart {
        opts: start_opts(&a),
        force: a.force,
    };
    run(ctx, &a.targets, verb, a.dry_run).await
}

fn start_opts(a: &StartArgs) -> StartOpts {
    StartOpts {
        pull: a.pull,
        wait: !a.wait.no_wait,
        timeout: a.wait.timeout,
    }
}

async fn run(ctx: &Ctx, t: &Targets, verb: Verb, dry_run: bool) -> anyhow::Result<Exit> {
    let targets = ctx.node.targets(&t.modules, t.all)?;
    if !dry_run {
        // A hal that cannot write the engine's state is refused, never given its own.
        ctx.node.store.check_writable()?;
    }
    let finished = |r: &run::Report, v: &Verb| {
        crate::output::reports::finished(&ctx.ui, &v.view(), &r.view(v));
    };
    let ask = |question: &str| ctx.ui.confirm(question);
    let caller = run::Caller {
        progress: &ctx.ui,
        note: &|words| ctx.ui.note(words),
        confirm: t.all.then_some(&ask as _),
        finished: &finished,
    };
    let call = run::Call {
        verb: &verb,
        targets,
        jobs: ctx.node.jobs(t.jobs),
        dry_run,
    };
    let ran = run::verb(&ctx.node, &caller, call).await?;
    if ran.declined {
        return Ok(Exit::Failed);
    }
    let reports: Vec<&run::Report> = ran.reports.iter().chain(&ran.followers).collect();
    let views = reports.iter().map(|r| r.view(&verb)).collect();
    crate::output::reports::end(&ctx.ui, &verb.view(), views, ran.took, &ran.because);
    // A dry run's reports are all `ok` (exit 0) but for a module that could
    // not be planned, which fails as its start would.
    Ok(reports.iter().fold(Exit::Ok, |acc, r| acc.worst(r.exit())))
}
