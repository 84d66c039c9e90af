//! A stack's log sources: a container's frames as whole lines, and the containers that start while logs are followed.

pub(crate) mod history;
pub(crate) mod log_plan;

use std::time::Duration;

use futures_util::stream::StreamExt;
use tokio::sync::mpsc;

use crate::docker::engine::{Engine, EngineError, EventAction};
use crate::docker::labels::Identity;
use crate::error::HalError;
use crate::logs::line::Assembler;
use crate::logs::stream::{Event, Lines, Source, Window};
use crate::module::target::Target;
use crate::util::timefmt::Stamp;

/// Turns a container's raw frames into whole lines.
pub(crate) fn container_lines(engine: &Engine, id: &str, follow: bool, w: Window) -> Lines {
    let frames = engine.logs(id, follow, w.tail, w.since, w.until);
    let state = (
        frames,
        Assembler::default(),
        std::collections::VecDeque::new(),
        false,
    );
    futures_util::stream::unfold(
        state,
        |(mut frames, mut asm, mut queue, mut done)| async move {
            loop {
                if let Some(line) = queue.pop_front() {
                    return Some((Ok(line), (frames, asm, queue, done)));
                }
                if done {
                    return None;
                }
                match frames.next().await {
                    Some(Ok(chunk)) => {
                        asm.push_into(chunk.stream, &chunk.bytes, &mut queue);
                    }
                    Some(Err(e)) => {
                        done = true;
                        let err = anyhow::Error::from(e);
                        return Some((Err(err), (frames, asm, queue, done)));
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

/// The last lines of a container's current (or last) run alone: a crash loop's
/// earlier runs said the same, and each line is shown once.
pub(crate) async fn this_run(
    engine: &Engine,
    c: &crate::stack::look::assess::ContainerFacts,
    n: u64,
) -> Vec<String> {
    use futures_util::stream::StreamExt;
    // The engine stamps StartedAt once the process runs: its first words may
    // come a little earlier. Docker waits 100 ms at least before a restart, so
    // a margin of half that never reaches the run before.
    let started = c.started_at.map(before_start);
    let w = crate::logs::stream::Window {
        tail: Some(n * 20),
        since: started.map(|s| s.whole_second().minus(Duration::from_secs(1))),
        until: None,
    };
    let lines: Vec<crate::logs::line::Line> = container_lines(engine, &c.id, false, w)
        .filter_map(|l| async move { l.ok() })
        .filter(|l| std::future::ready(started.is_none_or(|s| l.time >= s)))
        .collect()
        .await;
    // A crash loop may have begun its next run since `c` was read: that run's
    // lines are not this one's (its start is asked for after they were read,
    // so a run that began while they were read is cut off too).
    let next = match c.started_at {
        Some(ours) => next_start(engine, &c.id).await.filter(|s| *s > ours),
        None => None,
    };
    let lines: Vec<String> = lines
        .into_iter()
        .filter(|l| next.is_none_or(|s| l.time < before_start(s)))
        .map(|l| l.message)
        .collect();
    let skip = lines
        .len()
        .saturating_sub(usize::try_from(n).unwrap_or(usize::MAX));
    lines.into_iter().skip(skip).collect()
}

/// A run's start less the margin its first words may come before it.
fn before_start(s: Stamp) -> Stamp {
    Stamp::from_micros(s.secs() * 1_000_000 + i64::from(s.nanos() / 1000) - 50_000)
}

/// When the container's current run started, as the engine says now (none
/// when it cannot say: then nothing is cut).
async fn next_start(engine: &Engine, id: &str) -> Option<Stamp> {
    let i = engine.inspect(id).await.ok().flatten()?;
    i.started_at
}

/// The log source a compose container's labels describe, if it is a
/// long-running container (not a one-off `run`) of one of `wanted`: a whole
/// project, or one service of it.
pub(crate) fn source_of(
    labels: &std::collections::HashMap<String, String>,
    wanted: &[Target],
) -> Option<Source> {
    let who = Identity::of(labels)?;
    let mine = |t: &Target| {
        t.module.name == who.project && t.service.as_ref().is_none_or(|s| *s == who.service)
    };
    if who.oneoff || !wanted.iter().any(mine) {
        return None;
    }
    let name = who.replica_name();
    Some(Source {
        label: format!("{}/{name}", who.project),
        module: who.project,
        name,
    })
}

/// Announces every container start of the given projects (or services).
pub(crate) fn watch_starts(engine: Engine, projects: Vec<Target>, tx: mpsc::Sender<Event>) {
    tokio::spawn(async move {
        let since = Stamp::now().whole_second();
        let mut events = engine.container_events(Some(since));
        let why = loop {
            let ev = match events.next().await {
                Some(Ok(ev)) => ev,
                // Its endpoint is said once, by the error below.
                Some(Err(EngineError::Unreachable(HalError::DockerUnreachable {
                    why, ..
                }))) => {
                    break why;
                }
                Some(Err(e)) => break crate::error::OneLine(&anyhow::Error::from(e)).to_string(),
                None => break "the event stream ended".to_string(),
            };
            if ev.action != EventAction::Start {
                continue;
            }
            let Some(id) = ev.id else { continue };
            let Some(source) = source_of(&ev.attributes, &projects) else {
                continue;
            };
            let at = ev.at.whole_second();
            if tx.send(Event::Started { id, source, at }).await.is_err() {
                return;
            }
        };
        let lost = HalError::DockerUnreachable {
            endpoint: engine.endpoint.clone(),
            why: format!("lost while following logs: {why}"),
        };
        let _ = tx.send(Event::Lost(lost)).await;
    });
}
