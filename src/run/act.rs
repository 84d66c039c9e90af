//! One verb's own work on one target, its lock taken: what it launches (start, stop, restart, rescue, repair, update), then the wait for `active` that settles it.

use std::time::Duration;

use crate::module::outcome::{Outcome, StartOpts};
use crate::module::progress::Progress;
use crate::module::status::{Desired, State};
use crate::module::target::Target;
use crate::module::{Kind, Module};
use crate::run::node::Node;
use crate::state::records::Ended;
use crate::{host, stack};

use crate::run::backend::{Starting, launch, launch_planned, plan, stop, undriven};
use crate::run::steps::{Did, Launched, count, desire, still_wanted};
use crate::run::verb::Verb;
use crate::run::{ended, settle, status, update};

/// The verb's own work on one target, its lock taken, up to what is left
/// to wait for; `did` says whether it started, stopped, restarted or
/// recreated anything.
pub(super) async fn act(
    node: &Node,
    progress: &dyn Progress,
    t: &Target,
    verb: &Verb,
    did: &mut Did,
) -> anyhow::Result<Launched> {
    let m = &t.module;
    let service = t.service.as_deref();
    let warnings = &mut did.warnings;
    // Restarts, rescues and repairs always change something.
    let (launched, changed) = match verb {
        Verb::Start { opts, force } => start_one(node, progress, t, opts, *force, warnings).await?,
        Verb::Stop { grace } => stop_one(node, progress, t, *grace, warnings).await?,
        Verb::Restart { opts, force } => {
            let plan = plan(node, m, opts);
            // Refuse before stopping: a held module must not be left down.
            stack::identity::refuse_start(&node.stacks, m).await?;
            count(node, m, plan.limit, *force, warnings).await?;
            desire(node, m, Desired::Up, warnings).await?;
            stop(node, progress, m, service, None).await?;
            (launch(node, progress, m, service, plan).await?, true)
        }
        Verb::AutoRestart { opts } => {
            let plan = plan(node, m, opts);
            still_wanted(node, m)?;
            count(node, m, plan.limit, false, warnings).await?;
            stop(node, progress, m, service, None).await?;
            (launch(node, progress, m, service, plan).await?, true)
        }
        Verb::Repair { fixes, opts } => (
            repair(node, progress, m, fixes, opts, warnings).await?,
            true,
        ),
        Verb::Rescue { opts } => {
            let plan = plan(node, m, opts);
            warnings.extend(node.store.reset(&m.name).await?);
            if let Kind::Host { unit, scope } = &m.kind {
                host::reset_failed(&*node.hosts.init(*scope), unit).await?;
            }
            count(node, m, plan.limit, false, warnings).await?;
            desire(node, m, Desired::Up, warnings).await?;
            stop(node, progress, m, service, None).await?;
            (launch(node, progress, m, service, plan).await?, true)
        }
        // An update says what it changed as it goes: a failed recreate still counted.
        Verb::Update { opts } => return update::act(node, progress, m, opts, did).await,
    };
    did.changed = changed;
    Ok(launched)
}

/// What a launch left, waited for: the outcome, or the error (a rollback
/// said in `did`).
pub(super) async fn wait(
    node: &Node,
    progress: &dyn Progress,
    t: &Target,
    launched: Launched,
    lock: &mut Option<crate::state::ModuleLock>,
    did: &mut Did,
) -> anyhow::Result<Outcome> {
    let rolled = match launched {
        Launched::Done(o) | Launched::Unchanged(o) => return Ok(o),
        // A stop that something undoes is not a success: say who did.
        // The lock goes first: whatever brings the module back needs it.
        Launched::Stopped(before, o) => {
            drop(lock.take());
            let service = t.service.as_deref();
            return settle::held(node, &t.module, service, before, o).await;
        }
        Launched::Host(p) => return host::wait(progress, p).await,
        Launched::Stack(p) => match stack::wait(progress, p).await? {
            stack::Waited::Active(o) => return Ok(o),
            stack::Waited::RolledBack(r) => r,
        },
        Launched::RolledBack(r) => r,
    };
    did.rolled_back = Some(rolled.restored);
    Err(rolled.error)
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
        count(node, m, limit, true, warnings).await?;
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
    let plan = plan(node, m, opts);
    still_wanted(node, m)?;
    let fixes = &ended::not_stopped(node, m, fixes)?;
    count(node, m, plan.limit, false, warnings).await?;
    let stack = stack::Stack::of(m, None).ok_or_else(|| undriven(m))?;
    let env = node.stack_env(progress);
    Ok(Launched::Stack(
        stack::repair(env, &stack, fixes, plan.timeout).await?,
    ))
}
