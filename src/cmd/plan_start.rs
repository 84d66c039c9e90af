//! `hal plan`: what the next start would do to each service of the modules asked, and why, changing nothing.

use std::collections::BTreeMap;

use anyhow::Context;

use crate::cli::PlanArgs;
use crate::cmd::ctx::Ctx;
use crate::error::Exit;
use crate::module::deps::Graph;
use crate::module::outcome::{StartOpts, StartPlan};
use crate::module::service_action::{ModulePlan, ServiceAction, ServicePlan, Why};
use crate::module::status::State;
use crate::module::target::Target;
use crate::output::plan_table::PlanView;
use crate::run::{self, Verb};

/// Plans every module asked, or fails as a start would (an engine nobody can
/// reach, a module that cannot be read) with no partial plan shown.
pub(crate) async fn run(ctx: &Ctx, a: PlanArgs) -> anyhow::Result<Exit> {
    let node = &ctx.node;
    let targets = node.targets(&a.modules, a.all)?;
    let opts = StartOpts {
        pull: None,
        wait: false,
        timeout: None,
    };
    let verb = Verb::Start {
        opts: opts.clone(),
        force: false,
    };
    // A graph that cannot be built is refused as `start` refuses it (exit 2).
    let graph = node.graph()?;
    run::check_reachable(node, &targets, &verb).await?;
    run::check_services(node, &targets).await?;
    for t in &targets {
        t.module.usable()?;
    }
    let hosts: Vec<_> = targets
        .iter()
        .filter(|t| t.module.is_host())
        .cloned()
        .collect();
    let mut host_states = run::states_now(node, &hosts).await.into_iter();
    let waits = would_wait(node, &graph, &targets).await;
    let mut plans = Vec::with_capacity(targets.len());
    // A module that cannot be planned is reported as `start --all` reports a
    // module that cannot start: its error, the others planned, exit non-zero.
    let mut failed = None;
    for t in &targets {
        let name = t.module.name.clone();
        let mut waits = waits.get(&name).cloned().unwrap_or_default();
        let plan = match crate::stack::Stack::of(&t.module, None) {
            Some(stack) => match plan_stack(node, &graph, t, &stack, &opts)
                .await
                .with_context(|| format!("plan {}", t.label()))
            {
                Ok(f) => {
                    waits.extend(f.waits);
                    ModulePlan {
                        waits,
                        fails: f.fails,
                        name,
                        kind: "stack",
                        services: f.services,
                        error: None,
                    }
                }
                Err(e) => {
                    ctx.ui.fail(&e);
                    failed.get_or_insert(crate::error::exit_of(&e));
                    unplanned(name, waits, &e)
                }
            },
            None => {
                let state = host_states.next();
                ModulePlan {
                    kind: "host",
                    services: vec![unit_plan(&t.module, state)],
                    waits,
                    fails: Vec::new(),
                    name,
                    error: None,
                }
            }
        };
        plans.push(plan);
    }
    ctx.ui.show(&PlanView::new(&plans, a.verbose));
    Ok(match failed {
        Some(exit) => exit,
        None if plans.iter().any(ModulePlan::changes) => Exit::NotActive,
        None => Exit::Ok,
    })
}

/// One stack's plan; `MODULE/SERVICE`: that service's line alone. The
/// modules it requires (transitively) are asked which networks they make.
async fn plan_stack(
    node: &crate::run::Node,
    graph: &Graph,
    t: &Target,
    stack: &crate::stack::Stack<'_>,
    opts: &StartOpts,
) -> anyhow::Result<crate::stack::Forecast> {
    let name = &t.module.name;
    let pull = StartPlan::new(opts, &node.config.settings(name)).pull;
    let required: Vec<_> = graph
        .pull_in(std::slice::from_ref(name))
        .iter()
        .filter(|n| *n != name)
        .filter_map(|n| node.inventory.get(n))
        .filter_map(|m| crate::stack::Stack::of(m, None))
        .collect();
    let mut f = crate::stack::forecast(&node.stacks, &node.store, stack, pull, &required).await?;
    f.services
        .retain(|s| t.service.as_ref().is_none_or(|one| *one == s.service));
    Ok(f)
}

/// A stack that could not be planned: its error, and no services (the plan
/// is not whole).
fn unplanned(name: String, waits: Vec<Why>, e: &anyhow::Error) -> ModulePlan {
    ModulePlan {
        name,
        kind: "stack",
        services: Vec::new(),
        waits,
        fails: Vec::new(),
        error: Some(crate::error::OneLine(e).to_string()),
    }
}

/// Each module whose requirements are not all active: the start starts
/// them first and waits for them (`requires`, each named with its state).
async fn would_wait(
    node: &crate::run::Node,
    graph: &Graph,
    targets: &[Target],
) -> BTreeMap<String, Vec<Why>> {
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
        .zip(run::states_now(node, &reqs).await)
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
