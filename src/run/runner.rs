//! The one runner: a verb on many targets at once, bounded, in the graph's layers, each dispatched to its kind (stack or host) under its lock.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use crate::module::Module;
use crate::module::outcome::Outcome;
use crate::module::progress::Progress;
use crate::module::target::Target;
use crate::run::node::Node;
use crate::run::report::Report;
use crate::run::steps::{Did, Turn, Worked, outcome_now, reachable, split};
use crate::run::verb::Verb;
use crate::run::{act, ended, pulled, status};
use crate::stack;
use anyhow::Context;
use futures_util::future::LocalBoxFuture;
use futures_util::stream::{self, StreamExt};

/// Runs `verb` on every module, at most `jobs` at once, requirements first (last when stopping), reports in the given order.
pub(crate) async fn run(
    node: &Node,
    progress: &dyn Progress,
    modules: Vec<Module>,
    verb: &Verb,
    jobs: usize,
) -> Vec<Report> {
    let targets = modules.into_iter().map(Target::whole).collect();
    run_targets(node, progress, targets, verb, jobs, &|_| {}).await
}

/// Runs `verb` on every target (a module, or one service of a stack), at
/// most `jobs` at once, in the graph's order (a module whose requirement
/// failed in this run is left untried when the verb needs it up), telling
/// `finished` about each as soon as its work is over (in the order they
/// finish, after its progress is `done`); the reports still come back in
/// the given order. The one runner: every verb, `update` included.
///
/// `jobs` bounds the work (compose, the engine, the init): a module holds a
/// slot while it is launched, and gives it back before it only waits for
/// `active` (an update holds it to the end: [`Verb::releases_slot_before_wait`]).
pub(crate) async fn run_targets(
    node: &Node,
    progress: &dyn Progress,
    targets: Vec<Target>,
    verb: &Verb,
    jobs: usize,
    finished: &dyn Fn(&Report),
) -> Vec<Report> {
    let names = pulled::names_of(&targets);
    let layers = pulled::layers(node, &names, verb.stops());
    let failures = AtomicUsize::new(0);
    let mut failed: Vec<String> = Vec::new();
    let mut reports: Vec<(usize, Report)> = Vec::with_capacity(targets.len());
    for layer in layers {
        let (batch, untried) = pulled::split(node, verb, &targets, &layer, &failed);
        for (i, report) in untried {
            finished(&report);
            reports.push((i, report));
        }
        let slots = tokio::sync::Semaphore::new(jobs.max(1));
        let again = |targets: Vec<Target>, verb: Verb| -> LocalBoxFuture<'_, Vec<Report>> {
            Box::pin(async move { run_targets(node, progress, targets, &verb, 1, &|_| {}).await })
        };
        let turn = Turn {
            node,
            progress,
            verb,
            slots: &slots,
            failures: &failures,
            again: &again,
        };
        let mut done = stream::iter(batch)
            .map(|(i, t)| async move { (i, turn.take(t).await) })
            .buffer_unordered(usize::MAX);
        while let Some((i, report)) = done.next().await {
            finished(&report);
            reports.push((i, report));
        }
        if verb.needs_requirements_up() {
            let down = reports.iter().filter(|(_, r)| !r.came_up());
            failed.extend(down.map(|(_, r)| r.module.name.clone()));
        }
    }
    reports.sort_by_key(|(i, _)| *i);
    reports.into_iter().map(|(_, r)| r).collect()
}

impl Turn<'_> {
    /// One target's turn: its slot, its work, timed, as its report.
    async fn take(self, t: &Target) -> Report {
        let (node, verb) = (self.node, self.verb);
        let mut began = Instant::now();
        let slot = self.slots.acquire().await;
        if !verb.releases_slot_before_wait() {
            // A module that holds its slot to the end is timed from it.
            began = Instant::now();
        }
        if let Some(max) = verb.stops_after_failures()
            && self.failures.load(Ordering::SeqCst) >= max
        {
            let state = status::state_now(node, t).await;
            return Report::skipped(t, state, max);
        }
        let worked = match slot.context("the --jobs slots closed") {
            Ok(slot) => self.one(t, slot).await,
            Err(e) => Err(e.into()),
        };
        let (result, did) = split(worked);
        let result = result.with_context(|| verb.step(t.label()));
        self.progress.done(&t.module.name);
        let report = did.report(t, verb, result, began.elapsed());
        if report.update.as_ref().is_some_and(|u| u.failed) {
            self.failures.fetch_add(1, Ordering::SeqCst);
        }
        report
    }
}

/// Fails, before anything is touched, when no target's engine can be reached
/// (Docker for stacks, the init for units): the command then ends with that
/// error (exit 6) rather than one failed report per module. When some can be
/// reached, each of the others is reported as it fails.
pub(crate) async fn check_reachable(
    node: &Node,
    targets: &[Target],
    verb: &Verb,
) -> anyhow::Result<()> {
    let mut first = None;
    for t in targets {
        match reachable(node, &t.module).await {
            Ok(()) => return Ok(()),
            Err(e) => {
                first.get_or_insert_with(|| e.context(verb.step(t.label())));
            }
        }
    }
    first.map_or(Ok(()), Err)
}

/// Refuses, before anything is touched, a `MODULE/SERVICE` whose stack has no
/// such service (exit 4, naming the services it has).
pub(crate) async fn check_services(node: &Node, targets: &[Target]) -> anyhow::Result<()> {
    for t in targets {
        if let (Some(service), Some(dir)) = (&t.service, t.module.stack_dir()) {
            stack::check_service(&node.stacks, &node.store, &t.module.name, dir, service).await?;
        }
    }
    Ok(())
}

impl Turn<'_> {
    /// One target's work, its slot taken: usable, its engine reachable, its
    /// lock taken; the verb's own work, the wait, and how it ended recorded
    /// under the lock; with what it did.
    async fn one(self, t: &Target, slot: tokio::sync::SemaphorePermit<'_>) -> Worked<Outcome> {
        let (node, verb) = (self.node, self.verb);
        let m = &t.module;
        m.usable()?;
        if !verb.acts_on(m) {
            return Ok((outcome_now(node, t, Vec::new()).await?, Did::default()));
        }
        // Reach the engine first: a start that cannot happen must not count.
        reachable(node, m).await?;
        let mut lock = Some(node.store.lock_module(&m.name).await?);
        let worked = match act::act(self, t).await {
            Ok((launched, did)) => {
                // What is left is waiting: another module may have the slot.
                if verb.releases_slot_before_wait() {
                    drop(slot);
                }
                act::wait(self, t, launched, &mut lock, did).await
            }
            Err(failed) => Err(failed),
        };
        let (result, mut did) = split(worked);
        // Under the lock (a stop recorded itself before letting it go).
        if lock.is_some()
            && let Some(ended) = ended::of(node, t, verb, &result, &did)
        {
            did.warnings.extend(ended::record(node, m, ended).await);
        }
        drop(lock);
        let outcome = match result {
            Ok(o) => o,
            Err(e) => return did.with(Err(e)),
        };
        let mut warnings = std::mem::take(&mut did.warnings);
        warnings.extend(outcome.warnings);
        let outcome = Outcome {
            warnings,
            ..outcome
        };
        Ok((outcome, did))
    }
}
