//! The supervisor behind `hal watch`: the loop that restarts what fails, within each module's limit.
//!
//! One task, one loop. Engine events, the supervisor's own deadlines, a pass
//! every `--interval` (host units, which send no events, and stack directories
//! new since the last pass) and a resync of every stack every `--resync` (a
//! safety net: while the engine's events flow they say what changed) mark
//! modules to look at; a look reads their
//! status (`run::collect_status`), [`policy`] decides (pure rules), and
//! restarts go through `run::run` exactly as a person's would: they count against the
//! module's start limit and take its lock. Restarts run beside the loop; a
//! module being restarted is not looked at until its restart has ended. Only
//! modules whose desired state is `up` are ever touched (see the supervisor).

mod act;
mod deaths;
mod holds;
mod hook;
mod link;
mod look;
mod metrics;
mod modules;
mod netns;
pub(crate) mod policy;
mod repair_order;
mod reread;
mod rounds;
mod shutdown;
mod update;
mod waiting;

use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::time::{Duration, Instant};

use futures_util::FutureExt;
use futures_util::stream::{FuturesUnordered, StreamExt};

use crate::error::Exit;
use crate::module::Module;
use crate::module::progress::Progress;
use crate::module::status::Detail;
use crate::output::watch_log::{Log, WatchOwn};
use crate::run::Node;
use crate::run::Report;
use crate::stack::{EngineEvent, EventAction};
use crate::util::timefmt::Stamp;
use crate::watch::policy::{Act, RepairScope, Supervisor};
use crate::watch::shutdown::Shutdown;

/// Engine events come in bursts (die, stop, destroy…): look once they settle.
const EVENT_SETTLE: Duration = Duration::from_millis(200);
/// How soon to look again at a module someone else is working on.
const BUSY_RECHECK: Duration = Duration::from_secs(2);

/// A file's time and size, as last seen (`None`: not there).
type FileSeen = (std::path::PathBuf, Option<(std::time::SystemTime, u64)>);

/// What the node was read from, as the file system had it (`reread.rs`).
#[derive(PartialEq)]
struct ReadInputs {
    config: Option<FileSeen>,
    files: Vec<FileSeen>,
}

type Work<'a> = FuturesUnordered<Pin<Box<dyn Future<Output = WorkDone> + 'a>>>;

/// How a piece of work that ran beside the loop ([`Work`]) ended: a
/// restart, an `on_failure` hook, a scheduled update.
enum WorkDone {
    Restart {
        act: Act,
        reason: Box<crate::output::watch_log::Cause>,
        scope: RepairScope,
        /// Boxed: a report is large beside the other variants.
        report: Box<Report>,
    },
    Hook {
        module: String,
        result: Result<hook::Finished, hook::HookError>,
    },
    /// A scheduled update of one module ended (no report: the runner gave none).
    Update {
        module: String,
        report: Option<Box<crate::run::Report>>,
    },
}

/// SIGTERM or SIGINT arrived (the name of the signal).
struct Stopped(&'static str);

/// How the supervisor runs.
pub(crate) struct Watch<'a> {
    /// Host units, holds lifted by others and new stack directories are read this often.
    pub interval: Duration,
    /// Every stack is read at least this often, events or not.
    pub resync: Duration,
    /// How long a container may stay unhealthy before it is restarted.
    pub grace: Duration,
    /// Where its lines go.
    pub log: Log,
    /// Where restarts report their progress.
    pub progress: &'a dyn Progress,
    /// How much a status pass reads of each container.
    pub detail: Detail,
    /// Where to write Prometheus metrics, if anywhere.
    pub metrics: Option<std::path::PathBuf>,
}

