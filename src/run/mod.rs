//! Runs a verb on many modules at once, bounded, and dispatches each to its kind (stack or host).

pub(crate) mod adopt;
mod backend;
mod ended;
pub(crate) mod follow;
mod graph;
pub(crate) mod node;
pub(crate) mod node_state;
pub(crate) mod pulled;
mod report;
mod settle;
pub(crate) mod status;
pub(crate) mod update;
mod verb;
mod waiting;
pub(crate) mod would;

use std::time::{Duration, Instant};

use crate::module::outcome::{Outcome, StartOpts};
use crate::module::progress::Progress;
use crate::module::status::{Desired, State};
use crate::module::target::Target;
use crate::module::{Kind, Module};
use crate::run::backend::{Launched, Starting, launch, launch_planned, plan, stop, undriven};
use crate::run::node::Node;
use crate::state::records::Ended;
use crate::util::timefmt::Stamp;
use crate::{host, stack};
use anyhow::Context;
use futures_util::stream::{self, StreamExt};

pub(crate) use report::{Report, ReportJson};
pub(crate) use verb::Verb;

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
/// failed in this run is left untried), telling `finished` about each as
/// soon as its work is over (in the order they finish, after its progress is
/// `done`); the reports still come back in the given order.
///
/// `jobs` bounds the work (compose, the engine, the init): a module holds a
/// slot while it is launched, and gives it back before it only waits for `active`.
pub(crate) async fn run_targets(
    node: &Node,
    progress: &dyn Progress,
    targets: Vec<Target>,
    verb: &Verb,
    jobs: usize,
    finished: &dyn Fn(&Report),
) -> Vec<Report> {
    let names = pulled::names_of(&targets);
    let stopping = matches!(verb, Verb::Stop { .. });
    let layers = pulled::layers(node, &names, stopping);
    let mut failed: Vec<String> = Vec::new();
    let mut reports: Vec<(usize, Report)> = Vec::with_capacity(targets.len());
    for layer in layers {
        let (batch, untried) =
            pulled::split(node, verb.name(), stopping, &targets, &layer, &failed);
        for (i, report) in untried {
            finished(&report);
            reports.push((i, report));
        }
        let slots = tokio::sync::Semaphore::new(jobs.max(1));
        let mut done = stream::iter(batch)
            .map(|(i, t)| {
                let slots = &slots;
                async move {
                    let began = Instant::now();
                    let result = one(node, progress, t, verb, slots)
                        .await
                        .with_context(|| verb.step(t.label()));
                    progress.done(&t.module.name);
                    let changed = result.as_ref().is_ok_and(|(_, c)| *c);
                    let report = Report {
                        module: t.module.clone(),
                        service: t.service.clone(),
                        result: result.map(|(o, _)| o),
                        took: began.elapsed(),
                        changed,
                        would: None,
                    };
                    (i, report)
                }
            })
            .buffer_unordered(usize::MAX);
        while let Some((i, report)) = done.next().await {
            finished(&report);
            reports.push((i, report));
        }
        failed.extend(
            reports
                .iter()
                .filter(|(_, r)| !r.came_up())
                .map(|(_, r)| r.module.name.clone()),
        );
    }
    reports.sort_by_key(|(i, _)| *i);
    reports.into_iter().map(|(_, r)| r).collect()
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
        if let (Some(service), Kind::Stack { dir, .. }) = (&t.service, &t.module.kind) {
            stack::check_service(&node.stacks, &node.store, &t.module.name, dir, service).await?;
        }
    }
    Ok(())
}

