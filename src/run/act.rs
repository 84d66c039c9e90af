//! One verb's own work on one target, its lock taken: what it launches (start, stop, restart, rescue, repair, update), then the wait for `active` that settles it; each returns what it did (`Did`) with its value or its failure.

use std::time::Duration;

use crate::module::Module;
use crate::module::outcome::{Outcome, StartOpts, StartPlan};
use crate::module::status::{Desired, State};
use crate::module::target::Target;
use crate::module::warning::Warning;
use crate::state::records::Ended;
use crate::{host, stack};

use crate::run::backend::{Starting, Stopping, launch_planned, plan, restart, stop, undriven};
use crate::run::steps::{Did, Launched, Turn, Worked, count, desire, still_wanted};
use crate::run::verb::Verb;
use crate::run::{ended, settle, status, unfinished, update};

/// The verb's own work on one target, its lock taken, up to what is left
/// to wait for, with what it did: its warnings, and whether it started,
/// stopped, restarted or recreated anything. An update another hal left
/// unfinished is ended first, and said (`unfinished.rs`).
pub(super) async fn act(turn: Turn<'_>, t: &Target) -> Worked<Launched> {
    let found = unfinished::recover(turn.node, turn.progress, &t.module, turn.verb).await?;
    let mut worked = act_on(turn, t).await;
    if let Some(w) = found {
        match &mut worked {
            Ok((_, did)) => did.warnings.insert(0, w),
            Err(f) => f.did.warnings.insert(0, w),
        }
    }
    worked
}

/// [`act`] once no update is left unfinished.
async fn act_on(turn: Turn<'_>, t: &Target) -> Worked<Launched> {
    let (node, progress) = (turn.node, turn.progress);
    let m = &t.module;
    // Restarts, rescues and repairs always change something.
    let changed = Did {
        changed: true,
        ..Did::default()
    };
    Ok(match turn.verb {
        Verb::Start { opts, force } => start_one(turn, t, opts, *force).await?,
        Verb::Stop { grace } => stop_one(turn, t, *grace).await?,
        Verb::Restart { opts, force } => {
            let mut did = changed;
            let plan = plan(node, m, opts);
            // Refuse before stopping: a held module must not be left down.
            // What it listed is the stop's: nothing changes it in between.
            let seen = stack::identity::refuse_start(&node.stacks, m).await?;
            did.warnings
                .extend(count(node, m, plan.limit, *force).await?);
            did.warnings.extend(desire(node, m, Desired::Up).await?);
            (restart(node, progress, starting(t, plan, seen)).await?, did)
        }
        Verb::AutoRestart { opts } => {
            let mut did = changed;
            let plan = plan(node, m, opts);
            still_wanted(node, m)?;
            did.warnings
                .extend(count(node, m, plan.limit, false).await?);
            (restart(node, progress, starting(t, plan, None)).await?, did)
        }
        Verb::Repair { fixes, opts } => repair(turn, m, fixes, opts).await?,
        Verb::Rescue { opts } => {
            let mut did = changed;
            let plan = plan(node, m, opts);
            did.warnings
                .extend(Warning::of_state(node.store.reset(&m.name).await?));
            if let Some((unit, scope)) = m.host_unit() {
                host::reset_failed(&*node.hosts.init(scope), unit).await?;
            }
            did.warnings
                .extend(count(node, m, plan.limit, false).await?);
            did.warnings.extend(desire(node, m, Desired::Up).await?);
            (restart(node, progress, starting(t, plan, None)).await?, did)
        }
        // An update says what it changed as it goes: a failed recreate still counted.
        Verb::Update { opts } => return update::act(node, progress, m, opts).await,
        // `verb` says a plan and never runs it.
        Verb::Plan { .. } => return Err(anyhow::anyhow!("a plan is said, never run").into()),
    })
}

