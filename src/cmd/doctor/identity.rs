//! Is every project hal sees its own: no running project named like a module but run from another directory, no containers left of a module whose directory is gone.

use super::check::Check;
use crate::cmd::ctx::Ctx;
use crate::error::OneLine;
use crate::stack::{Session, identity};

const NAME: &str = "identity";

/// One line: the conflicts and orphans, or that there are none.
pub(super) async fn check(ctx: &Ctx, session: Option<&Session>) -> Check {
    let inv = &ctx.node.inventory;
    let session = match super::check::session_for(session, NAME) {
        Ok(e) => e,
        Err(not_asked) => return not_asked,
    };
    let dirs = match session.project_dirs().await {
        Ok(d) => d,
        Err(e) => {
            return Check::not_checked(NAME, format!("cannot list containers: {}", OneLine(&e)));
        }
    };
    let mut problems = Vec::new();
    for m in inv.modules.iter().chain(&inv.gone) {
        let (Some(dir), Some(seen)) = (m.stack_dir(), dirs.get(m.name.as_str())) else {
            continue;
        };
        if !dir.is_dir() {
            problems.push(format!(
                "{}: {}",
                m.name,
                identity::orphan_reason(&m.name, seen, dir)
            ));
        } else if let Some(other) = identity::other_dir(seen.iter().map(String::as_str), dir) {
            problems.push(format!("{}: {}", m.name, identity::conflict_reason(&other)));
        }
    }
    if problems.is_empty() {
        Check::pass(
            NAME,
            "every running project named like a module runs from its directory",
        )
    } else {
        Check::fail(
            NAME,
            problems.join("; "),
            "hal stop NAME removes an orphan's containers; stop the other directory's project there, or rename one of the directories",
        )
    }
}
