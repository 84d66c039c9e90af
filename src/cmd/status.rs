//! `hal status` / `hal module status`: the state of modules, exit 0 only when all are active.

use crate::cli::{StatusArgs, StatusFormat};
use crate::cmd::ctx::Ctx;
use crate::error::{Exit, HalError};
use crate::module::status::State;
use crate::module::target::Target;
use crate::output::view::Modules;

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
pub(crate) async fn run(ctx: &Ctx, a: &StatusArgs) -> anyhow::Result<Exit> {
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
    crate::run::check_services(&ctx.node, &targets).await?;
    let node =
        crate::run::status::collect_targets(&ctx.node, &targets, ctx.ui.status_detail()).await;
    for w in &node.warnings {
        ctx.ui.warn(w);
    }
    for e in &node.errors {
        ctx.ui.problem(e);
    }
    let (mut statuses, mut exit) = (node.modules, node.exit);
    if every {
        let gone = &ctx.node.inventory.gone;
        statuses.retain(|s| s.state == State::Orphaned || !gone.iter().any(|g| g.name == s.name));
        if exit == Exit::NotActive && statuses.iter().all(|s| s.state == State::Active) {
            exit = Exit::Ok;
        }
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
    if a.format == Some(StatusFormat::Prometheus) {
        let (state, _) = ctx.node.store.read();
        let text = crate::output::prometheus::render(&statuses, &state.modules, None);
        ctx.ui.text(&text);
        return Ok(exit);
    }
    if statuses.is_empty() {
        let why = if a.failed {
            "no module needs attention".to_string()
        } else {
            format!(
                "no modules: no stack directories under {} and no host units in the config",
                ctx.node.inventory.root.display()
            )
        };
        ctx.ui.nothing(&why);
    } else {
        ctx.ui.show(&Modules::new(&statuses));
    }
    if !a.modules.is_empty() {
        for t in &targets {
            last_runs(ctx, t);
        }
    }
    Ok(exit)
}

/// Lines of the failed container run hal kept before it removed or recreated
/// the container, shown for a named module.
const SHOWN_LINES: usize = 10;

/// "last run of web/db: exit 137 (OOM) at …, its last lines:" and those lines.
fn last_runs(ctx: &Ctx, t: &Target) {
    let kept = crate::state::last_run::read(ctx.node.store.dir(), &t.module.name);
    for run in kept.runs {
        if t.service.as_ref().is_some_and(|s| *s != run.service) {
            continue;
        }
        let label = format!("{}/{}", t.module.name, run.service);
        let at = crate::util::timefmt::parse(&run.at)
            .map_or(run.at.clone(), |t| t.whole_second().rfc3339());
        let mut text = format!("last run of {label}: {} at {at}", run.how());
        if run.lines.is_empty() {
            text.push_str(", no lines");
        } else {
            text.push_str(", its last lines:");
        }
        let skip = run.lines.len().saturating_sub(SHOWN_LINES);
        for l in &run.lines[skip..] {
            text.push_str(&format!("\n  {label} | {}", l.message));
        }
        ctx.ui.say(&text);
    }
}