async fn one(
    node: &Node,
    progress: &dyn Progress,
    t: &Target,
    verb: &Verb,
    slots: &tokio::sync::Semaphore,
) -> anyhow::Result<(Outcome, bool)> {
    let m = &t.module;
    let service = t.service.as_deref();
    m.usable()?;
    let slot = slots.acquire().await.context("the --jobs slots closed")?;
    // Reach the engine first: a start that cannot happen must not count.
    reachable(node, m).await?;
    let mut lock = Some(node.store.lock_module(&m.name).await?);
    let mut warnings = Vec::new();
    let (result, changed) = match act(node, progress, t, verb, slot, &mut lock, &mut warnings).await
    {
        Ok((o, changed)) => (Ok(o), changed),
        Err(e) => (Err(e), false),
    };
    // Under the lock (a stop recorded itself before letting it go).
    if lock.is_some()
        && let Some(starter) = starter(verb)
        && let Some(ended) = ended::of_start(node, m, starter, service, &result)
    {
        ended::record(node, m, ended, &mut warnings).await;
    }
    drop(lock);
    let outcome = result?;
    warnings.extend(outcome.warnings);
    let outcome = Outcome {
        warnings,
        ..outcome
    };
    Ok((outcome, changed))
}

/// The verb's work on one target, its lock taken: launched, then waited for;
/// with whether it started, stopped, restarted or recreated anything.
async fn act(
    node: &Node,
    progress: &dyn Progress,
    t: &Target,
    verb: &Verb,
    slot: tokio::sync::SemaphorePermit<'_>,
    lock: &mut Option<crate::state::ModuleLock>,
    warnings: &mut Vec<String>,
) -> anyhow::Result<(Outcome, bool)> {
    let m = &t.module;
    let service = t.service.as_deref();
    // Restarts, rescues and repairs always change something.
    let (launched, changed) = match verb {
        Verb::Start { opts, force } => start_one(node, progress, t, opts, *force, warnings).await?,
        Verb::Stop { grace } => stop_one(node, progress, t, *grace, warnings).await?,
        Verb::Restart { opts, force } => {
            // Refuse before stopping: a held module must not be left down.
            stack::identity::refuse_start(&node.stacks, m).await?;
            count(node, m, *force, warnings).await?;
            desire(node, m, Desired::Up, warnings).await?;
            stop(node, progress, m, service, None).await?;
            (launch(node, progress, m, service, opts).await?, true)
        }
        Verb::AutoRestart { opts } => {
            still_wanted(node, m)?;
            count(node, m, false, warnings).await?;
            stop(node, progress, m, service, None).await?;
            (launch(node, progress, m, service, opts).await?, true)
        }
        Verb::Repair { fixes, opts } => (
            repair(node, progress, m, fixes, opts, warnings).await?,
            true,
        ),
        Verb::Rescue { opts } => {
            warnings.extend(node.store.reset(&m.name).await?);
            if let Kind::Host { unit, scope } = &m.kind {
                host::reset_failed(&*node.hosts.init(*scope), unit).await?;
            }
            count(node, m, false, warnings).await?;
            desire(node, m, Desired::Up, warnings).await?;
            stop(node, progress, m, service, None).await?;
            (launch(node, progress, m, service, opts).await?, true)
        }
    };
    // What is left is waiting: another module may have the slot.
    drop(slot);
    let outcome = match launched {
        Launched::Done(o) | Launched::Unchanged(o) => o,
        // A stop that something undoes is not a success: say who did.
        // The lock goes first: whatever brings the module back needs it.
        Launched::Stopped(before, o) => {
            drop(lock.take());
            settle::held(node, m, service, before, o).await?
        }
        Launched::Stack(p) => stack::wait(progress, p).await?,
        Launched::Host(p) => host::wait(progress, p).await?,
    };
    Ok((outcome, changed))
}

/// The start verb on one target, refused before anything starts; with whether it changed anything.
async fn start_one(
    node: &Node,
    progress: &dyn Progress,
    t: &Target,
    opts: &StartOpts,
    force: bool,
    warnings: &mut Vec<String>,
) -> anyhow::Result<(Launched, bool)> {
    let m = &t.module;
    // Refused before anything starts; counted only when something did.
    let seen = stack::identity::refuse_start(&node.stacks, m).await?;
    let plan = plan(node, m, opts);
    node.store.check_limit(&m.name, plan.limit, force)?;
    desire(node, m, Desired::Up, warnings).await?;
    // Starting an active unit is a no-op for the init: free, as for a stack.
    let launched = match host::already_active(&node.hosts, m).await? {
        Some(o) => Ok(Launched::Unchanged(o)),
        // Nothing touched the containers since the refusal listed them.
        None => {
            let service = t.service.as_deref();
            let starting = Starting {
                m,
                service,
                plan,
                seen,
            };
            launch_planned(node, progress, starting).await
        }
    };
    let unchanged = matches!(launched, Ok(Launched::Unchanged(_)));
    if !unchanged {
        count(node, m, true, warnings).await?;
    }
    Ok((launched?, !unchanged))
}

