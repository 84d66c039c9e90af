//! `hal status` / `hal module status`: the state of modules, exit 0 only when all are active.

use crate::cli::{StatusArgs, StatusFormat};
use crate::cmd::ctx::Ctx;
use crate::error::Exit;
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
pub async fn run(ctx: &Ctx, a: &StatusArgs) -> anyhow::Result<Exit> {
    let targets: Vec<Target> = if a.modules.is_empty() {
        ctx.node
            .inventory
            .modules
            .iter()
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
    if a.failed {
        statuses.retain(|s| s.needs_person());
        if exit != Exit::Unreachable {
            exit = if statuses.is_empty() {
                Exit::Ok
            } else {
                Exit::NotActive
            };
        }
    }
    if a.format == Some(StatusFormat::Prometheus) {
        ctx.ui
            .text(&crate::output::prometheus::render(&statuses, None));
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
    Ok(exit)
}
