//! The checkpoints updates keep (issue 48): each module's size and when it was taken, on one line, with where they live.

use super::check::Check;
use crate::cmd::ctx::Ctx;
use crate::util::size;

/// One line: every module's checkpoint with its size (none: nothing is said).
pub(super) fn check(ctx: &Ctx) -> Option<Check> {
    let store = &ctx.node.store;
    let (file, _) = store.read();
    let kept: Vec<(String, u64, String)> = file
        .modules
        .iter()
        .filter_map(|(name, r)| {
            r.checkpoint
                .as_ref()
                .map(|c| (name.clone(), c.bytes, c.at.rfc3339()))
        })
        .collect();
    if kept.is_empty() {
        return None;
    }
    let total: u64 = kept.iter().map(|(_, b, _)| *b).sum();
    let each: Vec<String> = kept
        .iter()
        .map(|(name, bytes, at)| format!("{name} {} ({at})", size::format(*bytes)))
        .collect();
    Some(Check::pass(
        "checkpoints",
        format!(
            "{} in {}: {}",
            size::format(total),
            store.dir().join("checkpoints").display(),
            each.join(", ")
        ),
    ))
}