/// Supervises the node until Ctrl-C or SIGTERM. The node is read again as
/// it changes (`reread.rs`); `node` is the one read at start.
pub(crate) async fn run(node: &Node, how: Watch<'_>) -> anyhow::Result<Exit> {
    let mut node = node.with(
        node.config.clone(),
        node.inventory.clone(),
        node.graph_as_built(),
    );
    // A full or read-only state directory does not stop the repairs: what
    // cannot be written is kept in memory, and written when it can be.
    node.store = node.store.clone().keeping();
    let node = Rc::new(node);
    let mut w = Watcher {
        progress: how.progress,
        detail: how.detail,
        interval: how.interval.max(Duration::from_secs(1)),
        resync: how.resync.max(Duration::from_secs(1)),
        grace: how.grace,
        log: how.log,
        sup: Supervisor::new(how.grace),
        modules: Watcher::watched(&node.inventory),
        stack_names: Watcher::stack_names(&node.inventory.modules),
        updates: rounds::Updates::new(&node),
        node,
        link: link::Link::new(),
        work: FuturesUnordered::new(),
        finished: Vec::new(),
        inflight: BTreeSet::new(),
        dirty: BTreeSet::new(),
        dirty_at: None,
        next_pass: Instant::now(),
        next_resync: Instant::now(),
        next_glance: Instant::now(),
        due_at: None,
        problems: BTreeSet::new(),
        root_problem: None,
        passes: 0,
        saved: BTreeMap::new(),
        deaths: deaths::Deaths::default(),
        netns_users: BTreeMap::new(),
        read_inputs: None,
        read_problems: BTreeSet::new(),
        put_off: BTreeSet::new(),
        trim_due: false,
        write_at: None,
        unwritable_said: false,
        metrics: how.metrics.map(metrics::Metrics::new),
        stop: Shutdown::new()?,
    };
    let why = w.run().await;
    w.log.emit(WatchOwn::Stopped {
        why: why.to_string(),
    });
    Ok(Exit::Ok)
}

struct Watcher<'a> {
    /// The node as last read (`reread.rs`): its config, its modules, its graph.
    node: Rc<Node>,
    progress: &'a dyn Progress,
    detail: Detail,
    interval: Duration,
    resync: Duration,
    grace: Duration,
    log: Log,
    sup: Supervisor,
    /// The modules of the node, found again at every pass.
    modules: Vec<Module>,
    /// The names of the stacks among them (what an engine event may be about).
    stack_names: BTreeSet<String>,
    link: link::Link,
    work: Work<'a>,
    /// Work that ended while the loop was busy, to handle at the next tick.
    finished: Vec<WorkDone>,
    /// Modules being restarted.
    inflight: BTreeSet<String>,
    /// Modules to look at, from `dirty_at` on.
    dirty: BTreeSet<String>,
    dirty_at: Option<Instant>,
    next_pass: Instant,
    next_resync: Instant,
    /// When the config file is next looked at (`reread.rs`: every second).
    next_glance: Instant,
    /// When the supervisor's next deadline falls.
    due_at: Option<Instant>,
    /// Problems last reported by a status pass, so each is logged once.
    problems: BTreeSet<String>,
    /// Why the services root could not be read, as last logged.
    root_problem: Option<String>,
    /// Passes done.
    passes: u64,
    /// The holds as last written to hal's state.
    saved: BTreeMap<String, crate::state::records::HoldRecord>,
    /// Work was done since the allocator was last told to give memory back.
    trim_due: bool,
    /// While hal's state cannot be written: when to try again (`holds.rs`).
    write_at: Option<Instant>,
    /// Whether the log last said that hal's state cannot be written.
    unwritable_said: bool,
    /// Deaths reported by the engine that no status pass has shown yet.
    deaths: deaths::Deaths,
    /// A container's id → the modules in its network namespace (`watch/netns.rs`).
    netns_users: BTreeMap<String, BTreeSet<String>>,
    /// What the node was last read from, and why it could not be read again (`reread.rs`).
    read_inputs: Option<ReadInputs>,
    read_problems: BTreeSet<String>,
    /// Modules whose repair waits for the repair of one they require or come after.
    put_off: BTreeSet<String>,
    metrics: Option<metrics::Metrics>,
    /// `auto_update`: the schedule and the round of updates under way.
    updates: rounds::Updates,
    stop: Shutdown,
}

