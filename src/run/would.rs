//! `--dry-run`: what a verb would do to each target, said from the plan (`rehearsal.rs`) for a start or restart, from the state alone for a stop; nothing is touched.

use std::time::Instant;

use crate::module::outcome::{Outcome, Would};
use crate::module::reason::Reasons;
use crate::module::service_action::{ModulePlan, ServiceAction};
use crate::module::status::State;
use crate::module::target::Target;
use crate::run::node::Node;
use crate::run::rehearsal::plan_each;
use crate::run::report::Report;
use crate::run::verb::Verb;

/// What a start of a module found in `state` would do, by its plan: a
/// container replaced or removed is a recreate; else one made or started
/// (or a module not active) is a start.
fn start_would(state: State, plan: &ModulePlan) -> Would {
    let acts = |a: ServiceAction| plan.services.iter().any(|s| s.action == a);
    if acts(ServiceAction::Recreate) || acts(ServiceAction::Remove) {
        return Would::Recreate;
    }
    if state != State::Active || acts(ServiceAction::Start) || acts(ServiceAction::Create) {
        return Would::Start;
    }
    Would::None
}

/// What a stop of `t`, found in `state`, would do.
fn stop_would(state: Option<State>) -> Would {
    if state == Some(State::Inactive) {
        Would::None
    } else {
        Would::Stop
    }
}

/// `--dry-run`: a report per target saying what `verb` would do, its state
/// now as the outcome and, for a verb that plans ([`Verb::rehearsal`]),
/// each service's action and why; nothing is touched and nothing is
/// counted. A module that cannot be planned is its error, as its start's.
pub(crate) async fn plan(node: &Node, targets: Vec<Target>, verb: &Verb) -> Vec<Report> {
    let mut out = Vec::with_capacity(targets.len());
    // Their states read at once: one list call for all their stacks.
    // Each report's time counts that read and the plans.
    let began = Instant::now();
    // A plan alone (`hal plan`) says no state: none is read.
    let states = if verb.only_plans() {
        vec![State::Unknown; targets.len()]
    } else {
        crate::run::status::states_now(node, &targets).await
    };
    let plans = match verb.rehearsal() {
        Some(how) => plan_each(node, &targets, &how)
            .await
            .into_iter()
            .map(Some)
            .collect(),
        None => Vec::new(),
    };
    let mut plans = plans.into_iter();
    let took = began.elapsed();
    for (t, state) in targets.into_iter().zip(states) {
        let planned = plans.next().flatten();
        let (would, plan, result) = match (verb, planned) {
            (_, Some(Err(e))) => (None, None, Err(e)),
            (Verb::Restart { .. }, Some(Ok(p))) => (Some(Would::Restart), Some(p), Ok(())),
            (_, Some(Ok(p))) => (Some(start_would(state, &p)), Some(p), Ok(())),
            (Verb::Stop { .. }, None) => (Some(stop_would(Some(state))), None, Ok(())),
            // A verb with no plan of its own restarts (or recreates)
            // whatever it finds: a new verb must say in `Verb::rehearsal`.
            (_, None) => (Some(Would::Restart), None, Ok(())),
        };
        out.push(Report {
            module: t.module,
            service: t.service,
            result: result.map(|()| Outcome {
                state,
                reason: Reasons::none(),
                warnings: Vec::new(),
            }),
            took,
            changed: false,
            would,
            plan,
            update: None,
            followed: Vec::new(),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stop_of_a_stopped_module_would_do_nothing() {
        assert_eq!(stop_would(Some(State::Inactive)), Would::None);
        assert_eq!(stop_would(Some(State::Failed)), Would::Stop);
        assert_eq!(stop_would(None), Would::Stop);
    }

    #[test]
    fn an_active_module_would_be_recreated_only_when_its_plan_says_so() {
        let plan = ModulePlan::one_service;
        assert_eq!(
            start_would(State::Active, &plan(ServiceAction::Keep)),
            Would::None
        );
        assert_eq!(
            start_would(State::Active, &plan(ServiceAction::Recreate)),
            Would::Recreate
        );
        assert_eq!(
            start_would(State::Inactive, &plan(ServiceAction::Keep)),
            Would::Start
        );
    }
}
