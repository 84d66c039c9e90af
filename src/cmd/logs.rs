//! `hal module logs`: one stream for any mix of modules, prefixed, merged in time order, or followed.

use std::collections::HashMap;
use std::io;

use tokio::sync::mpsc;

use crate::cli::LogsArgs;
use crate::cmd::ctx::Ctx;
use crate::error::{Exit, HalError};
use crate::logs::stream::{self, Event, Lines, Merge, Source, Window};
use crate::module::Kind;
use crate::module::target::Target;
use crate::output::log_lines::Printer;
use crate::stack::engine::Engine;
use crate::stack::logs as stack_logs;
use crate::util::timefmt::Stamp;
use crate::util::tz::Zone;
use crate::util::when;

/// How many lines may wait for the printer while following.
const FOLLOW_BUFFER: usize = 1024;

pub async fn run(ctx: &Ctx, a: LogsArgs) -> anyhow::Result<Exit> {
    // No module named: every module, as `docker compose logs` does for services.
    let targets = ctx.node.targets(&a.modules, a.modules.is_empty())?;
    crate::run::check_services(&ctx.node, &targets).await?;
    let now = Stamp::now();
    let when = |text: &Option<String>| {
        text.as_deref()
            .map(|t| when::parse(t, now, Zone::local).map(|s| s.secs))
            .transpose()
            .map_err(HalError::Usage)
    };
    let window = Window {
        tail: a.tail.and_then(|t| t.0),
        since: when(&a.since)?,
        until: when(&a.until)?,
    };
    let mut stacks = Vec::new();
    let mut hosts = Vec::new();
    for t in &targets {
        let m = &t.module;
        match &m.kind {
            Kind::Stack { .. } => stacks.push(t.clone()),
            Kind::Host { unit, scope } => hosts.push((m.name.clone(), unit.clone(), *scope)),
            Kind::Invalid { .. } => m.usable()?,
        }
    }
    // A timer module's journal is the timer's and the job's it starts.
    let units: Vec<UnitSource> = crate::host::log_units(&ctx.node.hosts, &hosts)
        .await
        .into_iter()
        .map(|u| UnitSource {
            init: ctx.node.hosts.init(u.scope),
            pid: u.pid,
            source: Source {
                label: u.module.clone(),
                module: u.module,
                name: u.unit.clone(),
            },
            unit: u.unit,
        })
        .collect();
    // Docker is asked only when a stack is involved: unit logs need no engine.
    let engine = if stacks.is_empty() {
        None
    } else {
        Some(ctx.node.stacks.engine().await?)
    };
    let containers = match &engine {
        Some(e) => containers_of(e, &stacks).await?,
        None => Vec::new(),
    };
    let width = containers
        .iter()
        .map(|(_, s)| &s.label)
        .chain(units.iter().map(|u| &u.source.label))
        .map(String::len)
        .max()
        .unwrap_or(0);
    let mut printer = Printer::new(&ctx.ui, !a.no_prefix, a.timestamps, width);
    let result = if a.follow {
        follow(
            ctx,
            engine.as_ref(),
            containers,
            units,
            stacks,
            window,
            &mut printer,
        )
        .await
    } else {
        let mut sources = Vec::new();
        let mut streams = Vec::new();
        if let Some(engine) = &engine {
            for (id, source) in containers {
                streams.push((
                    sources.len(),
                    stack_logs::container_lines(engine, &id, false, window),
                ));
                sources.push(source);
            }
        }
        for u in units {
            streams.push((sources.len(), u.lines(false, window)));
            sources.push(u.source);
        }
        let mut merge = Merge::new(streams);
        let mut r = Ok(());
        while let Some(item) = merge.next().await {
            let (i, line) = item?;
            r = printer.line(&sources[i], &line);
            if r.is_err() {
                break;
            }
        }
        r.and_then(|()| printer.flush()).map_err(anyhow::Error::new)
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

/// A host module's unit as a log source (its journal).
struct UnitSource {
    unit: String,
    init: std::sync::Arc<dyn crate::host::init::Init>,
    /// The main process of its last run, whose lines the journal may have filed under no unit.
    pid: Option<u32>,
    source: Source,
}

impl UnitSource {
    fn lines(&self, follow: bool, w: Window) -> Lines {
        let q = crate::host::init::JournalQuery {
            follow,
            tail: w.tail,
            since: w.since,
            until: w.until,
            pid: self.pid,
        };
        crate::host::journal(&*self.init, &self.unit, q)
    }
}

/// The non-one-off containers of the given projects or services (one list
/// call), ordered by module and service.
async fn containers_of(
    engine: &Engine,
    projects: &[Target],
) -> anyhow::Result<Vec<(String, Source)>> {
    let first = projects.first().map(|t| t.module.name.as_str());
    let single = first.filter(|f| projects.iter().all(|t| t.module.name == *f));
    let list = engine.compose_containers(single).await?;
    let mut out = Vec::new();
    for c in list {
        let labels = c.labels.unwrap_or_default();
        if let Some(source) = stack_logs::source_of(&labels, projects) {
            out.push((c.id.unwrap_or_default(), source));
        }
    }
    out.sort_by(|a, b| a.1.label.cmp(&b.1.label));
    Ok(out)
}

#[allow(clippy::too_many_arguments)]
async fn follow(
    ctx: &Ctx,
    engine: Option<&Engine>,
    containers: Vec<(String, Source)>,
    units: Vec<UnitSource>,
    projects: Vec<Target>,
    window: Window,
    printer: &mut Printer,
) -> anyhow::Result<()> {
    let (tx, mut rx) = mpsc::channel::<Event>(FOLLOW_BUFFER);
    let mut sources: Vec<Source> = Vec::new();
    // Container id → index of its live source.
    let mut live: HashMap<String, usize> = HashMap::new();
    if let Some(engine) = engine {
        stack_logs::watch_starts(engine.clone(), projects, tx.clone());
        for (id, source) in containers {
            let idx = sources.len();
            let lines: Lines = stack_logs::container_lines(engine, &id, true, window);
            stream::forward(idx, lines, tx.clone());
            live.insert(id.clone(), idx);
            sources.push(source);
        }
    }
    // The journal keeps following a unit across its restarts by itself.
    for u in units {
        stream::forward(sources.len(), u.lines(true, window), tx.clone());
        sources.push(u.source);
    }
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
                printer.line(&sources[i], &line)?;
                if rx.is_empty() {
                    printer.flush()?;
                }
            }
            Event::Ended(i) => {
                live.retain(|_, v| *v != i);
            }
            Event::Problem(why) => ctx.ui.warn(&why),
            Event::Lost(why) => {
                printer.flush()?;
                // Following cannot go on without the engine's events: end, and say so.
                return Err(why.into());
            }
            Event::Started { id, source, at } => {
                let Some(engine) = engine else { continue };
                if live.contains_key(&id) {
                    continue;
                }
                // A recreated or restarted container: follow it from its start.
                let idx = sources.len();
                printer.widen(source.label.len());
                let from = Window {
                    since: Some(at),
                    ..Window::default()
                };
                let lines = stack_logs::container_lines(engine, &id, true, from);
                stream::forward(idx, lines, tx.clone());
                live.insert(id.clone(), idx);
                sources.push(source);
            }
        }
    }
}
