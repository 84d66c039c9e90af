//! A start or a stop handed to the module's backend (a stack, or a host unit), its flags and config resolved into one plan first.

use std::time::Duration;

use crate::module::Module;
use crate::module::outcome::{Outcome, StartOpts, StartPlan, StopPlan};
use crate::module::progress::Progress;
use crate::run::node::Node;
use crate::run::steps::Launched;
use crate::{host, stack};

/// The start's flags over the module's config, resolved once: with
/// [`stop_plan`], the one place run/ merges them (`StartPlan::new`).
pub(super) fn plan(node: &Node, m: &Module, opts: &StartOpts) -> StartPlan {
    StartPlan::new(opts, &node.config.settings(&m.name))
}

/// The stop's flag over the module's config, resolved once (`StopPlan::new`).
fn stop_plan(node: &Node, m: &Module, grace: Option<Duration>) -> StopPlan {
    StopPlan::new(grace, &node.config.settings(&m.name))
}

/// One target's start resolved before it launches: what it starts, its plan,
/// and the containers as the refusal just listed them (`None`: list them).
pub(super) struct Starting<'a> {
    pub(super) m: &'a Module,
    pub(super) service: Option<&'a str>,
    pub(super) plan: StartPlan,
    pub(super) seen: Option<stack::Snapshot>,
}

/// One target's stop resolved before it goes: what it stops, the stop's
/// flag, and its project's containers as just listed under its lock
/// (`None`: the stop lists them).
pub(super) struct Stopping<'a> {
    pub(super) m: &'a Module,
    pub(super) service: Option<&'a str>,
    pub(super) grace: Option<Duration>,
    pub(super) seen: Option<stack::Snapshot>,
}

/// A stop then a start of one target (restart, rescue, the supervisor's
/// restart), with the flag's default grace: the stop takes `s.seen`, and the
/// start takes the project's containers as the stop left them.
pub(super) async fn restart(
    node: &Node,
    progress: &dyn Progress,
    s: Starting<'_>,
) -> anyhow::Result<Launched> {
    let (m, service) = (s.m, s.service);
    let stopping = Stopping {
        m,
        service,
        grace: None,
        seen: s.seen,
    };
    let (_, left) = stop(node, progress, stopping).await?;
    let starting = Starting { seen: left, ..s };
    launch_planned(node, progress, starting).await
}

pub(super) async fn launch_planned(
    node: &Node,
    progress: &dyn Progress,
    s: Starting<'_>,
) -> anyhow::Result<Launched> {
    let Starting {
        m,
        service,
        plan,
        seen,
    } = s;
    if let Some(stack) = stack::Stack::of(m, service) {
        let env = node.stack_env(progress);
        return Ok(Launched::of(stack::launch(env, &stack, &plan, seen).await?));
    }
    let Some((unit, scope)) = m.host_unit() else {
        return Err(undriven(m));
    };
    let init = node.hosts.init(scope);
    Ok(
        match host::launch(init, progress, &m.name, unit, &plan).await? {
            host::UnitLaunch::Done(o) => Launched::Done(o),
            host::UnitLaunch::Wait(p) => Launched::Host(p),
        },
    )
}

/// A target's stop: its outcome, and for a stack the project's containers
/// as the stop left them.
pub(super) async fn stop(
    node: &Node,
    progress: &dyn Progress,
    s: Stopping<'_>,
) -> anyhow::Result<(Outcome, Option<stack::Snapshot>)> {
    let Stopping {
        m,
        service,
        grace,
        seen,
    } = s;
    let plan = stop_plan(node, m, grace);
    if let Some(stack) = stack::Stack::of(m, service) {
        let env = node.stack_env(progress);
        let (outcome, left) = stack::stop(env, &stack, plan.grace, seen).await?;
        return Ok((outcome, Some(left)));
    }
    let Some((unit, scope)) = m.host_unit() else {
        return Err(undriven(m));
    };
    let init = node.hosts.init(scope);
    let outcome = host::stop(&*init, progress, &m.name, unit, plan.unit_wait).await?;
    Ok((outcome, None))
}

/// What a verb says of a module its backend cannot drive: an invalid one's
/// refusal ([`Module::usable`]), or that a stack verb was given no stack.
pub(super) fn undriven(m: &Module) -> anyhow::Error {
    match m.usable() {
        Err(e) => e.into(),
        Ok(()) => anyhow::anyhow!("{} is not a stack", m.name),
    }
}
