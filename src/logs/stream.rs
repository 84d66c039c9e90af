//! Log sources as streams of whole lines, merged in time order, or followed live across container re-creation.

use futures_util::stream::{BoxStream, StreamExt};
use tokio::sync::mpsc;

use crate::logs::line::{Assembler, Line, Stream};
use crate::stack::engine::{Engine, PROJECT_LABEL, SERVICE_LABEL};

/// Where a line comes from: a container of a stack, or a unit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Source {
    pub module: String,
    /// The compose service or the unit name.
    pub name: String,
    /// `module/service`, or `module` for a host unit.
    pub label: String,
}

/// A stream of lines from one source.
pub type Lines = BoxStream<'static, anyhow::Result<Line>>;

/// Turns a container's raw frames into whole lines.
pub fn container_lines(
    engine: &Engine,
    id: &str,
    follow: bool,
    tail: Option<u64>,
    since: Option<i64>,
) -> Lines {
    let frames = engine.logs(id, follow, tail, since);
    let state = (
        frames,
        Assembler::default(),
        std::collections::VecDeque::new(),
        false,
        engine.clone(),
    );
    futures_util::stream::unfold(
        state,
        |(mut frames, mut asm, mut queue, mut done, engine)| async move {
            loop {
                if let Some(line) = queue.pop_front() {
                    return Some((Ok(line), (frames, asm, queue, done, engine)));
                }
                if done {
                    return None;
                }
                match frames.next().await {
                    Some(Ok(frame)) => {
                        let stream = match frame {
                            bollard::container::LogOutput::StdErr { .. } => Stream::Stderr,
                            _ => Stream::Stdout,
                        };
                        asm.push_into(stream, frame.as_ref(), &mut queue);
                    }
                    Some(Err(e)) => {
                        done = true;
                        let err = engine.fail(e);
                        return Some((Err(err), (frames, asm, queue, done, engine)));
                    }
                    None => {
                        done = true;
                        queue.extend(asm.finish());
                    }
                }
            }
        },
    )
    .boxed()
}

/// Merges finished sources by time: each source is already in order, so a
/// k-way merge keeps one line per source in memory.
pub struct Merge {
    sources: Vec<(usize, Lines, Option<Line>)>,
    primed: bool,
}

impl Merge {
    pub fn new(sources: Vec<(usize, Lines)>) -> Merge {
        Merge {
            sources: sources.into_iter().map(|(i, s)| (i, s, None)).collect(),
            primed: false,
        }
    }

    /// The next line in time order, with the index of its source.
    pub async fn next(&mut self) -> Option<anyhow::Result<(usize, Line)>> {
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
            .filter_map(|(k, (_, _, head))| head.as_ref().map(|l| (k, l.time)))
            .min_by_key(|&(k, t)| (t, k))
            .map(|(k, _)| k)?;
        let (idx, _, head) = &mut self.sources[best];
        let idx = *idx;
        let line = head.take()?;
        if let Err(e) = self.refill(best).await {
            return Some(Err(e));
        }
        Some(Ok((idx, line)))
    }

    /// Pulls the next line of source `k`, dropping the source when it ends.
    async fn refill(&mut self, k: usize) -> anyhow::Result<()> {
        match self.sources[k].1.next().await {
            Some(Ok(l)) => self.sources[k].2 = Some(l),
            Some(Err(e)) => return Err(e),
            None => {
                drop(self.sources.remove(k));
            }
        }
        Ok(())
    }
}

/// What reaches the printer while following.
pub enum Event {
    Line(usize, Line),
    /// Source `usize` ended (its container stopped or went away).
    Ended(usize),
    /// A source failed; following goes on for the others.
    Problem(String),
    /// A container of a followed project started (created, recreated or restarted).
    Started {
        id: String,
        source: Source,
        at: i64,
    },
    /// The engine's event stream ended: the engine went away.
    Lost(crate::error::HalError),
}

/// Forwards a source's lines into the follow channel. Bounded: a slow reader
/// slows the stream instead of growing memory.
pub fn forward(idx: usize, mut lines: Lines, tx: mpsc::Sender<Event>) {
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

/// The log source a compose container's labels describe, if it is a
/// long-running container of one of `projects` (not a one-off `run`).
pub fn source_of(
    labels: &std::collections::HashMap<String, String>,
    projects: &[String],
) -> Option<Source> {
    let project = labels.get(PROJECT_LABEL)?;
    let oneoff = labels
        .get("com.docker.compose.oneoff")
        .is_some_and(|v| v.eq_ignore_ascii_case("true"));
    if oneoff || !projects.contains(project) {
        return None;
    }
    let service = labels.get(SERVICE_LABEL).cloned().unwrap_or_default();
    let number = labels
        .get("com.docker.compose.container-number")
        .and_then(|n| n.parse::<u32>().ok())
        .unwrap_or(1);
    let name = if number > 1 {
        format!("{service}-{number}")
    } else {
        service
    };
    Some(Source {
        module: project.clone(),
        label: format!("{project}/{name}"),
        name,
    })
}

/// Announces every container start of the given projects.
pub fn watch_starts(engine: Engine, projects: Vec<String>, tx: mpsc::Sender<Event>) {
    tokio::spawn(async move {
        let since = crate::util::timefmt::Stamp::now().secs;
        let mut events = engine.container_events(Some(since));
        let why = loop {
            let ev = match events.next().await {
                Some(Ok(ev)) => ev,
                Some(Err(e)) => break crate::error::OneLine(&anyhow::Error::new(e)).to_string(),
                None => break "the event stream ended".to_string(),
            };
            if ev.action.as_deref() != Some("start") {
                continue;
            }
            let Some(actor) = ev.actor else { continue };
            let (Some(id), Some(attrs)) = (actor.id, actor.attributes) else {
                continue;
            };
            let Some(source) = source_of(&attrs, &projects) else {
                continue;
            };
            let at = ev
                .time
                .unwrap_or_else(|| crate::util::timefmt::Stamp::now().secs);
            if tx.send(Event::Started { id, source, at }).await.is_err() {
                return;
            }
        };
        let lost = crate::error::HalError::DockerUnreachable {
            endpoint: engine.endpoint.clone(),
            why: format!("lost while following logs: {why}"),
        };
        let _ = tx.send(Event::Lost(lost)).await;
    });
}
