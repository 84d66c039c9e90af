//! Log sources as streams of whole lines, merged in time order or forwarded to a follower (no engine here: the backends make the streams).

use std::sync::Arc;

use futures_util::stream::{BoxStream, StreamExt};
use tokio::sync::mpsc;

use crate::logs::line::Line;
use crate::util::timefmt::Stamp;

/// Where a line comes from: a container of a stack, or a unit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Source {
    pub module: String,
    /// The compose service or the unit name.
    pub name: String,
    /// `module/service`, or `module` for a host unit.
    pub label: String,
}

/// Which lines of each source: the last `tail`, between `since` and `until`.
/// The times are whole seconds, as the engine and journalctl take them.
#[derive(Copy, Clone, Debug, Default)]
pub(crate) struct Window {
    pub tail: Option<u64>,
    pub since: Option<Stamp>,
    pub until: Option<Stamp>,
}

/// A stream of lines from one source.
pub(crate) type Lines = BoxStream<'static, anyhow::Result<Line>>;

/// A line with its source.
pub(crate) type FromLine = (Arc<Source>, Line);

/// A stream of lines from several sources (the journal), each with its source.
pub(crate) type Tagged = BoxStream<'static, anyhow::Result<FromLine>>;

/// One source's lines, each with the source.
pub(crate) fn tagged(source: Source, lines: Lines) -> Tagged {
    let source = Arc::new(source);
    lines.map(move |l| l.map(|l| (source.clone(), l))).boxed()
}

/// Merges finished streams by time: each is already in order, so a
/// k-way merge keeps one line per stream in memory.
pub(crate) struct Merge {
    sources: Vec<(Tagged, Option<FromLine>)>,
    primed: bool,
}

impl Merge {
    pub(crate) fn new(sources: Vec<Tagged>) -> Merge {
        Merge {
            sources: sources.into_iter().map(|s| (s, None)).collect(),
            primed: false,
        }
    }

    /// The next line in time order, with its source.
    pub(crate) async fn next(&mut self) -> Option<anyhow::Result<FromLine>> {
        if !self.primed {
            self.primed = true;
            for k in (0..self.sources.len()).rev() {
                if let Err(e) = self.refill(k).await {
                    return Some(Err(e));
                }
            }
        }
        let best = self
            .sources
            .iter()
            .enumerate()
            .filter_map(|(k, (_, head))| head.as_ref().map(|(_, l)| (k, l.time)))
            .min_by_key(|&(k, t)| (t, k))
            .map(|(k, _)| k)?;
        let line = self.sources[best].1.take()?;
        if let Err(e) = self.refill(best).await {
            return Some(Err(e));
        }
        Some(Ok(line))
    }

    /// Pulls the next line of source `k`, dropping the source when it ends.
    async fn refill(&mut self, k: usize) -> anyhow::Result<()> {
        match self.sources[k].0.next().await {
            Some(Ok(l)) => self.sources[k].1 = Some(l),
            Some(Err(e)) => return Err(e),
            None => {
                drop(self.sources.remove(k));
            }
        }
        Ok(())
    }
}

/// What reaches the printer while following.
pub(crate) enum Event {
    Line(usize, Line),
    /// A line of a stream that carries its own sources (the journal).
    From(Arc<Source>, Line),
    /// Source `usize` ended (its container stopped or went away).
    Ended(usize),
    /// A source failed; following goes on for the others.
    Problem(String),
    /// A container of a followed project started (created, recreated or restarted).
    Started {
        id: String,
        source: Source,
        /// When it started, to the second.
        at: Stamp,
    },
    /// The engine's event stream ended: the engine went away.
    Lost(crate::error::HalError),
}

/// Forwards a tagged stream's lines into the follow channel (its end is not announced: no
/// container's liveness hangs on it).
pub(crate) fn forward_tagged(mut lines: Tagged, tx: mpsc::Sender<Event>) {
    tokio::spawn(async move {
        while let Some(item) = lines.next().await {
            let ev = match item {
                Ok((s, l)) => Event::From(s, l),
                Err(e) => Event::Problem(crate::error::OneLine(&e).to_string()),
            };
            if tx.send(ev).await.is_err() {
                return;
            }
        }
    });
}

/// Forwards a source's lines into the follow channel. Bounded: a slow reader
/// slows the stream instead of growing memory.
pub(crate) fn forward(idx: usize, mut lines: Lines, tx: mpsc::Sender<Event>) {
    tokio::spawn(async move {
        while let Some(item) = lines.next().await {
            let ev = match item {
                Ok(l) => Event::Line(idx, l),
                // A lost engine is reported once, by the event watcher.
                Err(e) if crate::error::exit_of(&e) == crate::error::Exit::Unreachable => break,
                Err(e) => Event::Problem(crate::error::OneLine(&e).to_string()),
            };
            if tx.send(ev).await.is_err() {
                return;
            }
        }
        let _ = tx.send(Event::Ended(idx)).await;
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::logs::line::Stream;
    use crate::util::timefmt::Stamp;

    fn source(lines: &[(i64, &str)]) -> Lines {
        let lines: Vec<anyhow::Result<Line>> = lines
            .iter()
            .map(|&(secs, m)| {
                Ok(Line {
                    time: Stamp::from_secs(secs),
                    stream: Stream::Stdout,
                    message: m.to_string(),
                })
            })
            .collect();
        futures_util::stream::iter(lines).boxed()
    }

    /// Podman's API gives whole seconds: lines of one second keep each source's
    /// own order, and the sources keep their order between them.
    #[tokio::test]
    async fn equal_times_keep_each_sources_order_and_a_stable_order_between_sources() {
        let named = |n: &str, lines| {
            let src = Source {
                module: "m".into(),
                name: n.into(),
                label: format!("m/{n}"),
            };
            tagged(src, lines)
        };
        let mut merge = Merge::new(vec![
            named("a", source(&[(10, "a1"), (10, "a2"), (11, "a3")])),
            named("b", source(&[(9, "b0"), (10, "b1"), (10, "b2")])),
            named("c", source(&[(10, "c1")])),
        ]);
        let mut got = Vec::new();
        while let Some(item) = merge.next().await {
            got.push(item.unwrap().1.message);
        }
        assert_eq!(got, ["b0", "a1", "a2", "b1", "b2", "c1", "a3"]);
    }
}
