//! `hal module logs`: one stream for any mix of modules, prefixed, merged in time order, or followed.

use std::collections::HashMap;
use std::io;

use tokio::sync::mpsc;

use crate::cli::LogsArgs;
use crate::cmd::ctx::Ctx;
use crate::error::{Exit, HalError};
use crate::logs::stream::{self, Event, Lines, Merge, Source, Tagged, Window};
use crate::module::Kind;
use crate::module::target::Target;
use crate::output::log_lines::Printer;
use crate::stack::engine::Engine;
use crate::stack::log_plan::{self, Plan};
use crate::stack::logs as stack_logs;
use crate::util::timefmt::Stamp;
use crate::util::tz::Zone;
use crate::util::when;

mod access;

/// How many lines may wait for the printer while following.
const FOLLOW_BUFFER: usize = 1024;

pub(crate) async fn run(ctx: &Ctx, a: LogsArgs) -> anyhow::Result<Exit> {
    // No module named: every module, as `docker compose logs` does for services.
    let targets = ctx.node.targets(&a.modules, a.modules.is_empty())?;
    crate::run::check_services(&ctx.node, &targets).await?;
    let window = window(&a)?;
    let sources = sources(ctx, &targets, window).await?;
    let (journal_only, elsewhere) = sources.journal_only();
    access::check(ctx, journal_only, elsewhere)?;
    note_cut(ctx, &sources, window);
    let mut printer = Printer::new(&ctx.ui, !a.no_prefix, a.timestamps, sources.width());
    let result = if a.follow {
        follow(ctx, sources, window, &mut printer).await
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

/// `--tail`, `--since` and `--until`, the times read in the local zone.
fn window(a: &LogsArgs) -> anyhow::Result<Window> {
    let now = Stamp::now();
    let when = |text: &Option<String>| {
        text.as_deref()
            .map(|t| when::parse(t, now, Zone::local).map(|s| s.secs))
            .transpose()
            .map_err(HalError::Usage)
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
    let at = |secs: i64| Stamp { secs, nanos: 0 }.rfc3339_trimmed();
    let list = |cut: Vec<(String, i64)>| {
        let each: Vec<String> = cut
            .iter()
            .map(|(m, t)| format!("{m} before {}", at(*t)))
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

/// What a logs command reads: the stacks' containers (with the engine they
/// are on) and the host modules' units.
struct Sources {
    /// Asked only when a stack is involved: unit logs need no engine.
    engine: Option<Engine>,
    /// Container id and log source (the engine keeps their lines), ordered by label.
    containers: Vec<(String, Source)>,
    /// Which stacks' lines the journal keeps, and which the engine.
    history: Plan,
    /// The kept lines of failed runs whose containers are gone.
    kept: Vec<Tagged>,
    units: Vec<UnitSource>,
    /// The stack targets, whose new containers a follow picks up.
    stacks: Vec<Target>,
}

impl Sources {
    /// The modules read from the system journal alone (system units, stacks
    /// whose history is there), and whether any source is read elsewhere.
    fn journal_only(&self) -> (Vec<String>, bool) {
        let (mut only, mut elsewhere) = (Vec::new(), !self.kept.is_empty());
        for u in &self.units {
            if u.in_system_journal {
                only.push(u.source.module.clone());
            } else {
                elsewhere = true;
            }
        }
        for t in &self.stacks {
            if self.history.in_journal(&t.module.name) {
                only.push(t.module.name.clone());
            } else {
                elsewhere = true;
            }
        }
        (only, elsewhere)
    }

    /// The widest label (the prefix column).
    fn width(&self) -> usize {
        self.containers
            .iter()
            .map(|(_, s)| &s.label)
            .chain(self.units.iter().map(|u| &u.source.label))
            .map(String::len)
            .max()
            .unwrap_or(0)
    }
}

/// The containers and units of the targets; an invalid module is an error.
async fn sources(ctx: &Ctx, targets: &[Target], window: Window) -> anyhow::Result<Sources> {
    let mut stacks = Vec::new();
    let mut hosts = Vec::new();
    for t in targets {
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
            in_system_journal: u.scope == crate::module::config::Scope::System,
            pid: u.pid,
            source: Source {
                label: u.module.clone(),
                module: u.module,
                name: u.unit.clone(),
            },
            unit: u.unit,
        })
        .collect();
    let engine = if stacks.is_empty() {
        None
    } else {
        Some(ctx.node.stacks.engine().await?)
    };
    let history = match &engine {
        Some(e) => log_plan::plan(e, &ctx.node.store, &stacks).await?,
        None => Plan::default(),
    };
    let mut containers: Vec<(String, Source)> = history
        .engine
        .iter()
        .map(|(id, s, _)| (id.clone(), s.clone()))
        .collect();
    containers.sort_by(|a, b| a.1.label.cmp(&b.1.label));
    let kept = kept_runs(ctx, &stacks, &history, &containers, window);
    Ok(Sources {
        engine,
        containers,
        history,
        kept,
        units,
        stacks,
    })
}

/// The lines hal kept of failed runs (`state::last_run`) of containers that
/// are gone, each run closed by a line that says how it ended; none for a
/// module whose history the journal holds.
fn kept_runs(
    ctx: &Ctx,
    stacks: &[Target],
    history: &Plan,
    live: &[(String, Source)],
    window: Window,
) -> Vec<Tagged> {
    let mut out = Vec::new();
    for t in stacks {
        let m = &t.module.name;
        if history.in_journal(m) {
            continue;
        }
        for run in crate::state::last_run::read(ctx.node.store.dir(), m).runs {
            let gone = !live.iter().any(|(id, _)| *id == run.container_id);
            // The journal has its lines already: each once.
            if !gone
                || history.reads_by_id(&run.container_id)
                || t.service.as_ref().is_some_and(|s| *s != run.service)
            {
                continue;
            }
            out.push(kept_lines(m, run, window));
        }
    }
    out
}

fn kept_lines(module: &str, run: crate::state::last_run::Run, w: Window) -> Tagged {
    use crate::logs::line::{Line, Stream};
    use crate::util::timefmt;
    use futures_util::stream::StreamExt;
    let source = Source {
        module: module.to_string(),
        name: run.service.clone(),
        label: format!("{module}/{}", run.service),
    };
    let end = timefmt::parse(&run.at).unwrap_or_else(Stamp::now);
    let mut lines: Vec<Line> = run
        .lines
        .iter()
        .map(|k| Line {
            time: timefmt::parse(&k.time).unwrap_or(end),
            stream: if k.stderr {
                Stream::Stderr
            } else {
                Stream::Stdout
            },
            message: k.message.clone(),
        })
        .collect();
    lines.push(Line {
        time: end.max(lines.last().map_or(end, |l| l.time)),
        stream: Stream::Stderr,
        message: format!("(hal) container {} ended: {}", run.container, run.how()),
    });
    lines.retain(|l| {
        w.since.is_none_or(|s| l.time.secs >= s) && w.until.is_none_or(|u| l.time.secs < u)
    });
    let skip = w.tail.map_or(0, |n| {
        lines
            .len()
            .saturating_sub(usize::try_from(n).unwrap_or(usize::MAX))
    });
    let items: Vec<anyhow::Result<Line>> = lines.into_iter().skip(skip).map(Ok).collect();
    stream::tagged(source, futures_util::stream::iter(items).boxed())
}

/// Every source's lines in the window, merged in time order.
async fn one_shot(
    mut sources: Sources,
    window: Window,
    printer: &mut Printer,
) -> anyhow::Result<()> {
    print_merged(&mut sources, window, printer).await
}

/// Every source's lines in the window, merged in time order and printed; the
/// kept lines of failed runs are taken out of `sources`.
async fn print_merged(
    sources: &mut Sources,
    window: Window,
    printer: &mut Printer,
) -> anyhow::Result<()> {
    let mut streams: Vec<Tagged> = Vec::new();
    if let Some(engine) = &sources.engine {
        for (id, source) in &sources.containers {
            let lines = stack_logs::container_lines(engine, id, false, window);
            streams.push(stream::tagged(source.clone(), lines));
        }
    }
    streams.push(sources.history.journal_lines(window, false));
    streams.append(&mut sources.kept);
    for u in &sources.units {
        streams.push(stream::tagged(u.source.clone(), u.lines(false, window)));
    }
    let mut merge = Merge::new(streams);
    let mut r = Ok(());
    while let Some(item) = merge.next().await {
        let (source, line) = item?;
        printer.widen(source.label.len());
        r = printer.line(&source, &line);
        if r.is_err() {
            break;
        }
    }
    r.and_then(|()| printer.flush()).map_err(anyhow::Error::new)
}

/// Only the lines after `cutoff` (the backlog printed the others).
fn after(lines: Lines, cutoff: Stamp) -> Lines {
    use futures_util::stream::StreamExt;
    lines
        .filter(move |l| std::future::ready(l.as_ref().map_or(true, |l| l.time > cutoff)))
        .boxed()
}

/// A host module's unit as a log source (its journal).
struct UnitSource {
    unit: String,
    init: std::sync::Arc<dyn crate::host::init::Init>,
    /// A system unit: its lines are in the system journal.
    in_system_journal: bool,
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
        engine: &Engine,
        id: String,
        source: Source,
        from: Window,
        cutoff: Option<Stamp>,
    ) {
        let idx = self.sources.len();
        let mut lines: Lines = stack_logs::container_lines(engine, &id, true, from);
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
async fn follow(
    ctx: &Ctx,
    mut from: Sources,
    window: Window,
    printer: &mut Printer,
) -> anyhow::Result<()> {
    let (tx, rx) = mpsc::channel::<Event>(FOLLOW_BUFFER);
    let mut on = Followed {
        sources: Vec::new(),
        live: HashMap::new(),
        tx,
    };
    if let Some(engine) = &from.engine {
        stack_logs::watch_starts(engine.clone(), from.stacks.clone(), on.tx.clone());
    }
    // The backlog first, merged in time order as without -f; then every
    // source from the second it was read, without what the backlog printed.
    let cutoff = Stamp::now();
    print_merged(&mut from, window, printer).await?;
    let live = Window {
        tail: None,
        since: Some(cutoff.secs),
        until: None,
    };
    let engine = from.engine.as_ref();
    if let Some(engine) = engine {
        for (id, source) in from.containers {
            on.container(engine, id, source, live, Some(cutoff));
        }
    }
    use futures_util::stream::StreamExt;
    let from_history = from.history;
    let journal = from_history.journal_lines(live, true);
    let journal = journal
        .filter(move |l| std::future::ready(l.as_ref().map_or(true, |(_, l)| l.time > cutoff)))
        .boxed();
    stream::forward_tagged(journal, on.tx.clone());
    for u in from.units {
        on.unit(u, live, cutoff);
    }
    follow_events(ctx, &mut on, rx, engine, &from_history, printer).await
}

/// Prints each followed line as it comes and follows the containers that
/// start meanwhile; until a signal, the reader leaves, or the engine is lost.
async fn follow_events(
    ctx: &Ctx,
    on: &mut Followed,
    mut rx: mpsc::Receiver<Event>,
    engine: Option<&Engine>,
    from_history: &Plan,
    printer: &mut Printer,
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
                let Some(engine) = engine else { continue };
                if on.live.contains_key(&id) || from_history.in_journal(&source.module) {
                    continue;
                }
                // A recreated or restarted container: follow it from its start.
                printer.widen(source.label.len());
                let from = Window {
                    since: Some(at),
                    ..Window::default()
                };
                on.container(engine, id, source, from, None);
            }
        }
    }
}
