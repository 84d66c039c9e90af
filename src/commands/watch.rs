//! `hal watch`: the long-running supervisor that restarts what fails, within each module's limit.
//!
//! One task, one loop. Engine events, a full pass every `--interval` and the
//! supervisor's own deadlines mark modules to look at; a look reads their
//! status (`node::collect`), [`crate::supervisor`] decides, and restarts go
//! through `ops::run` exactly as a person's would: they count against the
//! module's start limit and take its lock. Restarts run beside the loop; a
//! module being restarted is not looked at until its restart has ended. Only
//! modules whose desired state is `up` are ever touched (see the supervisor).

mod hook;
mod link;
mod out;

use std::collections::BTreeSet;
use std::future::Future;
use std::pin::Pin;
use std::time::{Duration, Instant};

use futures_util::stream::{FuturesUnordered, StreamExt};
use tokio::signal::unix::{Signal, SignalKind, signal};

use crate::app::Ctx;
use crate::cli::WatchArgs;
use crate::config::PullPolicy;
use crate::discovery::{Inventory, Kind, Module};
use crate::error::{Exit, HalError, OneLine, exit_of};
use crate::model::State;
use crate::ops::{self, Report, Verb};
use crate::stacks::StartOpts;
use crate::store::Desired;
use crate::supervisor::{Act, Action, Attempt, Supervisor};
use crate::timefmt::Stamp;
use out::{Entry, Log};

/// Engine events come in bursts (die, stop, destroy…): look once they settle.
const SETTLE: Duration = Duration::from_millis(200);
/// How soon to look again at a module someone else is working on.
const BUSY_RECHECK: Duration = Duration::from_secs(2);

type Work<'a> = FuturesUnordered<Pin<Box<dyn Future<Output = Done> + 'a>>>;

/// A piece of work that ran beside the loop.
enum Done {
    Restart {
        act: Act,
        reason: String,
        report: Report,
    },
    Hook {
        module: String,
        result: Result<hook::Finished, String>,
    },
}

/// SIGTERM or SIGINT arrived (the name of the signal).
struct Stopped(&'static str);

/// SIGTERM and SIGINT, as one thing to wait for.
struct Shutdown {
    term: Signal,
    int: Signal,
}

impl Shutdown {
    fn new() -> anyhow::Result<Shutdown> {
        let listen =
            |kind, name| signal(kind).map_err(|e| anyhow::anyhow!("watch: listen for {name}: {e}"));
        Ok(Shutdown {
            term: listen(SignalKind::terminate(), "SIGTERM")?,
            int: listen(SignalKind::interrupt(), "SIGINT")?,
        })
    }

    async fn recv(&mut self) -> &'static str {
        tokio::select! {
            _ = self.term.recv() => "SIGTERM",
            _ = self.int.recv() => "SIGINT",
        }
    }
}

pub async fn run(ctx: &Ctx, a: WatchArgs) -> anyhow::Result<Exit> {
    let mut w = Watcher {
        ctx,
        interval: a.interval.max(Duration::from_secs(1)),
        grace: a.grace,
        log: Log { json: ctx.ui.json },
        sup: Supervisor::new(a.grace),
        modules: watched(&ctx.inventory),
        link: link::Link::new(),
        work: FuturesUnordered::new(),
        finished: Vec::new(),
        inflight: BTreeSet::new(),
        dirty: BTreeSet::new(),
        dirty_at: None,
        next_pass: Instant::now(),
        due_at: None,
        problems: BTreeSet::new(),
        stop: Shutdown::new()?,
    };
    let why = w.run().await;
    w.log.emit(
        Entry::about(
            "watch",
            "stopped",
            Some("exit"),
            format!("stopping ({why})"),
        )
        .reason(why),
    );
    Ok(Exit::Ok)
}

struct Watcher<'a> {
    ctx: &'a Ctx,
    interval: Duration,
    grace: Duration,
    log: Log,
    sup: Supervisor,
    /// The modules of the node, found again at every full pass.
    modules: Vec<Module>,
    link: link::Link,
    work: Work<'a>,
    /// Work that ended while the loop was busy, to handle at the next tick.
    finished: Vec<Done>,
    /// Modules being restarted.
    inflight: BTreeSet<String>,
    /// Modules to look at, from `dirty_at` on.
    dirty: BTreeSet<String>,
    dirty_at: Option<Instant>,
    next_pass: Instant,
    /// When the supervisor's next deadline falls.
    due_at: Option<Instant>,
    /// Problems last reported by a status pass, so each is logged once.
    problems: BTreeSet<String>,
    stop: Shutdown,
}

