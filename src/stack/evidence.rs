//! A crash's evidence is never destroyed by hal: before a verb removes or recreates a stack's containers, those that exited non-zero, were OOM-killed or are unhealthy leave their exit code, time and last lines in hal's state.

use futures_util::stream::StreamExt;

use crate::docker::engine::{Engine, Listed};
use crate::logs::line::Stream;
use crate::logs::stream::Window;
use crate::module::run_state::{ContainerRun, Health};
use crate::module::status::Detail;
use crate::stack::look::assess::ContainerFacts;
use crate::stack::look::inspects::Inspects;
use crate::stack::one_stack::Stack;
use crate::state::Store;
use crate::state::last_run::{self, KEEP_LINES, KeptLine, Run};
use crate::util::timefmt::Stamp;

/// Whether a container's last run is a failure worth keeping.
pub(crate) fn failed(c: &ContainerFacts) -> bool {
    let ended = matches!(
        c.run,
        Some(ContainerRun::Exited | ContainerRun::Dead | ContainerRun::Restarting)
    );
    (ended && c.exit_code.is_some_and(|x| x != 0))
        || c.oom_killed
        || c.health == Some(Health::Unhealthy)
}

/// Keeps the failed runs of `module`'s containers (of `service` alone when
/// given) before they are removed or recreated.
pub(crate) async fn keep(
    engine: &Engine,
    store: &Store,
    module: &str,
    service: Option<&str>,
) -> anyhow::Result<()> {
    let list = engine.compose_containers(Some(module)).await?;
    keep_of(engine, store, (module, service), list, &Inspects::default()).await
}

/// [`keep`] for the stack's containers as a start or a stop just listed
/// them, inspected through `inspects` (what their snapshot was told already).
pub(crate) async fn keep_listed(
    engine: &Engine,
    store: &Store,
    stack: &Stack<'_>,
    list: &[Listed],
    inspects: &Inspects,
) -> anyhow::Result<()> {
    let of = (stack.name, stack.service);
    keep_of(engine, store, of, list.to_vec(), inspects).await
}

/// `of`: the module, and its one service (`None`: all of it).
async fn keep_of(
    engine: &Engine,
    store: &Store,
    (module, service): (&str, Option<&str>),
    list: Vec<Listed>,
    inspects: &Inspects,
) -> anyhow::Result<()> {
    let facts = crate::stack::look::facts::read_known(engine, list, Detail::Full, inspects).await?;
    let mut runs = Vec::new();
    for c in facts.iter().filter(|c| !c.oneoff && failed(c)) {
        if service.is_some_and(|s| s != c.service) {
            continue;
        }
        runs.push(run_of(engine, c).await);
    }
    if runs.is_empty() {
        return Ok(());
    }
    let store = store.clone();
    let module = module.to_string();
    tokio::task::spawn_blocking(move || last_run::keep(&store, &module, runs))
        .await
        .map_err(anyhow::Error::new)?
        .map_err(|e| e.context("keep the last lines of a failed container"))
}

async fn run_of(engine: &Engine, c: &ContainerFacts) -> Run {
    let w = Window {
        tail: Some(KEEP_LINES as u64),
        ..Window::default()
    };
    let lines: Vec<KeptLine> = crate::stack::logs::container_lines(engine, &c.id, false, w)
        .filter_map(|l| async move { l.ok() })
        .map(|l| KeptLine {
            time: l.time,
            stderr: l.stream == Stream::Stderr,
            message: l.message,
        })
        .collect()
        .await;
    let skip = lines.len().saturating_sub(KEEP_LINES);
    Run {
        service: c.label(),
        container: c.name.clone(),
        container_id: c.id.clone(),
        exit_code: c.exit_code,
        oom_killed: c.oom_killed,
        unhealthy: c.health == Some(Health::Unhealthy),
        at: c.finished_at.unwrap_or_else(|| Stamp::now().whole_second()),
        lines: lines.into_iter().skip(skip).collect(),
    }
}
