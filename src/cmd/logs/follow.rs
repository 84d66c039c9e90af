//! `logs -f`: the backlog, then every source live from where the backlog ended, and the
//! containers that start meanwhile; each line printed once.

use std::collections::HashMap;

use futures_util::stream::BoxStream;
use tokio::sync::mpsc;

use super::sources::{Sources, UnitSource, print_merged};
use crate::cmd::ctx::Ctx;
use crate::logs::stream::{self, Event, Lines, Source, Window};
use crate::output::log_lines::LogLines;
use crate::stack::{LogPlan, Session};
use crate::util::timefmt::Stamp;

/// How many lines may wait for the printer while following.
const FOLLOW_BUFFER: usize = 1024;

/// The sources being followed, by index, and which container feeds which.
struct Followed {
    sources: Vec<Source>,
    /// Container id → index of its live source.
    live: HashMap<String, usize>,
    tx: mpsc::Sender<Event>,
}

impl Followed {
    /// Follows a container from `from`, dropping what came before `cutoff`.
    fn container(
        &mut self,
        session: &Session,
        id: String,
        source: Source,
        from: Window,
        cutoff: Option<Stamp>,
    ) {
        let idx = self.sources.len();
        let mut lines: Lines = session.container_lines(&id, true, from);
        if let Some(c) = cutoff {
            lines = after(lines, c);
        }
        stream::forward(idx, lines, self.tx.clone());
        self.live.insert(id, idx);
        self.sources.push(source);
    }

    /// The journal keeps following a unit across its restarts by itself.
    fn unit(&mut self, u: UnitSource, from: Window, cutoff: Stamp) {
        let lines = after(u.lines(true, from), cutoff);
        stream::forward(self.sources.len(), lines, self.tx.clone());
        self.sources.push(u.source);
    }
}

/// Every source's lines from the window on, as they come, and the lines of
/// containers that start meanwhile; until a signal, the reader leaves, or the engine is lost.
pub(super) async fn follow(
    ctx: &Ctx,
    mut from: Sources,
    window: Window,
    printer: &mut LogLines,
) -> anyhow::Result<()> {
    let (tx, rx) = mpsc::channel::<Event>(FOLLOW_BUFFER);
    let mut on = Followed {
        sources: Vec::new(),
        live: HashMap::new(),
        tx,
    };
    if let Some(session) = &from.session {
        session.watch_starts(from.stacks.clone(), on.tx.clone());
    }
    // The backlog first, merged in time order as without -f; then every
    // source from the second it was read, without what the backlog printed.
    let cutoff = Stamp::now();
    let printed = print_merged(&mut from, window, printer).await?;
    // A line written after `cutoff` but before its source was read is in the
    // backlog already: that source goes on after it.
    let after_printed = move |label: &str| printed.get(label).map_or(cutoff, |t| (*t).max(cutoff));
    let live = Window {
        tail: None,
        since: Some(cutoff.whole_second()),
        until: None,
    };
    let session = from.session.as_ref();
    if let Some(session) = session {
        for (id, source) in from.containers {
            let from_here = after_printed(&source.label);
            on.container(session, id, source, live, Some(from_here));
        }
    }
    let from_history = from.history;
    let journal_after = after_printed.clone();
    let journal = only(from_history.journal_lines(live, true), move |(s, l)| {
        l.time > journal_after(&s.label)
    });
    stream::forward_tagged(journal, on.tx.clone());
    for u in from.units {
        let from_here = after_printed(&u.source.label);
        on.unit(u, live, from_here);
    }
    follow_events(ctx, &mut on, rx, session, &from_history, printer).await
}

/// Prints each followed line as it comes and follows the containers that
/// start meanwhile; until a signal, the reader leaves, or the engine is lost.
async fn follow_events(
    ctx: &Ctx,
    on: &mut Followed,
    mut rx: mpsc::Receiver<Event>,
    session: Option<&Session>,
    from_history: &LogPlan,
    printer: &mut LogLines,
) -> anyhow::Result<()> {
    let stop = crate::util::signals::stop_requested();
    tokio::pin!(stop);
    // The reader of a pipe went away (`| grep -m1 ready`): end now, not at the next line.
    let gone = crate::output::hangup::reader_gone();
    tokio::pin!(gone);
    loop {
        let ev = tokio::select! {
            ev = rx.recv() => ev,
            _ = &mut stop => return Ok(printer.flush()?),
            () = &mut gone => return Ok(()),
        };
        let Some(ev) = ev else {
            return Ok(printer.flush()?);
        };
        match ev {
            Event::Line(i, line) => {
                printer.line(&on.sources[i], &line)?;
                if rx.is_empty() {
                    printer.flush()?;
                }
            }
            Event::From(source, line) => {
                printer.widen(source.label.len());
                printer.line(&source, &line)?;
                if rx.is_empty() {
                    printer.flush()?;
                }
            }
            Event::Ended(i) => {
                on.live.retain(|_, v| *v != i);
            }
            Event::Problem(why) => ctx.ui.warn(&why),
            Event::Lost(why) => {
                printer.flush()?;
                // Following cannot go on without the engine's events: end, and say so.
                return Err(why.into());
            }
            Event::Started { id, source, at } => {
                let Some(session) = session else { continue };
                if on.live.contains_key(&id) || from_history.in_journal(&source.module) {
                    continue;
                }
                // A recreated or restarted container: follow it from its start.
                printer.widen(source.label.len());
                let from = Window {
                    since: Some(at),
                    ..Window::default()
                };
                on.container(session, id, source, from, None);
            }
        }
    }
}

/// Only the lines after `cutoff` (the backlog printed the others).
fn after(lines: Lines, cutoff: Stamp) -> Lines {
    only(lines, move |l| l.time > cutoff)
}

/// The items `keep` takes, and every error (an error is never the backlog's).
fn only<T: Send + 'static>(
    items: BoxStream<'static, anyhow::Result<T>>,
    keep: impl Fn(&T) -> bool + Send + 'static,
) -> BoxStream<'static, anyhow::Result<T>> {
    use futures_util::stream::StreamExt;
    items
        .filter(move |i| std::future::ready(i.as_ref().map_or(true, &keep)))
        .boxed()
}