impl<'a> Watcher<'a> {
    async fn run(&mut self) -> &'static str {
        self.started();
        loop {
            if let Err(Stopped(why)) = self.tick().await {
                return why;
            }
            let wake = self.wake();
            tokio::select! {
                why = self.stop.recv() => return why,
                ev = self.link.next() => self.on_event(ev),
                Some(done) = self.work.next(), if !self.work.is_empty() => self.finished.push(done),
                () = tokio::time::sleep_until(wake.into()) => {}
            }
        }
    }

    /// Does whatever is due: finished work, a full pass, deadlines, reconnecting, looking.
    async fn tick(&mut self) -> Result<(), Stopped> {
        for d in std::mem::take(&mut self.finished) {
            self.on_done(d);
        }
        let now = Instant::now();
        if now >= self.next_pass {
            self.next_pass = now + self.interval;
            self.rediscover();
            let all: Vec<String> = self.modules.iter().map(|m| m.name.clone()).collect();
            self.mark(all, Duration::ZERO);
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
        }
        let now = Stamp::now();
        self.due_at = self
            .sup
            .next_due(now)
            .map(|t| Instant::now() + t.since(now));
        Ok(())
    }

    /// The next moment something is due.
    fn wake(&self) -> Instant {
        let mut wake = self.next_pass;
        let candidates = [
            self.due_at,
            self.has_stacks().then(|| self.link.retry_at()).flatten(),
            self.dirty_at.filter(|_| !self.dirty.is_empty()),
            (!self.finished.is_empty()).then(Instant::now),
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

    fn mark(&mut self, names: impl IntoIterator<Item = String>, delay: Duration) {
        let before = self.dirty.len();
        self.dirty.extend(names);
        if self.dirty.len() == before && self.dirty_at.is_some() {
            return;
        }
        let t = Instant::now() + delay;
        self.dirty_at = Some(self.dirty_at.map_or(t, |d| d.min(t)));
    }

    fn has_stacks(&self) -> bool {
        self.modules
            .iter()
            .any(|m| matches!(m.kind, Kind::Stack { .. }))
    }

    fn stacks(&self) -> BTreeSet<String> {
        self.modules
            .iter()
            .filter(|m| matches!(m.kind, Kind::Stack { .. }))
            .map(|m| m.name.clone())
            .collect()
    }

    fn started(&self) {
        let stacks = self.stacks().len();
        let hosts = self.modules.len() - stacks;
        self.log.emit(
            Entry::about(
                "watch",
                "started",
                Some("watch"),
                format!(
                    "watching {} modules ({stacks} stacks, {hosts} host units; grace {}, interval {}); only modules started by hal (desired up) are touched",
                    self.modules.len(),
                    crate::duration::format(self.grace),
                    crate::duration::format(self.interval),
                ),
            )
            .with("modules", self.modules.len()),
        );
    }

    /// Finds the modules again: a stack directory added since is watched from now on.
    fn rediscover(&mut self) {
        let inv = Inventory::discover(&self.ctx.inventory.root, &self.ctx.config);
        let now = watched(&inv);
        let names =
            |ms: &[Module]| -> BTreeSet<String> { ms.iter().map(|m| m.name.clone()).collect() };
        let (old, new) = (names(&self.modules), names(&now));
        if old != new {
            let added: Vec<&String> = new.difference(&old).collect();
            let gone: Vec<&String> = old.difference(&new).collect();
            self.log.emit(Entry::about(
                "watch",
                "modules_changed",
                None,
                format!("modules changed: added {added:?}, gone {gone:?}"),
            ));
        }
        self.modules = now;
    }

    async fn reconnect(&mut self) -> Result<(), Stopped> {
        let ctx = self.ctx;
        match self.drive(link::connect(ctx)).await? {
            Ok((engine, events)) => {
                let again = self.link.ever_up();
                let endpoint = engine.endpoint.clone();
                self.link.connected(engine, events);
                let text = if again {
                    format!("connected again to {endpoint}; checking every module")
                } else {
                    format!("connected to {endpoint}")
                };
                self.log
                    .emit(Entry::about("docker", "engine_up", Some("full_pass"), text));
                let stacks = self.stacks();
                self.mark(stacks, Duration::ZERO);
            }
            Err(why) => self.engine_down(&why, "not reachable"),
        }
        Ok(())
    }

    /// The engine went away: say so once per failed try, and try again later.
    fn engine_down(&mut self, why: &str, what: &str) {
        let wait = self.link.down();
        self.log.emit(
            Entry::about(
                "docker",
                "engine_lost",
                Some("reconnect"),
                format!(
                    "{what}: {why}; retrying in {}",
                    crate::duration::format(wait)
                ),
            )
            .reason(why)
            .with(
                "retry_in_ms",
                u64::try_from(wait.as_millis()).unwrap_or(u64::MAX),
            ),
        );
    }

    fn on_event(&mut self, ev: Option<Result<bollard::models::EventMessage, String>>) {
        match ev {
            Some(Ok(ev)) => {
                if let Some((module, seen)) = link::meaning(&ev, &self.stacks()) {
                    if let Some(seen) = seen {
                        self.sup.saw(seen);
                    }
                    self.mark([module], SETTLE);
                }
            }
            Some(Err(why)) => self.engine_down(&why, "lost connection"),
            None => self.engine_down("the event stream ended", "lost connection"),
        }
    }

    /// Reads the status of the marked modules and acts on what the supervisor decides.
    async fn look(&mut self) -> Result<(), Stopped> {
        let names = std::mem::take(&mut self.dirty);
        self.dirty_at = None;
        let mut busy = Vec::new();
        let mut mods = Vec::new();
        for name in names {
            let Some(m) = self.modules.iter().find(|m| m.name == name) else {
                continue;
            };
            let stack = matches!(m.kind, Kind::Stack { .. });
            if self.inflight.contains(&name) || (stack && !self.link.up()) {
                // Looked at again when its restart ends, or when the engine is back.
                continue;
            }
            if self.ctx.store.busy(&name) {
                busy.push(name);
                continue;
            }
            mods.push(m.clone());
        }
        self.mark(busy, BUSY_RECHECK);
        if mods.is_empty() {
            return Ok(());
        }
        let ctx = self.ctx;
        let node = self
            .drive(async move {
                let node = crate::node::collect(ctx, &mods).await;
                (mods, node)
            })
            .await?;
        let (mods, node) = node;
        self.problems(&node.errors, &node.warnings);
        if let Some(why) = node.errors.first()
            && self.link.up()
        {
            let why = why.clone();
            self.engine_down(&why, "lost connection");
        }
        for action in self.sup.decide(&node.modules, Stamp::now()) {
            if let Some(m) = mods.iter().find(|m| m.name == action.module) {
                self.act(m.clone(), action);
            }
        }
        Ok(())
    }

    /// Logs status problems when they change, not at every pass.
    fn problems(&mut self, errors: &[String], warnings: &[String]) {
        let now: BTreeSet<String> = errors.iter().chain(warnings).cloned().collect();
        for p in now.difference(&self.problems) {
            self.log
                .emit(Entry::about("watch", "problem", None, p.clone()).reason(p.clone()));
        }
        self.problems = now;
    }

    fn act(&mut self, m: Module, a: Action) {
        let name = m.name.clone();
        if a.act == Act::Release {
            self.log.emit(
                Entry::module(
                    &name,
                    "released",
                    Some("release"),
                    format!("hold released: {}", a.reason),
                )
                .reason(a.reason),
            );
            return;
        }
        // A person may have stopped it since its status was read.
        let (state, _) = self.ctx.store.read();
        if state.modules.get(&name).and_then(|r| r.desired) != Some(Desired::Up) {
            return;
        }
        if self.ctx.store.busy(&name) {
            self.mark([name], BUSY_RECHECK);
            return;
        }
        let (verb, action) = match a.act {
            Act::Retry => ("retrying after hold", "retry"),
            _ => ("restarting", "restart"),
        };
        self.log.emit(
            Entry::module(
                &name,
                "trouble",
                Some(action),
                format!("{verb}: {}", a.reason),
            )
            .reason(a.reason.clone()),
        );
        self.inflight.insert(name);
        let ctx = self.ctx;
        self.work.push(Box::pin(restart(ctx, m, a)));
    }

    fn on_done(&mut self, d: Done) {
        match d {
            Done::Restart {
                act,
                reason,
                report,
            } => self.restarted(act, reason, report),
            Done::Hook { module, result } => self.hook_done(&module, result),
        }
    }

    fn restarted(&mut self, act: Act, reason: String, report: Report) {
        let name = report.module.name.clone();
        self.inflight.remove(&name);
        self.mark([name.clone()], SETTLE);
        let took = report.took;
        let took_text = format!("{:.1}s", took.as_secs_f64());
        let took_ms = u64::try_from(took.as_millis()).unwrap_or(u64::MAX);
        let now = Stamp::now();
        let (what, err) = match &report.result {
            Ok(o) if o.state == State::Active => {
                self.sup.record(&name, Attempt::Recovered, now);
                let text = format!("restarted, active ({took_text})");
                self.log.emit(
                    Entry::module(&name, "restarted", None, text)
                        .with("state", "active")
                        .with("took_ms", took_ms),
                );
                return;
            }
            Ok(o) => (
                Attempt::Failed,
                format!(
                    "restarted but {}: {}",
                    o.state.as_str(),
                    o.reason.as_deref().unwrap_or("")
                ),
            ),
            Err(e) if exit_of(e) == Exit::Refused => (Attempt::Refused, refusal_text(e)),
            Err(e) => (Attempt::Failed, without_context(e, &name)),
        };
        let hold_began = self.sup.record(&name, what.clone(), now);
        if hold_began {
            self.held(&name, &reason, &err);
            return;
        }
        let next = self
            .sup
            .hold(&name)
            .map(|h| format!("; still held, next try after {} UTC", h.not_before.clock()))
            .unwrap_or_default();
        let (event, verb) = match (what, act) {
            (Attempt::Refused, _) => ("refused", "refused"),
            (_, Act::Retry) => ("retry_failed", "retry failed"),
            _ => ("restart_failed", "restart failed"),
        };
        self.log.emit(
            Entry::module(
                &name,
                event,
                None,
                format!("{verb}: {err} ({took_text}){next}"),
            )
            .reason(err)
            .with("took_ms", took_ms),
        );
    }

    /// A hold began: say so, and run `on_failure` once if there is one and the config may be trusted.
    fn held(&mut self, name: &str, reason: &str, refusal: &str) {
        let command = hook::command_of(self.ctx, name);
        let blocked = command.as_ref().and_then(|_| hook::refusal(self.ctx));
        let tail = match (&command, &blocked) {
            (None, _) => "",
            (Some(_), Some(_)) => "; on_failure not run",
            (Some(_), None) => "; running on_failure",
        };
        self.log.emit(
            Entry::module(name, "held", Some("hold"), format!("held: {refusal}{tail}"))
                .reason(refusal),
        );
        match (command, blocked) {
            (Some(_), Some(why)) => self.log.emit(
                Entry::module(
                    name,
                    "on_failure_refused",
                    None,
                    format!("on_failure not run: {why}"),
                )
                .reason(why),
            ),
            (Some(argv), None) => {
                let module = name.to_string();
                let env_reason = format!("{reason}; {refusal}");
                self.work.push(Box::pin(async move {
                    let result = hook::run(&argv, &module, &env_reason).await;
                    Done::Hook { module, result }
                }));
            }
            (None, _) => {}
        }
    }

    fn hook_done(&mut self, name: &str, result: Result<hook::Finished, String>) {
        match result {
            Ok(f) => {
                for line in &f.output {
                    self.log.emit(
                        Entry::module(
                            name,
                            "on_failure_output",
                            None,
                            format!("on_failure: {line}"),
                        )
                        .reason(line.clone()),
                    );
                }
                self.log.emit(
                    Entry::module(
                        name,
                        "on_failure",
                        None,
                        format!("on_failure {} ({:.1}s)", f.how, f.took.as_secs_f64()),
                    )
                    .reason(f.how.clone())
                    .with("ok", f.ok)
                    .with(
                        "took_ms",
                        u64::try_from(f.took.as_millis()).unwrap_or(u64::MAX),
                    ),
                );
            }
            Err(why) => self.log.emit(
                Entry::module(
                    name,
                    "on_failure",
                    None,
                    format!("on_failure could not run: {why}"),
                )
                .reason(why)
                .with("ok", false),
            ),
        }
    }
}

/// Restarts one module as `hal module restart` would (not forced: it counts).
/// Images are pulled only when missing: a recovery must not wait on a registry.
async fn restart(ctx: &Ctx, m: Module, a: Action) -> Done {
    let verb = Verb::Restart {
        opts: StartOpts {
            pull: Some(PullPolicy::Missing),
            wait: true,
            timeout: None,
        },
        force: false,
    };
    let report = ops::run(ctx, vec![m.clone()], &verb, 1)
        .await
        .pop()
        .unwrap_or(Report {
            module: m,
            result: Err(anyhow::anyhow!("no report")),
            took: Duration::ZERO,
        });
    Done::Restart {
        act: a.act,
        reason: a.reason,
        report,
    }
}

/// Every module that could be supervised (invalid ones never are).
fn watched(inv: &Inventory) -> Vec<Module> {
    inv.modules
        .iter()
        .filter(|m| !matches!(m.kind, Kind::Invalid { .. }))
        .cloned()
        .collect()
}

/// The refusal's own words (when the module is free again, how to clear it).
fn refusal_text(e: &anyhow::Error) -> String {
    e.chain()
        .find_map(|c| c.downcast_ref::<HalError>())
        .map_or_else(|| OneLine(e).to_string(), ToString::to_string)
}

/// The error without ops' `restart NAME: ` prefix.
fn without_context(e: &anyhow::Error, name: &str) -> String {
    let text = OneLine(e).to_string();
    text.strip_prefix(&format!("restart {name}: "))
        .map_or(text.clone(), str::to_string)
}
