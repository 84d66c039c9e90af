//! `hal module reset-failed`: clear start counts (and a unit's failed state) so a held module may start again.

use anyhow::Context;
use serde::Serialize;

use crate::cli::ResetArgs;
use crate::cmd::ctx::Ctx;
use crate::error::{Exit, OneLine, exit_of};
use crate::output::view::{Modules, Rows, Style};

#[derive(Serialize)]
struct Cleared<'a> {
    name: &'a str,
    kind: &'static str,
    ok: bool,
    error: Option<String>,
}

/// The document is for scripts: people read a line per module as it is cleared.
impl Rows for Cleared<'_> {
    fn table(_: &[Self], _: &Style) -> String {
        String::new()
    }
}

pub(crate) async fn run(ctx: &Ctx, a: ResetArgs) -> anyhow::Result<Exit> {
    let modules = ctx.node.inventory.resolve(&a.modules)?;
    ctx.node.store.check_writable()?;
    let mut exit = Exit::Ok;
    let mut rows = Vec::new();
    for m in &modules {
        let result = reset(ctx, m).await;
        if let Err(e) = &result {
            exit = exit.worst(exit_of(e));
            ctx.ui.fail(e);
        } else {
            ctx.ui.say(&format!("{}: start count cleared", m.name));
        }
        rows.push(Cleared {
            name: &m.name,
            kind: m.kind_name(),
            ok: result.is_ok(),
            error: result.err().map(|e| OneLine(&e).to_string()),
        });
    }
    ctx.ui.show(&Modules::new(&rows));
    Ok(exit)
}

async fn reset(ctx: &Ctx, m: &crate::module::Module) -> anyhow::Result<()> {
    let work = async {
        m.usable()?;
        if let Some((unit, scope)) = m.host_unit() {
            crate::host::reset_failed(&*ctx.node.hosts.init(scope), unit).await?;
        }
        if let Some(w) = ctx.node.store.reset(&m.name).await? {
            ctx.ui.warn(&w);
        }
        anyhow::Ok(())
    };
    work.await
        .with_context(|| format!("reset-failed {}", m.name))
}
