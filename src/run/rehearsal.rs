//! The one plan: what a start would do to each service of some modules, and why (`hal plan`, and the `--dry-run` of start, restart and update, shaped by `Verb::rehearsal`).

use std::collections::BTreeMap;

use anyhow::Context;
use futures_util::StreamExt;

use crate::module::deps::Graph;
use crate::module::outcome::{StartOpts, StartPlan};
use crate::module::service_action::{ModulePlan, ServiceAction, ServicePlan, Why};
use crate::module::status::State;
use crate::module::target::Target;
use crate::run::node::Node;
use crate::run::status::states_now;

/// How a verb's `--dry-run` (or `update --check`) reads the plan
/// (`Verb::rehearsal`).
pub(crate) struct Rehearsal {
    /// The start the verb amounts to: its pull policy decides whether the
    /// registries are asked (`always`: `update`).
    pub opts: StartOpts,
    /// Every container is made anew whatever the plan says (`restart`:
    /// compose `down`, then the start).
    pub anew: bool,
}

/// Each target's plan, in the given order: a stack's from its files and
/// the engine's lists (GETs only), a unit's from its state; a module that
/// cannot be planned is its error. The modules a target requires and that
/// are not active are its `waits`.
pub(crate) async fn plan_each(
    node: &Node,
    targets: &[Target],
    how: &Rehearsal,
) -> Vec<anyhow::Result<ModulePlan>> {
    let hosts: Vec<_> = targets
        .iter()
        .filter(|t| t.module.is_host())
        .cloned()
        .collect();
    let mut host_states = states_now(node, &hosts).await.into_iter();
    let waits = match node.graph() {
        Ok(graph) => would_wait(node, &graph, targets).await,
        Err(_) => BTreeMap::new(),
    };
    let graph = node.graph().ok();
    // Each target with its unit's state (in the order `hosts` was read).
    let each: Vec<(&Target, Option<State>)> = targets
        .iter()
        .map(|t| {
            (
                t,
                if t.module.is_host() {
                    host_states.next()
                } else {
                    None
                },
            )
        })
        .collect();
    // Many stacks at once (`--jobs`' default): a plan waits on the engine
    // and on compose, as a start does.
    let plans: Vec<anyhow::Result<ModulePlan>> = futures_util::stream::iter(each)
        .map(|(t, state)| {
            let waits = waits.get(&t.module.name).cloned().unwrap_or_default();
            plan_one(node, graph.as_deref(), t, state, waits, how)
        })
        .buffered(node.jobs(None))
        .collect()
        .await;
    // What compose said of each project is kept for the next plan.
    node.keep_models();
    plans
}

/// One target's plan: a stack's from [`plan_stack`], a unit's from its state.
async fn plan_one(
    node: &Node,
    graph: Option<&Graph>,
    t: &Target,
    state: Option<State>,
    mut waits: Vec<Why>,
    how: &Rehearsal,
) -> anyhow::Result<ModulePlan> {
    let name = t.module.name.clone();
    let plan = match crate::stack::Stack::of(&t.module, None) {
        Some(stack) => plan_stack(node, graph, t, &stack, &how.opts)
            .await
            .with_context(|| format!("plan {}", t.label()))
            .map(|f| {
                waits.extend(f.waits);
                ModulePlan {
                    waits,
                    fails: f.fails,
                    name,
                    kind: "stack",
                    services: f.services,
                    error: None,
                }
            }),
        None => Ok(ModulePlan {
            kind: "host",
            services: vec![unit_plan(&t.module, state)],
            waits,
            fails: Vec::new(),
            name,
            error: None,
        }),
    };
    plan.map(|p| if how.anew { made_anew(p) } else { p })
}

