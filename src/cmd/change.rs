//! `hal module start|stop|restart`: change modules, report per module, exit with the worst code.

use crate::cli::{StartArgs, StopArgs, Targets};
use crate::cmd::ctx::Ctx;
use crate::error::{Exit, report};
use crate::module::outcome::StartOpts;
use crate::module::status::State;
use crate::output::ui::paint;
use crate::run::{self, Report, Verb};

pub async fn start(ctx: &Ctx, a: StartArgs) -> anyhow::Result<Exit> {
    let verb = Verb::Start {
        opts: start_opts(&a),
        force: a.force,
    };
    run(ctx, &a.targets, verb, false).await
}

pub async fn stop(ctx: &Ctx, a: StopArgs) -> anyhow::Result<Exit> {
    run(ctx, &a.targets, Verb::Stop, true).await
}

pub async fn restart(ctx: &Ctx, a: StartArgs) -> anyhow::Result<Exit> {
    let verb = Verb::Restart {
        opts: start_opts(&a),
        force: a.force,
    };
    run(ctx, &a.targets, verb, true).await
}

fn start_opts(a: &StartArgs) -> StartOpts {
    StartOpts {
        pull: a.pull,
        wait: !a.wait.no_wait,
        timeout: a.wait.timeout,
    }
}

async fn run(ctx: &Ctx, t: &Targets, verb: Verb, confirm_all: bool) -> anyhow::Result<Exit> {
    let modules = ctx.node.targets(&t.modules, t.all)?;
    if t.all && confirm_all && !modules.is_empty() {
        let question = format!("{} all {} modules?", verb.name(), modules.len());
        if !ctx.ui.confirm(&question)? {
            return Ok(Exit::Failed);
        }
    }
    let began = std::time::Instant::now();
    let reports = run::run(&ctx.node, &ctx.ui, modules, &verb, ctx.node.jobs(t.jobs)).await;
    render(ctx, verb.name(), &reports);
    if reports.len() > 1 && !ctx.ui.json && !ctx.ui.quiet {
        let failed = reports.iter().filter(|r| r.result.is_err()).count();
        eprintln!(
            "hal: {} {} of {} modules in {:.1}s{}",
            verb.name(),
            reports.len() - failed,
            reports.len(),
            began.elapsed().as_secs_f64(),
            if failed > 0 {
                format!(" ({failed} failed)")
            } else {
                String::new()
            }
        );
    }
    Ok(reports.iter().fold(Exit::Ok, |acc, r| acc.worst(r.exit())))
}

fn render(ctx: &Ctx, action: &'static str, reports: &[Report]) {
    if ctx.ui.json {
        let docs: Vec<_> = reports.iter().map(|r| r.to_json(action)).collect();
        println!("{}", crate::output::render::modules_json(&docs));
        return;
    }
    for r in reports {
        match &r.result {
            Ok(o) => {
                for w in &o.warnings {
                    ctx.ui.warn(&format!("{}: {w}", r.module.name));
                }
                if ctx.ui.quiet {
                    continue;
                }
                let state = paint(ctx.ui.color, color_code(o.state), o.state.as_str());
                let reason = o
                    .reason
                    .as_deref()
                    .map_or(String::new(), |r| format!(": {r}"));
                println!(
                    "{}: {state}{reason} ({action} took {:.1}s)",
                    r.module.name,
                    r.took.as_secs_f64()
                );
            }
            Err(e) => report(e),
        }
    }
}

fn color_code(s: State) -> &'static str {
    match s {
        State::Active => "32",
        State::Starting => "36",
        State::Degraded => "33",
        State::Inactive => "2",
        State::Failed | State::Invalid => "31",
        State::Unknown => "35",
    }
}
