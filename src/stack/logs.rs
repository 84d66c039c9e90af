//! A stack's log sources: a container's frames as whole lines, and the containers that start while logs are followed.

use futures_util::stream::StreamExt;
use tokio::sync::mpsc;

use crate::logs::line::{Assembler, Stream};
use crate::logs::stream::{Event, Lines, Source, Window};
use crate::module::target::Target;
use crate::stack::engine::Engine;
use crate::stack::labels::Identity;

/// Turns a container's raw frames into whole lines.
pub fn container_lines(engine: &Engine, id: &str, follow: bool, w: Window) -> Lines {
    let frames = engine.logs(id, follow, w.tail, w.since, w.until);
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

/// The log source a compose container's labels describe, if it is a
/// long-running container (not a one-off `run`) of one of `wanted`: a whole
/// project, or one service of it.
pub fn source_of(
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
pub fn watch_starts(engine: Engine, projects: Vec<Target>, tx: mpsc::Sender<Event>) {
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
