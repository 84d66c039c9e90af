//! `hal plan`: what the next start would do to each service of the modules asked, and why, changing nothing.

use anyhow::Context;

use crate::cli::PlanArgs;
use crate::cmd::ctx::Ctx;
use crate::error::Exit;
use crate::module::outcome::StartOpts;
use crate::module::service_action::{ModulePlan, ServiceAction, ServicePlan, Why};
use crate::module::status::State;
use crate::output::plan_table::PlanView;
use crate::run::{self, Verb};

/// Plans every module asked, or fails as a start would (an engine nobody can
/// reach, a module that cannot be read) with no partial plan shown.
pub(crate) async fn run(ctx: &Ctx, a: PlanArgs) -> anyhow::Result<Exit> {
    let node = &ctx.node;
    let targets = node.targets(&a.modules, a.all)?;
    let verb = Verb::Start {
        opts: StartOpts {
            pull: None,
            wait: false,
            timeout: None,
        },
        force: false,
    };
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
    let mut plans = Vec::with_capacity(targets.len());
    for t in &targets {
        let name = t.module.name.clone();
        let plan = match crate::stack::Stack::of(&t.module, None) {
            Some(stack) => {
                let mut services = crate::stack::forecast(&node.stacks, &stack)
                    .await
                    .with_context(|| format!("plan {}", t.label()))?;
                // `MODULE/SERVICE`: that service's line alone.
                services.retain(|s| t.service.as_ref().is_none_or(|one| *one == s.service));
                ModulePlan {
                    name,
                    kind: "stack",
                    services,
                }
            }
            None => {
                let state = host_states.next();
                ModulePlan {
                    kind: "host",
                    services: vec![unit_plan(&t.module, state)],
                    name,
                }
            }
        };
        plans.push(plan);
    }
    ctx.ui.show(&PlanView::new(&plans, a.verbose));
    Ok(if plans.iter().any(ModulePlan::changes) {
        Exit::NotActive
    } else {
        Exit::Ok
    })
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