impl<'a> Watcher<'a> {
    async fn run(&mut self) -> &'static str {
        self.started();
        self.updates_started();
        self.restore_holds();
        // From here on no deadline is missed (`Supervisor::next_due`); a restored hold may be due already.
        let due = self.sup.due(Stamp::now());
        self.mark(due, Duration::ZERO);
        loop {
            if let Err(Stopped(why)) = self.tick().await {
                return why;
            }
            self.subscribed();
            let wake = self.wake();
            tokio::select! {
                why = self.stop.recv() => return why,
                ev = self.link.next() => self.on_event(ev),
                Some(done) = self.work.next(), if !self.work.is_empty() => self.finished.push(done),
                () = tokio::time::sleep_until(wake.into()) => {}
            }
        }
    }

    /// Does whatever is due: finished work, a pass, deadlines, reconnecting, looking.
    async fn tick(&mut self) -> Result<(), Stopped> {
        let finished = std::mem::take(&mut self.finished);
        // The holds are written when something may have changed them, and read
        // back at every pass: a hold that `reset-failed` or `rescue` lifted is
        // let go (and its module looked at) even when nothing else is.
        let mut holds = !finished.is_empty();
        self.trim_due |= holds;
        for d in finished {
            if let (Some(m), WorkDone::Restart { scope, report, .. }) = (&mut self.metrics, &d) {
                m.repaired(&report.module.name, scope, report.result.is_ok());
            }
            self.on_done(d);
        }
        let now = Instant::now();
        let resync = now >= self.next_resync;
        self.glance(now);
        if resync || now >= self.next_pass {
            holds = true;
            self.metrics.as_mut().map(metrics::Metrics::pass);
            self.next_pass = now + self.interval;
            if resync {
                self.next_resync = now + self.resync;
            }
            let added = self.rediscover(resync);
            // Host units send no events: they are read at every pass. A stack is read
            // when the engine's events say it changed, when it is new, and at a resync.
            let names: Vec<String> = self
                .modules
                .iter()
                .filter(|m| {
                    resync || !self.stack_names.contains(&m.name) || added.contains(&m.name)
                })
                .map(|m| m.name.clone())
                .collect();
            self.mark(names, Duration::ZERO);
        }
        if self.due_at.is_some_and(|t| now >= t) {
            self.due_at = None;
            let due = self.sup.due(Stamp::now());
            self.mark(due, Duration::ZERO);
        }
        if self.has_stacks() && self.link.retry_at().is_some_and(|t| now >= t) {
            self.reconnect().await?;
        }
        if !self.dirty.is_empty() && self.dirty_at.is_some_and(|t| Instant::now() >= t) {
            self.look().await?;
            holds = true;
            self.trim_due = true;
        }
        self.update_tick();
        holds |= self.keep_state().await?;
        if holds {
            self.save_holds().await?;
            self.write_metrics();
        }
        // Once a burst of work is over the watch holds little: give back what the burst used.
        if self.trim_due && self.work.is_empty() && self.dirty.is_empty() {
            self.trim_due = false;
            crate::util::sys::give_back_memory();
        }
        // A deadline that passed while this tick was busy is due at once.
        let now = Stamp::now();
        self.due_at = self
            .sup
            .next_due(now)
            .map(|t| Instant::now() + t.since(now));
        Ok(())
    }

    /// The next moment something is due.
    fn wake(&self) -> Instant {
        let mut wake = self.next_pass.min(self.next_resync).min(self.next_glance);
        let candidates = [
            self.due_at,
            self.has_stacks().then(|| self.link.retry_at()).flatten(),
            self.dirty_at.filter(|_| !self.dirty.is_empty()),
            (!self.finished.is_empty()).then(Instant::now),
            self.updates.wake(),
            self.write_at.filter(|_| self.node.store.owed()),
        ];
        for t in candidates.into_iter().flatten() {
            wake = wake.min(t);
        }
        wake
    }

    /// Awaits `f` while restarts keep going, unless a signal ends the watch.
    async fn drive<F: Future>(&mut self, f: F) -> Result<F::Output, Stopped> {
        tokio::pin!(f);
        loop {
            tokio::select! {
                out = &mut f => return Ok(out),
                why = self.stop.recv() => return Err(Stopped(why)),
                Some(done) = self.work.next(), if !self.work.is_empty() => self.finished.push(done),
            }
        }
    }

    /// Marks modules to be looked at once `delay` has passed (or sooner, if already due).
    fn mark(&mut self, names: impl IntoIterator<Item = String>, delay: Duration) {
        let mut any = false;
        for n in names {
            self.dirty.insert(n);
            any = true;
        }
        if any {
            let t = Instant::now() + delay;
            self.dirty_at = Some(self.dirty_at.map_or(t, |d| d.min(t)));
        }
    }

    fn has_stacks(&self) -> bool {
        !self.stack_names.is_empty()
    }

    async fn reconnect(&mut self) -> Result<(), Stopped> {
        let node = Rc::clone(&self.node);
        match self
            .drive(async move { link::connect(&node).await })
            .await?
        {
            Ok((session, events)) => {
                let again = self.link.ever_up();
                let endpoint = session.endpoint().to_string();
                self.link.connected(session, events);
                self.log.emit(WatchOwn::EngineUp {
                    engine: self.link.name().to_string(),
                    endpoint,
                    again,
                });
                let stacks = self.stack_names.clone();
                self.mark(stacks, Duration::ZERO);
            }
            Err(_) if self.link.probed() => {}
            Err(why) => self.engine_down(&why.to_string(), "not reachable"),
        }
        Ok(())
    }

    /// Once per connection, after the look that follows it: sends the event
    /// subscription's request (its first poll) and says so. The subscription
    /// starts a second before the connection, so from this line on no event
    /// after `docker: connected` (the engine's name) is missed; tests wait on it.
    fn subscribed(&mut self) {
        if !self.link.take_unsaid() {
            return;
        }
        if let Some(ev) = self.link.next().now_or_never() {
            self.on_event(ev);
        }
        if self.link.up() {
            let engine = self.link.name().to_string();
            self.log.emit(WatchOwn::Subscribed { engine });
        }
    }

    /// The engine went away: say so once per failed try, and try again later.
    fn engine_down(&mut self, why: &str, what: &str) {
        let wait = self.link.down();
        self.log.emit(WatchOwn::EngineLost {
            engine: self.link.name().to_string(),
            what: what.to_string(),
            why: why.to_string(),
            retry_in: wait,
        });
    }

    fn on_event(&mut self, ev: Option<Result<EngineEvent, link::Missed>>) {
        match ev {
            Some(Ok(ev)) => {
                if let Some((module, seen)) = link::meaning(&ev, &self.stack_names) {
                    if let Some(seen) = seen {
                        self.sup.saw(seen);
                    }
                    // A death is acted on at once (no settle in the path of a repair);
                    // other events come in bursts, looked at once they settle.
                    let died = matches!(ev.action, EventAction::Die | EventAction::Oom);
                    if ev.action == EventAction::Start {
                        link::remember(&self.node.store, &ev);
                        let users = self.namespace_dependents(&module, ev.id.as_deref());
                        self.mark(users, EVENT_SETTLE);
                    }
                    if died {
                        self.deaths.saw(&module, &ev);
                    }
                    self.mark([module], if died { Duration::ZERO } else { EVENT_SETTLE });
                }
            }
            Some(Err(link::Missed::Unreadable(why))) => {
                // Not a lost engine: say what could not be read, and look at every stack.
                let engine = self.link.name().to_string();
                self.log.emit(WatchOwn::EventUnreadable { engine, why });
                let stacks = self.stack_names.clone();
                self.mark(stacks, EVENT_SETTLE);
            }
            Some(Err(link::Missed::Lost(why))) => self.engine_down(&why, "lost connection"),
            None => self.engine_down("the event stream ended", "lost connection"),
        }
    }
}