/// The stop verb on one target, wanted down first; with whether it was not already inactive.
async fn stop_one(
    node: &Node,
    progress: &dyn Progress,
    t: &Target,
    grace: Option<Duration>,
    warnings: &mut Vec<String>,
) -> anyhow::Result<(Launched, bool)> {
    let (m, service) = (&t.module, t.service.as_deref());
    // One service stopped leaves its module wanted up: the rest of it runs.
    if service.is_none() {
        desire(node, m, Desired::Down, warnings).await?;
    }
    // Expected down before it goes, as the desired state: the
    // supervisor must not bring back what is being stopped.
    let ended = Ended::Stopped(service.map(str::to_string));
    ended::record(node, m, ended, warnings).await;
    let before = settle::Watchers::look(node, m).await;
    let changed = status::state_now(node, t).await != Some(State::Inactive);
    let stopped = stop(node, progress, m, service, grace).await?;
    Ok((Launched::Stopped(before, stopped), changed))
}

/// The supervisor's smallest repair of a stack, once it holds the lock.
async fn repair(
    node: &Node,
    progress: &dyn Progress,
    m: &Module,
    fixes: &[stack::Fix],
    opts: &StartOpts,
    warnings: &mut Vec<String>,
) -> anyhow::Result<Launched> {
    still_wanted(node, m)?;
    let fixes = &ended::not_stopped(node, m, fixes)?;
    count(node, m, false, warnings).await?;
    let stack = stack::Stack::of(m, None).ok_or_else(|| undriven(m))?;
    let env = node.stack_env(progress);
    Ok(Launched::Stack(
        stack::repair(env, &stack, fixes, plan(node, m, opts).timeout).await?,
    ))
}

/// Who starts the module in this verb (`None`: a stop).
fn starter(verb: &Verb) -> Option<ended::Starter> {
    match verb {
        Verb::Stop { .. } => None,
        Verb::Start { .. } | Verb::Restart { .. } | Verb::Rescue { .. } => {
            Some(ended::Starter::Person)
        }
        Verb::AutoRestart { .. } | Verb::Repair { .. } => Some(ended::Starter::Supervisor),
    }
}

/// The supervisor acts only on a module still wanted up once its lock is taken.
pub(super) fn still_wanted(node: &Node, m: &Module) -> anyhow::Result<()> {
    let (state, _) = node.store.read();
    let wanted = state.modules.get(&m.name).and_then(|r| r.desired);
    if wanted != Some(Desired::Up) {
        anyhow::bail!("left alone: it is no longer wanted up (stopped by request)");
    }
    Ok(())
}

pub(super) async fn reachable(node: &Node, m: &Module) -> anyhow::Result<()> {
    match &m.kind {
        Kind::Stack { .. } => node.stacks.engine().await.map(drop).map_err(Into::into),
        Kind::Host { scope, .. } => host::reachable(&*node.hosts.init(*scope)).map_err(Into::into),
        Kind::Invalid { .. } => Ok(()),
    }
}

pub(super) async fn count(
    node: &Node,
    m: &Module,
    force: bool,
    warnings: &mut Vec<String>,
) -> anyhow::Result<()> {
    let limit = limit_of(node, m);
    let (_, w) = node
        .store
        .count_start(&m.name, limit, force, Stamp::now())
        .await?;
    warnings.extend(w);
    Ok(())
}

fn limit_of(node: &Node, m: &Module) -> crate::module::config::RestartLimit {
    node.config.settings(&m.name).limit
}

async fn desire(
    node: &Node,
    m: &Module,
    d: Desired,
    warnings: &mut Vec<String>,
) -> anyhow::Result<()> {
    warnings.extend(node.store.set_desired(&m.name, d).await?);
    Ok(())
}
