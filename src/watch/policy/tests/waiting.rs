//! Waiting on a requirement, and a dead network namespace: the supervisor's rules with made-up statuses.

use super::*;

/// Module `m`, wanted up and failed, while `db` (which it requires) is not active.
fn waiting(services: Vec<ServiceStatus>) -> ModuleStatus {
    ModuleStatus {
        waiting_on: vec!["db".into()],
        reason: crate::module::reason::Reasons::said(Some(
            "waiting on db (db: failed (service db exited with code 1))".into(),
        )),
        ..stack(State::Failed, Some(Desired::Up), services)
    }
}

#[test]
fn a_module_waiting_on_its_requirement_is_neither_repaired_nor_held_nor_charged() {
    let mut sup = Supervisor::new(GRACE);
    let mut s = waiting(vec![exited("app", 1)]);
    // Its start limit is hit: without the wait it would be held (and on_failure run).
    s.limit.free_at = Some(t(500));
    let a = acts(&mut sup, &s, 0);
    assert_eq!(a.len(), 1, "{a:?}");
    assert_eq!(a[0].0, Act::Wait);
    assert!(a[0].1.starts_with("waiting on db (db: failed"), "{a:?}");
    // Said once: the next looks decide nothing while it waits.
    for now in [10, 100, 1000] {
        assert!(acts(&mut sup, &s, now).is_empty());
    }
    assert!(sup.hold("m").is_none());
    assert!(sup.holds().is_empty());
}

#[test]
fn a_held_module_that_starts_waiting_is_let_go() {
    let mut sup = Supervisor::new(GRACE);
    let mut s = stack(State::Failed, Some(Desired::Up), vec![exited("app", 1)]);
    s.limit.free_at = Some(t(500));
    assert_eq!(acts(&mut sup, &s, 0)[0].0, Act::Hold);
    let a = acts(&mut sup, &waiting(vec![exited("app", 1)]), 5);
    let words: Vec<Act> = a.iter().map(|(act, _)| act.clone()).collect();
    assert_eq!(words, [Act::Release, Act::Wait], "{a:?}");
    assert!(sup.hold("m").is_none());
}

#[test]
fn once_its_requirement_is_back_a_waiting_module_is_repaired_at_once() {
    let mut sup = Supervisor::new(GRACE);
    // A failed repair before the wait left a pause: the wait lets go of it.
    let s = stack(State::Failed, Some(Desired::Up), vec![exited("app", 1)]);
    assert_eq!(acts(&mut sup, &s, 0)[0].0, Act::Restart);
    assert!(!sup.record("m", Attempt::Failed, t(1)));
    assert!(acts(&mut sup, &waiting(vec![looping("app", 9)]), 1)[0].0 == Act::Wait);
    assert_eq!(sup.unblocked(&["db"]), ["m"]);
    assert!(sup.unblocked(&["other"]).is_empty());
    // Looked at again while m waits on it (it may turn active without an event).
    assert_eq!(sup.waited_on().into_iter().collect::<Vec<_>>(), ["db"]);
    // db is active: Docker is still in its restart back-off for app (not
    // given up, so no repair otherwise), and app is restarted now.
    let back = stack(State::Failed, Some(Desired::Up), vec![looping("app", 1)]);
    let d = sup.decide(std::slice::from_ref(&back), t(2));
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!(d[0].act, Act::Restart);
    assert!(
        d[0].reason
            .to_string()
            .starts_with("its requirement is back"),
        "{d:?}"
    );
    let RepairScope::Containers(fixes) = &d[0].scope else {
        panic!("{d:?}");
    };
    assert_eq!(fixes[0].how, How::Restart);
    assert!(sup.unblocked(&["db"]).is_empty());
    assert!(sup.waited_on().is_empty());
}

