//! What a logs command reads (each stack's containers, host units, the journal's history, the
//! kept lines of failed runs) and the backlog of them all, merged in time order.

use std::collections::HashMap;

use crate::cmd::ctx::Ctx;
use crate::logs::stream::{self, Lines, Merge, Source, Tagged, Window};
use crate::module::target::Target;
use crate::output::log_lines::LogLines;
use crate::stack::{LogPlan, Session};
use crate::util::timefmt::Stamp;

/// What a logs command reads: the stacks' containers (with the engine they
/// are on) and the host modules' units.
pub(super) struct Sources {
    /// Asked only when a stack is involved: unit logs need no engine.
    pub(super) session: Option<Session>,
    /// Container id and log source (the engine keeps their lines), ordered by label.
    pub(super) containers: Vec<(String, Source)>,
    /// Which stacks' lines the journal keeps, and which the engine.
    pub(super) history: LogPlan,
    /// The kept lines of failed runs whose containers are gone.
    pub(super) kept: Vec<Tagged>,
    pub(super) units: Vec<UnitSource>,
    /// The stack targets, whose new containers a follow picks up.
    pub(super) stacks: Vec<Target>,
}

impl Sources {
    /// The modules read from the system journal alone (system units, stacks
    /// whose history is there), and whether any source is read elsewhere.
    pub(super) fn journal_only(&self) -> (Vec<String>, bool) {
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
    pub(super) fn width(&self) -> usize {
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
pub(super) async fn sources(
    ctx: &Ctx,
    targets: &[Target],
    window: Window,
) -> anyhow::Result<Sources> {
    let mut stacks = Vec::new();
    let mut hosts = Vec::new();
    for t in targets {
        let m = &t.module;
        m.usable()?;
        match m.host_unit() {
            Some((unit, scope)) => hosts.push((m.name.clone(), unit.to_string(), scope)),
            None => stacks.push(t.clone()),
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
    let session = if stacks.is_empty() {
        None
    } else {
        Some(ctx.node.stacks.session().await?)
    };
    let history = match &session {
        Some(s) => s.log_plan(&ctx.node.store, &stacks).await?,
        None => LogPlan::default(),
    };
    let mut containers: Vec<(String, Source)> = history
        .engine
        .iter()
        .map(|(id, s, _)| (id.clone(), s.clone()))
        .collect();
    containers.sort_by(|a, b| a.1.label.cmp(&b.1.label));
    let kept = kept_runs(ctx, &stacks, &history, &containers, window);
    Ok(Sources {
        session,
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
    history: &LogPlan,
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
    use futures_util::stream::StreamExt;
    let source = Source {
        module: module.to_string(),
        name: run.service.clone(),
        label: format!("{module}/{}", run.service),
    };
    let end = run.at;
    let mut lines: Vec<Line> = run
        .lines
        .iter()
        .map(|k| Line {
            time: k.time,
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
        w.since.is_none_or(|s| l.time.secs() >= s.secs())
            && w.until.is_none_or(|u| l.time.secs() < u.secs())
    });
    let skip = w.tail.map_or(0, |n| {
        lines
            .len()
            .saturating_sub(usize::try_from(n).unwrap_or(usize::MAX))
    });
    let items: Vec<anyhow::Result<Line>> = lines.into_iter().skip(skip).map(Ok).collect();
    stream::tagged(source, futures_util::stream::iter(items).boxed())
}

/// Every source's lines in the window, merged in time order and printed; the
/// kept lines of failed runs are taken out of `sources`.
/// Returns when each source's last printed line was written, by label: a
/// follow goes on after it, so a line both read and followed prints once.
pub(super) async fn print_merged(
    sources: &mut Sources,
    window: Window,
    printer: &mut LogLines,
) -> anyhow::Result<HashMap<String, Stamp>> {
    let mut streams: Vec<Tagged> = Vec::new();
    if let Some(session) = &sources.session {
        for (id, source) in &sources.containers {
            let lines = session.container_lines(id, false, window);
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
    let mut last: HashMap<String, Stamp> = HashMap::new();
    while let Some(item) = merge.next().await {
        let (source, line) = item?;
        printer.widen(source.label.len());
        r = printer.line(&source, &line);
        if r.is_err() {
            break;
        }
        let at = last.entry(source.label.clone()).or_insert(line.time);
        *at = (*at).max(line.time);
    }
    r.and_then(|()| printer.flush())
        .map_err(anyhow::Error::new)?;
    Ok(last)
}

/// A host module's unit as a log source (its journal).
pub(super) struct UnitSource {
    pub(super) unit: String,
    pub(super) init: std::sync::Arc<dyn crate::host::init::Init>,
    /// A system unit: its lines are in the system journal.
    pub(super) in_system_journal: bool,
    /// The main process of its last run, whose lines the journal may have filed under no unit.
    pub(super) pid: Option<u32>,
    pub(super) source: Source,
}

impl UnitSource {
    pub(super) fn lines(&self, follow: bool, w: Window) -> Lines {
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
