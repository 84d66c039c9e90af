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

use crate::run::steps::{Did, Launched, count, desire, invalid_kind, limit_of, still_wanted};
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
    stack::identity::refuse_start(&node.stacks, m).await?;
    node.store.check_limit(&m.name, limit_of(node, m), force)?;
    desire(node, m, Desired::Up, warnings).await?;
    // Starting an active unit is a no-op for the init: free, as for a stack.
    let launched = match host::already_active(&node.hosts, m).await? {
        Some(o) => Ok(Launched::Unchanged(o)),
        None => launch(node, progress, m, t.service.as_deref(), opts).await,
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
    let Kind::Stack { dir, .. } = &m.kind else {
        return Err(invalid_kind());
    };
    let stack = stack::Stack {
        name: &m.name,
        dir,
        service: None,
    };
    let timeout = opts
        .timeout
        .unwrap_or(node.config.settings(&m.name).timeout);
    let env = node.stack_env(progress);
    Ok(Launched::Stack(
        stack::repair(env, &stack, fixes, timeout).await?,
    ))
}

pub(super) async fn launch(
    node: &Node,
    progress: &dyn Progress,
    m: &Module,
    service: Option<&str>,
    opts: &StartOpts,
) -> anyhow::Result<Launched> {
    let settings = node.config.settings(&m.name);
    Ok(match &m.kind {
        Kind::Stack { dir, .. } => {
            let env = node.stack_env(progress);
            let stack = stack::Stack {
                name: &m.name,
                dir,
                service,
            };
            Launched::of(stack::launch(env, &stack, &settings, opts).await?)
        }
        Kind::Host { unit, scope } => {
            let timeout = opts.timeout.unwrap_or(settings.timeout);
            let init = node.hosts.init(*scope);
            match host::launch(init, progress, &m.name, unit, opts.wait, timeout).await? {
                host::Launch::Done(o) => Launched::Done(o),
                host::Launch::Wait(p) => Launched::Host(p),
            }
        }
        Kind::Invalid { .. } => return Err(invalid_kind()),
    })
}

async fn stop(
    node: &Node,
    progress: &dyn Progress,
    m: &Module,
    service: Option<&str>,
    grace: Option<Duration>,
) -> anyhow::Result<Outcome> {
    match &m.kind {
        Kind::Stack { dir, .. } => {
            let stack = stack::Stack {
                name: &m.name,
                dir,
                service,
            };
            stack::stop(node.stack_env(progress), &stack, grace).await
        }
        Kind::Host { unit, scope } => {
            let init = node.hosts.init(*scope);
            // systemd's own TimeoutStopSec= decides when the unit is killed;
            // -t bounds only how long hal waits for that.
            let timeout = grace.unwrap_or(node.config.settings(&m.name).timeout);
            host::stop(&*init, progress, &m.name, unit, timeout).await
        }
        Kind::Invalid { .. } => Err(invalid_kind()),
    }
}