/// What a launch left, waited for, with what the work did (`did`, handed
/// on): the outcome, or the error (a rollback said in what it did).
pub(super) async fn wait(
    turn: Turn<'_>,
    t: &Target,
    launched: Launched,
    lock: &mut Option<crate::state::ModuleLock>,
    did: Did,
) -> Worked<Outcome> {
    let (node, progress) = (turn.node, turn.progress);
    let rolled = match launched {
        Launched::Done(o) | Launched::Unchanged(o) => return Ok((o, did)),
        // A stop that something undoes is not a success: say who did.
        // The lock goes first: whatever brings the module back needs it.
        Launched::Stopped(before, o) => {
            drop(lock.take());
            let service = t.service.as_deref();
            return did.with(settle::held(node, &t.module, service, before, o).await);
        }
        Launched::Host(p) => return did.with(host::wait(progress, p).await),
        Launched::Stack(p)
            if !(did.update.dependents.is_empty() && did.update.followers.is_empty()) =>
        {
            let held = crate::run::dependents::Held {
                node,
                run: turn.again,
                module: &t.module.name,
                dependents: &did.update.dependents,
                followers: &did.update.followers,
                said: &did.followed,
            };
            let hold = |bound| held.hold(bound);
            match stack::wait_holding(progress, p, Some(&hold)).await {
                Ok(stack::Waited::Active(o)) => return Ok((o, did)),
                Ok(stack::Waited::RolledBack(r)) => r,
                Err(e) => return Err(did.failed(e)),
            }
        }
        Launched::Stack(p) => match stack::wait(progress, p).await {
            Ok(stack::Waited::Active(o)) => return Ok((o, did)),
            Ok(stack::Waited::RolledBack(r)) => r,
            Err(e) => return Err(did.failed(e)),
        },
        Launched::RolledBack(r) => r,
    };
    let did = Did {
        rolled_back: Some(rolled.restored),
        ..did
    };
    Err(did.failed(rolled.error))
}

/// The start verb on one target, refused before anything starts; with its
/// warnings and whether it changed anything.
async fn start_one(
    turn: Turn<'_>,
    t: &Target,
    opts: &StartOpts,
    force: bool,
) -> anyhow::Result<(Launched, Did)> {
    let mut did = Did::default();
    let (node, progress) = (turn.node, turn.progress);
    let m = &t.module;
    // Refused before anything starts; counted only when something did.
    let seen = stack::identity::refuse_start(&node.stacks, m).await?;
    let plan = plan(node, m, opts);
    node.store.check_limit(&m.name, plan.limit, force)?;
    did.warnings.extend(desire(node, m, Desired::Up).await?);
    // Starting an active unit is a no-op for the init: free, as for a stack.
    let limit = plan.limit;
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
        did.warnings.extend(count(node, m, limit, true).await?);
    }
    did.changed = !unchanged;
    Ok((launched?, did))
}

/// The stop verb on one target, wanted down first; with its warnings and
/// whether it was not already inactive.
async fn stop_one(
    turn: Turn<'_>,
    t: &Target,
    grace: Option<Duration>,
) -> anyhow::Result<(Launched, Did)> {
    let mut did = Did::default();
    let (node, progress) = (turn.node, turn.progress);
    let (m, service) = (&t.module, t.service.as_deref());
    // One service stopped leaves its module wanted up: the rest of it runs.
    if service.is_none() {
        did.warnings.extend(desire(node, m, Desired::Down).await?);
    }
    // Expected down before it goes, as the desired state: the
    // supervisor must not bring back what is being stopped.
    let ended = Ended::Stopped(service.map(str::to_string));
    did.warnings.extend(ended::record(node, m, ended).await);
    let before = settle::Watchers::look(node, m).await;
    // A stack's containers are listed once: its state before, and the stop's.
    let seen = stack::Snapshot::take(&node.stacks, m).await;
    let state = match &seen {
        Some(seen) => Some(status::state_seen(node, t, seen).await),
        None => status::state_now(node, t).await,
    };
    did.changed = state != Some(State::Inactive);
    let stopping = Stopping {
        m,
        service,
        grace,
        seen,
    };
    let (stopped, _) = stop(node, progress, stopping).await?;
    Ok((Launched::Stopped(before, stopped), did))
}

/// A target's start with its plan, and its containers as just listed.
fn starting(t: &Target, plan: StartPlan, seen: Option<stack::Snapshot>) -> Starting<'_> {
    Starting {
        m: &t.module,
        service: t.service.as_deref(),
        plan,
        seen,
    }
}

/// The supervisor's smallest repair of a stack, once it holds the lock;
/// with its warnings.
async fn repair(
    turn: Turn<'_>,
    m: &Module,
    fixes: &[crate::module::fix::Fix],
    opts: &StartOpts,
) -> anyhow::Result<(Launched, Did)> {
    let (node, progress) = (turn.node, turn.progress);
    let plan = plan(node, m, opts);
    still_wanted(node, m)?;
    let fixes = &ended::not_stopped(node, m, fixes)?;
    let did = Did {
        warnings: count(node, m, plan.limit, false)
            .await?
            .into_iter()
            .collect(),
        changed: true,
        ..Did::default()
    };
    let stack = stack::Stack::of(m, None).ok_or_else(|| undriven(m))?;
    let env = node.stack_env(progress);
    let launched = Launched::Stack(stack::repair(env, &stack, fixes, plan.timeout).await?);
    Ok((launched, did))
}
