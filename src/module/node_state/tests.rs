//! The node's state from made-up statuses and a made-up clock.

use super::*;
use crate::module::KindTag;
use crate::module::status::{Desired, HeldStatus};

const TIMEOUT: Duration = Duration::from_secs(120);

fn t(secs: i64) -> Stamp {
    Stamp::from_secs(secs)
}

fn m(name: &str, state: State, desired: Option<Desired>) -> ModuleStatus {
    ModuleStatus {
        desired,
        ..ModuleStatus::named(name, KindTag::Stack, state)
    }
}

fn node(statuses: &[ModuleStatus], up: Option<i64>, now: i64) -> NodeSummary {
    let wanted: Vec<Wanted<'_>> = statuses
        .iter()
        .map(|status| Wanted {
            status,
            timeout: TIMEOUT,
        })
        .collect();
    judge(&wanted, up.map(t), t(now))
}

#[test]
fn every_module_wanted_up_active_is_running_whatever_the_clock() {
    let all = [
        m("a", State::Active, Some(Desired::Up)),
        m("b", State::Failed, Some(Desired::Down)),
        m("c", State::Inactive, None),
    ];
    let n = node(&all, Some(1000), 1001);
    assert_eq!(n.state, NodeState::Running);
    assert_eq!((n.wanted, n.not_active.len(), n.until), (1, 0, None));
    assert_eq!(node(&[], None, 5).state, NodeState::Running);
}

#[test]
fn a_module_not_active_inside_its_window_is_starting_then_degraded_after() {
    let all = [
        m("a", State::Active, Some(Desired::Up)),
        m("db", State::Degraded, Some(Desired::Up)),
        m("web", State::Inactive, Some(Desired::Up)),
    ];
    let n = node(&all, Some(1000), 1030);
    assert_eq!(n.state, NodeState::Starting);
    assert_eq!(n.until, Some(t(1120)));
    assert_eq!(n.not_active, ["db", "web"]);
    assert!(n.line().starts_with("node: starting ("), "{}", n.line());
    let later = node(&all, Some(1000), 1120);
    assert_eq!(later.state, NodeState::Degraded);
    assert_eq!(later.until, None);
    assert!(
        later.line().contains("not active: db, web"),
        "{}",
        later.line()
    );
}

#[test]
fn a_failed_module_ends_the_wait_even_inside_its_window() {
    let all = [
        m("db", State::Failed, Some(Desired::Up)),
        m("web", State::Starting, Some(Desired::Up)),
    ];
    let n = node(&all, Some(1000), 1010);
    assert_eq!(n.state, NodeState::Degraded);
    assert_eq!(n.until, None);
    assert_eq!(n.not_active, ["db", "web"]);
    assert!(n.line().contains("not active: db, web"), "{}", n.line());
    // Without it, the one still coming up keeps the node starting.
    assert_eq!(node(&all[1..], Some(1000), 1010).state, NodeState::Starting);
}

#[test]
fn a_held_module_is_a_failure_that_stays_even_inside_the_window() {
    // (Degraded, not failed: the hold alone ends its wait.)
    let mut held = m("db", State::Degraded, Some(Desired::Up));
    held.held = Some(HeldStatus::default());
    let all = [held, m("web", State::Starting, Some(Desired::Up))];
    assert_eq!(node(&all, Some(1000), 1010).state, NodeState::Degraded);
}

#[test]
fn without_a_known_start_a_module_not_active_is_degraded() {
    let all = [m("db", State::Starting, Some(Desired::Up))];
    assert_eq!(node(&all, None, 1010).state, NodeState::Degraded);
}

#[test]
fn one_service_rows_do_not_count_twice() {
    let mut one = m("web", State::Failed, Some(Desired::Up));
    one.service = Some("worker".into());
    let all = [m("web", State::Active, Some(Desired::Up)), one];
    assert_eq!(node(&all, Some(0), 10_000).state, NodeState::Running);
}
