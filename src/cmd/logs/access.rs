//! A logs command whose user may not read the system journal: said once, with the fix,
//! and an error when nothing asked for could be read at all.

use crate::cmd::ctx::Ctx;

/// Says which modules' lines this user cannot see when the system journal is
/// closed to them: `journal_only`, the modules whose lines are there alone
/// (system units, stacks whose history the journal keeps); `elsewhere`,
/// whether any source is read from somewhere else (the engine, the user's
/// own journal, hal's kept lines). Once on stderr when other lines can still
/// be shown (the answer is partial; the exit stays 0), an error (exit 1) when
/// none can.
pub(super) fn check(
    ctx: &Ctx,
    mut journal_only: Vec<String>,
    elsewhere: bool,
) -> anyhow::Result<()> {
    if journal_only.is_empty() || crate::logs::access::system_journal_readable() != Some(false) {
        return Ok(());
    }
    journal_only.sort();
    journal_only.dedup();
    let words = format!(
        "logs {}: {}",
        journal_only.join(", "),
        crate::logs::access::denied()
    );
    if !elsewhere {
        anyhow::bail!(words);
    }
    ctx.ui.problem(&words);
    Ok(())
}