#[test]
fn a_container_in_a_dead_network_namespace_is_restarted_or_recreated() {
    use crate::module::status::{ProviderFate, StaleNamespace};
    let mut sup = Supervisor::new(GRACE);
    let mut row = svc("tun", "running");
    row.stale = Some(StaleNamespace {
        provider: "gw-main".into(),
        fate: ProviderFate::StartedAgain,
    });
    let s = stack(
        State::Degraded,
        Some(Desired::Up),
        vec![svc("web", "running"), row.clone()],
    );
    let d = sup.decide(std::slice::from_ref(&s), t(0));
    assert_eq!(d.len(), 1, "{d:?}");
    assert!(
        d[0].reason
            .to_string()
            .contains("gw-main started again after it"),
        "{d:?}"
    );
    let RepairScope::Containers(fixes) = &d[0].scope else {
        panic!("{d:?}");
    };
    assert_eq!((fixes.len(), fixes[0].how), (1, How::Restart), "{d:?}");
    row.stale = Some(StaleNamespace {
        provider: "0123456789ab".into(),
        fate: ProviderFate::Gone,
    });
    let s = stack(State::Degraded, Some(Desired::Up), vec![row.clone()]);
    let d = Supervisor::new(GRACE).decide(std::slice::from_ref(&s), t(0));
    let RepairScope::Containers(fixes) = &d[0].scope else {
        panic!("{d:?}");
    };
    assert_eq!(fixes[0].how, How::Recreate, "{d:?}");
    // Its provider stopped: nothing it could join, so nothing to repair here
    // (the provider's start, its own repair, says "started again after it").
    row.stale = Some(StaleNamespace {
        provider: "gw-main".into(),
        fate: ProviderFate::Stopped,
    });
    let s = stack(State::Degraded, Some(Desired::Up), vec![row]);
    let d = Supervisor::new(GRACE).decide(std::slice::from_ref(&s), t(0));
    assert!(d.is_empty(), "{d:?}");
}

/// `db`, starting: one container running with its healthcheck saying `health`
/// (none: only its settle second to go).
fn db_starting(health: Option<Health>) -> ModuleStatus {
    let row = ServiceStatus {
        health,
        verdict: Some(Verdict::Starting),
        ..svc("db", "running")
    };
    ModuleStatus {
        name: "db".into(),
        ..stack(State::Starting, Some(Desired::Up), vec![row])
    }
}

#[test]
fn a_requirement_is_started_once_its_containers_run_unless_a_healthcheck_has_not_said() {
    // (plain requires, network namespace tie)
    let settling = db_starting(None);
    assert_eq!(
        (settling.started(false), settling.started(true)),
        (true, true)
    );
    let checking = db_starting(Some(Health::Starting));
    assert_eq!(
        (checking.started(false), checking.started(true)),
        (false, true)
    );
    let up = stack(State::Active, Some(Desired::Up), vec![svc("db", "running")]);
    assert!(up.started(false));
    for s in [
        stack(State::Failed, Some(Desired::Up), vec![exited("db", 1)]),
        stack(State::Inactive, Some(Desired::Up), vec![]),
        stack(State::Starting, Some(Desired::Up), vec![]),
        ModuleStatus {
            state: State::Degraded,
            ..db_starting(None)
        },
        unit(State::Starting, "activating/start"),
    ] {
        assert!(!s.started(true), "{s:?}");
    }
    // Restarted by Docker after a crash: it may crash again, so not before its settle second.
    let mut looping = db_starting(None);
    looping.services[0].restart_count = Some(1);
    assert!(!looping.started(true));
    // One container still stopped: not started.
    let mut half = db_starting(None);
    half.services.push(exited("db2", 1));
    assert!(!half.started(true));
}

#[test]
fn a_dependent_is_repaired_once_its_requirement_runs_and_waits_again_uncharged_if_it_fails() {
    let mut sup = Supervisor::new(GRACE);
    assert_eq!(
        acts(&mut sup, &waiting(vec![exited("app", 1)]), 0)[0].0,
        Act::Wait
    );
    // db's containers run (its settle second not out): m no longer waits, and is repaired now.
    let go = stack(State::Failed, Some(Desired::Up), vec![exited("app", 1)]);
    let a = acts(&mut sup, &go, 1);
    assert_eq!(a.len(), 1, "{a:?}");
    assert_eq!(a[0].0, Act::Restart);
    // db fails after all, and so does m's repair: m waits again, at its start limit or not.
    assert!(!sup.record("m", Attempt::Failed, t(2)));
    let mut again = waiting(vec![exited("app", 1)]);
    again.limit.free_at = Some(t(500));
    let a = acts(&mut sup, &again, 3);
    assert_eq!(
        a.iter().map(|x| x.0.clone()).collect::<Vec<_>>(),
        [Act::Wait],
        "{a:?}"
    );
    assert!(sup.holds().is_empty());
    assert!(
        sup.next_due(t(3)).is_none(),
        "no pause left: {:?}",
        sup.next_due(t(3))
    );
}

/// `db`, wanted up, its one container exited with code 1.
fn db_failed() -> ModuleStatus {
    ModuleStatus {
        name: "db".into(),
        ..stack(State::Failed, Some(Desired::Up), vec![exited("db", 1)])
    }
}

