//! A module wanted up that is not active while something it requires is not started either (not active, nor running its settle second out: [`ModuleStatus::started`]) is *waiting* on it: `status` names the requirement, and `hal watch` does not charge, hold or alarm for it.

use crate::module::Module;
use crate::module::deps::Tie;
use crate::module::reason::{Reason, Reasons, Requirement};
use crate::module::status::{ModuleStatus, State};
use crate::module::target::Target;
use crate::run::node::Node;

/// The modules the targets require that are not whole targets themselves
/// (read beside them, for their state). None when the graph cannot be built.
pub(super) fn requirements(node: &Node, targets: &[Target]) -> Vec<Module> {
    let Ok(graph) = node.graph() else {
        return Vec::new();
    };
    let whole = |n: &str| {
        targets
            .iter()
            .any(|t| t.service.is_none() && t.module.name == n)
    };
    let mut out: Vec<Module> = Vec::new();
    for t in targets {
        for e in graph.requires(&t.module.name) {
            if whole(&e.to) || out.iter().any(|m| m.name == e.to) {
                continue;
            }
            if let Some(m) = node.inventory.get(&e.to) {
                out.push(m.clone());
            }
        }
    }
    out
}

/// Sets `waiting_on` (and says it first in the reason) of each status wanted
/// up and not active whose requirements are not all started ([`ModuleStatus::started`]). A requirement's
/// state is read from `statuses` (whole modules) or `required`.
pub(super) fn mark(node: &Node, statuses: &mut [ModuleStatus], required: &[ModuleStatus]) {
    let Ok(graph) = node.graph() else {
        return;
    };
    // Per requirement: whether it is started for a plain tie, and for a namespace tie.
    let known: Vec<(String, State, Reasons, [bool; 2])> = statuses
        .iter()
        .filter(|s| s.service.is_none())
        .chain(required)
        .map(|s| {
            let started = [s.started(false), s.started(true)];
            (s.name.clone(), s.state, s.reason.clone(), started)
        })
        .collect();
    for s in statuses.iter_mut() {
        if s.state == State::Active || !s.wanted_up() {
            continue;
        }
        let mut causes = Vec::new();
        for e in graph.requires(&s.name) {
            let Some((name, state, reason, started)) = known.iter().find(|k| k.0 == e.to) else {
                continue;
            };
            if started[usize::from(e.tie == Tie::Namespace)] || s.waiting_on.contains(name) {
                continue;
            }
            s.waiting_on.push(name.clone());
            causes.push(Requirement {
                name: name.clone(),
                state: *state,
                reason: reason.clone(),
            });
        }
        if causes.is_empty() {
            continue;
        }
        s.reason.first(Reason::WaitingOn(causes));
    }
}