/// One stack's plan; `MODULE/SERVICE`: that service's line alone. The
/// modules it requires (transitively) are asked which networks they make.
async fn plan_stack(
    node: &Node,
    graph: Option<&Graph>,
    t: &Target,
    stack: &crate::stack::Stack<'_>,
    opts: &StartOpts,
) -> anyhow::Result<crate::stack::Forecast> {
    let name = &t.module.name;
    let pull = StartPlan::new(opts, &node.config.settings(name)).pull;
    let required: Vec<_> = graph
        .map(|g| g.pull_in(std::slice::from_ref(name)))
        .unwrap_or_default()
        .iter()
        .filter(|n| *n != name)
        .filter_map(|n| node.inventory.get(n))
        .filter_map(|m| crate::stack::Stack::of(m, None))
        .collect();
    let mut f = crate::stack::forecast(
        &node.stacks,
        &node.store,
        stack,
        pull,
        &required,
        node.models(),
    )
    .await?;
    f.services
        .retain(|s| t.service.as_ref().is_none_or(|one| *one == s.service));
    Ok(f)
}

/// A restart's plan: compose `down` removes every container, and the start
/// makes each again; a unit is stopped and started. The start's own
/// reasons stay beside.
fn made_anew(mut plan: ModulePlan) -> ModulePlan {
    let host = plan.kind == "host";
    for s in &mut plan.services {
        match s.action {
            ServiceAction::Create | ServiceAction::Remove => continue,
            ServiceAction::Keep | ServiceAction::Start | ServiceAction::Recreate => {}
        }
        let (action, detail) = if host {
            (
                ServiceAction::Start,
                "the restart stops the unit and starts it",
            )
        } else {
            (
                ServiceAction::Recreate,
                "compose down removes it, then the start makes it again",
            )
        };
        s.action = action;
        s.reasons.push(Why::new("restart", detail));
    }
    plan
}

/// Each module whose requirements are not all active: the start starts
/// them first and waits for them (`requires`, each named with its state).
async fn would_wait(node: &Node, graph: &Graph, targets: &[Target]) -> BTreeMap<String, Vec<Why>> {
    let mut needed: Vec<String> = Vec::new();
    for t in targets {
        for e in graph.requires(&t.module.name) {
            if !needed.contains(&e.to) {
                needed.push(e.to.clone());
            }
        }
    }
    let reqs: Vec<Target> = needed
        .iter()
        .filter_map(|n| node.inventory.get(n).cloned().map(Target::whole))
        .collect();
    let states: BTreeMap<String, State> = reqs
        .iter()
        .map(|t| t.module.name.clone())
        .zip(states_now(node, &reqs).await)
        .collect();
    let mut out = BTreeMap::new();
    for t in targets {
        let why: Vec<Why> = graph
            .requires(&t.module.name)
            .into_iter()
            .filter(|e| states.get(&e.to) != Some(&State::Active))
            .map(|e| {
                let state = states.get(&e.to).map_or("unknown", |s| s.as_str());
                Why::new(
                    "requires",
                    format!(
                        "{} is {state}: the start starts it first and waits until it is active",
                        e.to
                    ),
                )
            })
            .collect();
        if !why.is_empty() {
            out.insert(t.module.name.clone(), why);
        }
    }
    out
}

/// A unit: kept while active, else started.
fn unit_plan(m: &crate::module::Module, state: Option<State>) -> ServicePlan {
    let unit = m.host_unit().map_or(m.name.clone(), |(u, _)| u.to_string());
    match state {
        Some(State::Active) => ServicePlan {
            service: unit,
            action: ServiceAction::Keep,
            reasons: Vec::new(),
        },
        other => ServicePlan {
            reasons: vec![Why::new(
                "unit",
                format!("{unit} is {}", other.map_or("unknown", |s| s.as_str())),
            )],
            service: unit,
            action: ServiceAction::Start,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_restart_recreates_what_a_start_keeps_and_leaves_creates_and_removes() {
        let kept = made_anew(ModulePlan::one_service(ServiceAction::Keep));
        assert_eq!(kept.services[0].action, ServiceAction::Recreate);
        assert_eq!(kept.services[0].reasons[0].what, "restart");
        for a in [ServiceAction::Create, ServiceAction::Remove] {
            let p = made_anew(ModulePlan::one_service(a));
            assert_eq!(p.services[0].action, a);
            assert!(p.services[0].reasons.is_empty());
        }
    }
}