#[test]
fn a_requirement_others_wait_on_is_tried_again_after_a_short_pause_within_its_limit() {
    let mut sup = Supervisor::new(GRACE);
    let db = db_failed();
    // Alone, its pause doubles: 2s, 4s, 8s.
    for (at, next) in [(0, 2), (2, 6), (6, 14)] {
        assert_eq!(acts(&mut sup, &db, at)[0].0, Act::Restart, "at {at}");
        assert!(!sup.record("db", Attempt::Failed, t(at)));
        assert_eq!(sup.next_due(t(at)), Some(t(next)), "at {at}");
    }
    // m starts waiting on it: the pause it is in is cut to PAUSE_WAITED_ON.
    assert_eq!(
        acts(&mut sup, &waiting(vec![exited("app", 1)]), 7)[0].0,
        Act::Wait
    );
    assert_eq!(PAUSE_WAITED_ON, Duration::from_secs(2));
    assert_eq!(sup.next_due(t(7)), Some(t(8)));
    assert!(acts(&mut sup, &db, 7).is_empty());
    assert_eq!(sup.due(t(8)), ["db"]);
    assert_eq!(acts(&mut sup, &db, 8)[0].0, Act::Restart);
    // It keeps failing: still 2s between tries, however many.
    assert!(!sup.record("db", Attempt::Failed, t(8)));
    assert_eq!(sup.next_due(t(8)), Some(t(10)));
    // Its start limit still bounds it: hit, it is held (its own alarm).
    let mut limited = db_failed();
    limited.limit.free_at = Some(t(500));
    assert_eq!(acts(&mut sup, &limited, 10)[0].0, Act::Hold);
    assert!(sup.hold("db").is_some());
    // Nobody waits any more: its own doubled pause is back.
    let mut sup = Supervisor::new(GRACE);
    assert_eq!(
        acts(&mut sup, &waiting(vec![exited("app", 1)]), 0)[0].0,
        Act::Wait
    );
    for at in [0, 2, 4, 6] {
        assert_eq!(acts(&mut sup, &db, at)[0].0, Act::Restart, "at {at}");
        assert!(!sup.record("db", Attempt::Failed, t(at)));
    }
    assert_eq!(sup.next_due(t(6)), Some(t(8)));
    let gone = stack(State::Inactive, Some(Desired::Down), vec![]);
    acts(&mut sup, &gone, 7);
    assert_eq!(sup.next_due(t(7)), Some(t(6 + 16)));
}

#[test]
fn a_module_failed_by_its_last_start_whose_containers_run_again_is_restarted() {
    use crate::module::reason::{Reason, Reasons};
    use crate::module::recorded_causes::StartCause;
    let failed = |services| ModuleStatus {
        reason: Reasons(vec![Reason::Failed {
            service: None,
            cause: StartCause::Diagnosed {
                summary: "did not start: service db is restarting in a loop".into(),
                seen: Vec::new(),
            },
        }]),
        ..stack(State::Failed, Some(Desired::Up), services)
    };
    // Docker brought its container back after the repair gave up.
    let back = failed(vec![svc("db", "running"), job("migrate")]);
    let d = Supervisor::new(GRACE).decide(std::slice::from_ref(&back), t(0));
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!(d[0].act, Act::Restart);
    assert!(
        d[0].reason
            .to_string()
            .ends_with("start failed: did not start: service db is restarting in a loop; its containers run again"),
        "{d:?}"
    );
    let RepairScope::Containers(fixes) = &d[0].scope else {
        panic!("{d:?}");
    };
    assert_eq!(fixes.len(), 1, "{d:?}");
    assert_eq!(
        (fixes[0].container.as_str(), fixes[0].how),
        ("m-db-1", How::Restart)
    );
    // A healthcheck still deciding is waited for; still looping is Docker's until it gives up.
    let deciding = ServiceStatus {
        health: Some(Health::Starting),
        ..svc("db", "running")
    };
    for s in [failed(vec![deciding]), failed(vec![looping("db", 1)])] {
        assert!(
            Supervisor::new(GRACE)
                .decide(std::slice::from_ref(&s), t(0))
                .is_empty(),
            "{s:?}"
        );
    }
    // Failed for another reason (its start limit) with its containers up: nothing to repair.
    let up = stack(State::Failed, Some(Desired::Up), vec![svc("db", "running")]);
    assert!(
        Supervisor::new(GRACE)
            .decide(std::slice::from_ref(&up), t(0))
            .is_empty()
    );
}
