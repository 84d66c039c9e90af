//! `hal status` / `hal module status`: the state of modules, exit 0 only when all are active.

use crate::cmd::ctx::Ctx;
use crate::error::Exit;
use crate::output::render;
use crate::util::timefmt::Stamp;

pub async fn run(ctx: &Ctx, names: &[String]) -> anyhow::Result<Exit> {
    let modules = if names.is_empty() {
        ctx.node.inventory.modules.clone()
    } else {
        ctx.node.inventory.resolve(names)?
    };
    let node = crate::run::status::collect(&ctx.node, &modules, ctx.ui.status_detail()).await;
    for w in &node.warnings {
        ctx.ui.warn(w);
    }
    for e in &node.errors {
        ctx.ui.problem(e);
    }
    let (statuses, exit) = (node.modules, node.exit);
    if statuses.is_empty() {
        ctx.ui.nothing(&format!(
            "no modules: no stack directories under {} and no host units in the config",
            ctx.node.inventory.root.display()
        ));
    } else {
        ctx.ui.document(&statuses, || {
            render::status_table(&statuses, ctx.ui.color, Stamp::now())
        });
    }
    Ok(exit)
}
