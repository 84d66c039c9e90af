//! `hal module logs`: one stream for any mix of modules, prefixed, merged in time order, or followed.

use std::io;

use crate::cli::LogsArgs;
use crate::cmd::ctx::Ctx;
use crate::error::{Exit, HalError};
use crate::logs::stream::Window;
use crate::output::log_lines::LogLines;
use crate::util::timefmt::Stamp;
use crate::util::tz::Zone;
use crate::util::when;

mod access;
mod follow;
mod sources;

use sources::{Sources, print_merged, sources};

pub(crate) async fn run(ctx: &Ctx, a: LogsArgs) -> anyhow::Result<Exit> {
    // No module named: every module, as `docker compose logs` does for services.
    let targets = ctx.node.targets(&a.modules, a.modules.is_empty())?;
    crate::run::check_services(&ctx.node, &targets).await?;
    let window = window(&a)?;
    let sources = sources(ctx, &targets, window).await?;
    let (journal_only, elsewhere) = sources.journal_only();
    access::check(ctx, journal_only, elsewhere)?;
    note_cut(ctx, &sources, window);
    let mut printer = LogLines::new(&ctx.ui, !a.no_prefix, a.timestamps, sources.width());
    let result = if a.follow {
        follow::follow(ctx, sources, window, &mut printer).await
    } else {
        one_shot(sources, window, &mut printer).await
    };
    match result {
        Ok(()) => Ok(Exit::Ok),
        Err(e) => match e.downcast_ref::<io::Error>().map(io::Error::kind) {
            // The reader went away (`hal module logs x | head`): that is a clean end.
            Some(io::ErrorKind::BrokenPipe) => Ok(Exit::Ok),
            Some(_) => Err(e.context("write logs")),
            None => Err(e),
        },
    }
}

/// `--tail`, `--since` and `--until`, the times read in the local zone (to the second).
fn window(a: &LogsArgs) -> anyhow::Result<Window> {
    let now = Stamp::now();
    let when = |text: &Option<String>| {
        text.as_deref()
            .map(|t| when::parse(t, now, Zone::local).map(Stamp::whole_second))
            .transpose()
            .map_err(|e| HalError::Usage(e.to_string()))
    };
    Ok(Window {
        tail: a.tail.and_then(|t| t.0),
        since: when(&a.since)?,
        until: when(&a.until)?,
    })
}

/// Says once where the history of a module whose engine keeps logs per
/// container ends, when the window reaches before it.
/// A module read in the journal by the ids of the containers hal saw is cut
/// where hal's ledger of it begins.
fn note_cut(ctx: &Ctx, sources: &Sources, window: Window) {
    let list = |cut: Vec<(String, Stamp)>| {
        let each: Vec<String> = cut
            .iter()
            .map(|(m, t)| format!("{m} before {}", t.rfc3339_trimmed()))
            .collect();
        each.join(", ")
    };
    let cut = sources.history.cut(window);
    if !cut.is_empty() {
        ctx.ui.note(&format!(
            "lines of {} are not kept: the engine keeps logs per container and drops them with it (`hal doctor` says how to keep history)",
            list(cut)
        ));
    }
    let unseen = sources.history.unseen_cut(window);
    if !unseen.is_empty() {
        ctx.ui.note(&format!(
            "lines of {} are not found: its services log to the journal without the compose labels, and hal reads only the containers it saw (`hal doctor` says how to keep history)",
            list(unseen)
        ));
    }
}

/// Every source's lines in the window, merged in time order.
async fn one_shot(
    mut sources: Sources,
    window: Window,
    printer: &mut LogLines,
) -> anyhow::Result<()> {
    print_merged(&mut sources, window, printer).await.map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_is_read_to_the_second() {
        let a = LogsArgs {
            modules: Vec::new(),
            follow: false,
            tail: None,
            since: Some("@1700000000.75".into()),
            until: Some("2026-01-01T03:12:00.25Z".into()),
            timestamps: false,
            no_prefix: false,
        };
        let w = window(&a).unwrap();
        assert_eq!(w.since, Some(Stamp::from_secs(1_700_000_000)));
        let until = w.until.map(Stamp::rfc3339_trimmed);
        assert_eq!(until.as_deref(), Some("2026-01-01T03:12:00Z"));
    }
}
