//! The smallest repair: which containers a trouble names, and when it escalates to the module.

use super::*;

/// The scope of the one restart decided now.
fn scope_of(sup: &mut Supervisor, s: &ModuleStatus, now: i64) -> RepairScope {
    let a = sup.decide(std::slice::from_ref(s), t(now));
    assert_eq!(a.len(), 1, "{a:?}");
    sup.began(&a[0], t(now));
    a[0].scope.clone()
}

fn containers(scope: &RepairScope) -> Vec<(String, How)> {
    match scope {
        RepairScope::Containers(f) => f.iter().map(|f| (f.container.clone(), f.how)).collect(),
        other => panic!("not a container repair: {other:?}"),
    }
}

#[test]
fn the_smallest_repair_is_the_failed_container_alone() {
    let mut sup = Supervisor::new(GRACE);
    let s = stack(
        State::Failed,
        Some(Desired::Up),
        vec![
            svc("db", "running"),
            exited("web", 137),
            svc("cache", "running"),
        ],
    );
    assert_eq!(
        containers(&scope_of(&mut sup, &s, 0)),
        [("m-web-1".to_string(), How::Start)]
    );
    // Unhealthy past the grace: restarted, alone.
    let mut sup = Supervisor::new(GRACE);
    let s = stack(
        State::Degraded,
        Some(Desired::Up),
        vec![svc("db", "running"), unhealthy("web")],
    );
    assert!(acts(&mut sup, &s, 0).is_empty());
    assert_eq!(
        containers(&scope_of(&mut sup, &s, 60)),
        [("m-web-1".to_string(), How::Restart)]
    );
    // Dead: recreated (compose up --no-deps); looping: restarted.
    let mut sup = Supervisor::new(GRACE);
    let s = stack(
        State::Failed,
        Some(Desired::Up),
        vec![svc("db", "dead"), looping("api", LOOP_RESTARTS)],
    );
    let a = sup.decide(std::slice::from_ref(&s), t(0));
    assert!(
        a[0].reason.to_string().ends_with("(and 1 more container)"),
        "{a:?}"
    );
    assert_eq!(
        containers(&a[0].scope),
        [
            ("m-db-1".to_string(), How::Recreate),
            ("m-api-1".to_string(), How::Restart)
        ]
    );
    // No containers at all, or a host unit: the module.
    let mut sup = Supervisor::new(GRACE);
    assert_eq!(
        scope_of(
            &mut sup,
            &stack(State::Inactive, Some(Desired::Up), vec![]),
            0
        ),
        RepairScope::Module
    );
    assert_eq!(
        scope_of(&mut sup, &unit(State::Failed, "failed/failed"), 0),
        RepairScope::Module
    );
}

#[test]
fn a_small_repair_that_fails_escalates_to_the_module() {
    let mut sup = Supervisor::new(GRACE);
    let s = stack(State::Failed, Some(Desired::Up), vec![exited("web", 1)]);
    assert!(matches!(
        scope_of(&mut sup, &s, 0),
        RepairScope::Containers(_)
    ));
    assert!(!sup.record("m", Attempt::Failed, t(1)));
    // After the pause: the module, and the log says why.
    let RepairScope::Escalated(why) = scope_of(&mut sup, &s, 10) else {
        panic!("not escalated")
    };
    assert_eq!(
        why.to_string(),
        "the repair of its containers did not bring it back"
    );
    // The module's recreate worked: the next failure, much later, is small again.
    assert!(!sup.record("m", Attempt::Recovered, t(12)));
    assert!(matches!(
        scope_of(&mut sup, &s, 1000),
        RepairScope::Containers(_)
    ));
}

#[test]
fn the_same_container_failing_again_within_the_window_escalates() {
    let mut sup = Supervisor::new(GRACE);
    let mut s = stack(
        State::Failed,
        Some(Desired::Up),
        vec![exited("web", 137), svc("db", "running")],
    );
    s.limit.interval = Duration::from_secs(120);
    assert!(matches!(
        scope_of(&mut sup, &s, 0),
        RepairScope::Containers(_)
    ));
    assert!(!sup.record("m", Attempt::Recovered, t(2)));
    let RepairScope::Escalated(why) = scope_of(&mut sup, &s, 30) else {
        panic!("not escalated")
    };
    assert_eq!(
        why.to_string(),
        "service web failed again 30s after its repair"
    );
    assert!(!sup.record("m", Attempt::Recovered, t(32)));
    // Another container failing is its own small repair.
    let other = stack(
        State::Failed,
        Some(Desired::Up),
        vec![svc("web", "running"), exited("db", 137)],
    );
    let mut sup2 = sup.clone();
    assert!(matches!(
        scope_of(&mut sup2, &other, 200),
        RepairScope::Containers(_)
    ));
    // Past the window: small again.
    assert!(matches!(
        scope_of(&mut sup, &s, 200),
        RepairScope::Containers(_)
    ));
}
