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

pub(super) async fn launch(
    node: &Node,
    progress: &dyn Progress,
    m: &Module,
    service: Option<&str>,
    plan: StartPlan,
) -> anyhow::Result<Launched> {
    let starting = Starting {
        m,
        service,
        plan,
        seen: None,
    };
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

pub(super) async fn stop(
    node: &Node,
    progress: &dyn Progress,
    m: &Module,
    service: Option<&str>,
    grace: Option<Duration>,
) -> anyhow::Result<Outcome> {
    let plan = stop_plan(node, m, grace);
    if let Some(stack) = stack::Stack::of(m, service) {
        return stack::stop(node.stack_env(progress), &stack, plan.grace).await;
    }
    let Some((unit, scope)) = m.host_unit() else {
        return Err(undriven(m));
    };
    let init = node.hosts.init(scope);
    host::stop(&*init, progress, &m.name, unit, plan.unit_wait).await
}

/// What a verb says of a module its backend cannot drive: an invalid one's
/// refusal ([`Module::usable`]), or that a stack verb was given no stack.
pub(super) fn undriven(m: &Module) -> anyhow::Error {
    match m.usable() {
        Err(e) => e.into(),
        Ok(()) => anyhow::anyhow!("{} is not a stack", m.name),
    }
}
