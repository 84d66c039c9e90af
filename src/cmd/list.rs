//! `hal module list`: the modules of this node and where each is defined, with no engine call.

use crate::cmd::ctx::Ctx;
use crate::error::Exit;
use crate::output::render;
use crate::output::view::Modules;

pub(crate) async fn run(ctx: &Ctx) -> anyhow::Result<Exit> {
    if let Some(p) = &ctx.node.inventory.root_problem {
        ctx.ui.warn(p);
    }
    for why in crate::stack::name_mismatches(&ctx.node.inventory.modules) {
        ctx.ui.warn(&why);
    }
    let graph = ctx.node.graph()?;
    let entries = render::list_entries(&ctx.node.inventory.modules, Some(&graph));
    let why = format!(
        "no modules: no stack directories under {} and no host units in the config",
        ctx.node.inventory.root.display()
    );
    let none = entries.is_empty().then_some(why.as_str());
    ctx.ui.show_or_nothing(&Modules::new(&entries), none);
    Ok(Exit::Ok)
}
