//! doctor's `history` check: whether a module's lines outlive its containers (the engine logs to the journal, with the compose labels), which services log there without them, and the lines that fix it (Docker's `daemon.json`, Podman's `containers.conf`, a service's `logging` options).

use super::check::Check;
use super::pools::DAEMON_JSON;
use crate::cmd::ctx::Ctx;
use crate::error::OneLine;
use crate::stack::{Session, history};

pub(super) async fn check(ctx: &Ctx, session: Option<&Session>) -> Check {
    let session = match super::check::session_for(session, "history") {
        Ok(e) => e,
        Err(not_asked) => return not_asked,
    };
    let keeping = session.keeping(std::path::Path::new(DAEMON_JSON)).await;
    let stacks = ctx.node.inventory.stack_names();
    let services = session.unlabelled(&stacks).await;
    let (k, services) = match (keeping, services) {
        (Ok(k), Ok(s)) => (k, s),
        (Err(e), _) | (_, Err(e)) => {
            return Check::fail(
                "history",
                OneLine(&e).to_string(),
                "check that the engine answers `docker info`",
            );
        }
    };
    let (mut detail, mut fix) = k.advice();
    if !services.is_empty() {
        let (said, how) = history::unlabelled_advice(&services);
        detail = format!("{detail}; {said}");
        fix = Some(match fix {
            Some(f) => format!("{f}; and {how}"),
            None => how,
        });
    }
    match fix {
        None => Check::pass("history", detail),
        Some(fix) => Check::fail("history", detail, fix),
    }
}
