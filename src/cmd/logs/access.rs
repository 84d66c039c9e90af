//! A logs command whose user may not read the system journal: said once, with the fix,
//! and an error when nothing asked for could be read at all.

use crate::cmd::ctx::Ctx;

use super::Sources;

/// Says which modules' lines this user cannot see (system units, and stacks
/// whose history the journal keeps) when the system journal is closed to
/// them: once on stderr when other lines can still be shown (the answer is
/// partial; the exit stays 0), an error (exit 1) when none can.
pub(super) fn check(ctx: &Ctx, sources: &Sources) -> anyhow::Result<()> {
    let (blind, seen) = split(sources);
    if blind.is_empty() || crate::logs::access::system_journal_readable() != Some(false) {
        return Ok(());
    }
    let words = format!(
        "logs {}: {}",
        blind.join(", "),
        crate::logs::access::denied()
    );
    if !seen {
        anyhow::bail!(words);
    }
    ctx.ui.problem(&words);
    Ok(())
}

/// The modules read from the system journal alone, and whether any source
/// is read elsewhere (the engine, a user's own journal, hal's kept lines).
fn split(sources: &Sources) -> (Vec<String>, bool) {
    let mut blind: Vec<String> = Vec::new();
    let mut seen = !sources.kept.is_empty();
    for u in &sources.units {
        if u.in_system_journal {
            blind.push(u.source.module.clone());
        } else {
            seen = true;
        }
    }
    for t in &sources.stacks {
        if sources.history.in_journal(&t.module.name) {
            blind.push(t.module.name.clone());
        } else {
            seen = true;
        }
    }
    blind.sort();
    blind.dedup();
    (blind, seen)
}
