//! doctor's `history` check: whether a module's lines outlive its containers (the engine logs to the journal), and the `daemon.json` lines that make it so.

use super::check::Check;
use super::pools::DAEMON_JSON;
use crate::cmd::ctx::Ctx;
use crate::error::OneLine;

pub(super) async fn check(ctx: &Ctx) -> Check {
    let engine = match ctx.node.stacks.engine().await {
        Ok(e) => e,
        Err(_) => return Check::not_checked("history", "Docker is not reachable"),
    };
    match crate::stack::history::keeping(&engine, std::path::Path::new(DAEMON_JSON)).await {
        Ok(k) => match k.advice() {
            (detail, None) => Check::pass("history", detail),
            (detail, Some(fix)) => Check::fail("history", detail, fix),
        },
        Err(e) => Check::fail(
            "history",
            OneLine(&e).to_string(),
            "check that the engine answers `docker info`",
        ),
    }
}
