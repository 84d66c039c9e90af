//! The supervisor's rules, one situation at a time, with made-up statuses and a made-up clock.

use super::hold::{BACKOFF_FIRST, BACKOFF_MAX};
use super::pause::{PAUSE_MAX, PAUSE_WAITED_ON};
use super::*;
use crate::module::fix::How;
use crate::module::run_state::{Activity, ContainerRun, Health, RestartPolicy, ServiceState};
use crate::module::status::{LimitStatus, ServiceStatus, Verdict};
use crate::stack::{ContainerFacts, LOOP_RESTARTS};

const GRACE: Duration = Duration::from_secs(60);

fn t(secs: i64) -> Stamp {
    Stamp::from_secs(secs)
}

/// A container of module `m` under `restart: always`, exit code 0.
fn facts(name: &str, state: &str) -> ContainerFacts {
    ContainerFacts {
        name: format!("m-{name}-1"),
        project: "m".into(),
        service: name.into(),
        number: 1,
        run: ContainerRun::from_word(state),
        restart: RestartPolicy::Always,
        exit_code: Some(0),
        ..Default::default()
    }
}

/// Its row as `status` gives it: the verdict and the words of the one rule.
fn svc(name: &str, state: &str) -> ServiceStatus {
    facts(name, state).to_status()
}

fn stack(state: State, desired: Option<Desired>, services: Vec<ServiceStatus>) -> ModuleStatus {
    ModuleStatus {
        desired,
        services,
        ..ModuleStatus::named("m", KindTag::Stack, state)
    }
}

/// A host module whose unit is in `words` (systemd's `ActiveState/SubState`).
fn unit(state: State, words: &str) -> ModuleStatus {
    let active = words.split('/').next().unwrap_or_default();
    let row = ServiceStatus {
        name: "x.service".into(),
        unit: Some("x.service".into()),
        state: ServiceState::Unit {
            activity: Activity::from_word(active),
            words: words.into(),
        },
        ..Default::default()
    };
    ModuleStatus {
        kind: KindTag::Host,
        ..stack(state, Some(Desired::Up), vec![row])
    }
}

/// Exited with `code`, and Docker is not restarting it.
fn exited(name: &str, code: i64) -> ServiceStatus {
    ContainerFacts {
        exit_code: Some(code),
        ..facts(name, "exited")
    }
    .to_status()
}

/// A one-shot (no restart policy) that exited 0: done.
fn job(name: &str) -> ServiceStatus {
    ContainerFacts {
        restart: RestartPolicy::No,
        ..facts(name, "exited")
    }
    .to_status()
}

/// Restarting: Docker's to repair until it has tried `restarts` times.
fn looping(name: &str, restarts: i64) -> ServiceStatus {
    ContainerFacts {
        exit_code: Some(1),
        restart_count: restarts,
        ..facts(name, "restarting")
    }
    .to_status()
}

fn unhealthy(name: &str) -> ServiceStatus {
    ContainerFacts {
        health: Some(Health::Unhealthy),
        ..facts(name, "running")
    }
    .to_status()
}

fn acts(sup: &mut Supervisor, s: &ModuleStatus, now: i64) -> Vec<(Act, String)> {
    sup.decide(std::slice::from_ref(s), t(now))
        .into_iter()
        .map(|a| (a.act, a.reason.to_string()))
        .collect()
}

#[test]
fn a_killed_container_is_restarted_only_when_wanted_up() {
    let mut sup = Supervisor::new(GRACE);
    let killed = vec![exited("web", 137)];
    for desired in [None, Some(Desired::Down)] {
        let s = stack(State::Inactive, desired, killed.clone());
        assert!(acts(&mut sup, &s, 0).is_empty(), "{desired:?}");
    }
    let s = stack(State::Inactive, Some(Desired::Up), killed);
    let a = acts(&mut sup, &s, 0);
    assert_eq!(a.len(), 1);
    assert_eq!(a[0].0, Act::Restart);
    assert!(a[0].1.contains("service web exited with code 137"), "{a:?}");
}

#[test]
fn no_containers_or_a_stopped_service_is_restarted() {
    let mut sup = Supervisor::new(GRACE);
    let s = stack(State::Inactive, Some(Desired::Up), vec![]);
    assert_eq!(acts(&mut sup, &s, 0)[0].1, "no containers");
    let s = stack(
        State::Degraded,
        Some(Desired::Up),
        vec![svc("web", "running"), exited("db", 0)],
    );
    assert_eq!(
        acts(&mut sup, &s, 0)[0].1,
        "service db exited with code 0 and the engine is not restarting it"
    );
    // Stopped behind hal's back, nothing else running: started again alone.
    let s = stack(State::Failed, Some(Desired::Up), vec![exited("db", 137)]);
    let d = sup.decide(std::slice::from_ref(&s), t(100));
    assert_eq!(d.len(), 1, "{d:?}");
    let RepairScope::Containers(fixes) = &d[0].scope else {
        panic!("{d:?}");
    };
    assert_eq!(fixes[0].how, How::Start, "{d:?}");
    // Created and never started.
    let s = stack(
        State::Degraded,
        Some(Desired::Up),
        vec![svc("web", "running"), svc("db", "created")],
    );
    assert_eq!(
        acts(&mut sup, &s, 200)[0].1,
        "service db is created, not started"
    );
}

#[test]
fn healthy_starting_paused_and_finished_jobs_are_left_alone() {
    let mut sup = Supervisor::new(GRACE);
    let job = job("migrate");
    for s in [
        stack(
            State::Active,
            Some(Desired::Up),
            vec![svc("web", "running"), job.clone()],
        ),
        stack(
            State::Starting,
            Some(Desired::Up),
            vec![svc("web", "running"), job],
        ),
        stack(
            State::Degraded,
            Some(Desired::Up),
            vec![svc("web", "running"), svc("db", "paused")],
        ),
    ] {
        assert!(acts(&mut sup, &s, 0).is_empty(), "{s:?}");
    }
}

#[test]
fn docker_is_left_to_restart_until_it_loops() {
    let mut sup = Supervisor::new(GRACE);
    let s = stack(State::Failed, Some(Desired::Up), vec![looping("web", 1)]);
    assert!(acts(&mut sup, &s, 0).is_empty());
    let c = looping("web", LOOP_RESTARTS);
    assert_eq!(c.verdict, Some(Verdict::Failed { terminal: true }));
    let s = stack(State::Failed, Some(Desired::Up), vec![c]);
    let a = acts(&mut sup, &s, 0);
    assert_eq!(
        a[0].1,
        "service web is restarting in a loop (exit code 1, 3 restarts)"
    );
}

#[test]
fn unhealthy_is_restarted_after_the_grace_period_counted_from_the_event() {
    let mut sup = Supervisor::new(GRACE);
    let s = stack(State::Degraded, Some(Desired::Up), vec![unhealthy("web")]);
    // The event came before the first status pass saw it.
    sup.saw(Seen {
        module: "m".into(),
        container: "m-web-1".into(),
        unhealthy: true,
        at: t(90),
    });
    assert!(acts(&mut sup, &s, 100).is_empty());
    assert_eq!(sup.next_due(t(100)), Some(t(150)));
    assert!(sup.due(t(149)).is_empty());
    assert_eq!(sup.due(t(150)), ["m"]);
    let a = acts(&mut sup, &s, 150);
    assert_eq!(a, [(Act::Restart, "service web unhealthy for 60s".into())]);
    // Healthy again: forgotten, nothing due.
    let s = stack(
        State::Active,
        Some(Desired::Up),
        vec![svc("web", "running")],
    );
    assert!(acts(&mut sup, &s, 151).is_empty());
    assert_eq!(sup.next_due(t(151)), None);
}

#[test]
fn a_container_that_recovers_before_the_grace_is_not_restarted() {
    let mut sup = Supervisor::new(GRACE);
    let sick = stack(State::Degraded, Some(Desired::Up), vec![unhealthy("web")]);
    assert!(acts(&mut sup, &sick, 0).is_empty());
    sup.saw(Seen {
        module: "m".into(),
        container: "m-web-1".into(),
        unhealthy: false,
        at: t(30),
    });
    assert_eq!(sup.next_due(t(30)), None);
    // Unhealthy again later: the grace starts over.
    assert!(acts(&mut sup, &sick, 70).is_empty());
    assert_eq!(sup.next_due(t(70)), Some(t(130)));
}

#[test]
fn an_unhealthy_container_beside_a_finished_job_waits_for_the_grace() {
    let mut sup = Supervisor::new(GRACE);
    let s = stack(
        State::Degraded,
        Some(Desired::Up),
        vec![unhealthy("web"), job("migrate")],
    );
    assert!(acts(&mut sup, &s, 0).is_empty());
    assert_eq!(acts(&mut sup, &s, 60)[0].0, Act::Restart);
}

#[test]
fn host_units_failed_or_inactive_are_restarted() {
    let mut sup = Supervisor::new(GRACE);
    for (state, words, acted) in [
        (State::Failed, "failed/failed", true),
        (State::Inactive, "inactive/dead", true),
        (State::Starting, "activating/auto-restart", false),
        (State::Active, "active/running", false),
        // Held by the limit, but systemd is still starting it.
        (State::Failed, "activating/start", false),
    ] {
        let a = acts(&mut sup, &unit(state, words), 0);
        assert_eq!(!a.is_empty(), acted, "{words}: {a:?}");
    }
    assert_eq!(
        acts(&mut sup, &unit(State::Failed, "failed/failed"), 0)[0].1,
        "unit x.service is failed/failed"
    );
}

#[test]
fn unknown_and_invalid_modules_are_never_touched() {
    let mut sup = Supervisor::new(GRACE);
    for state in [State::Unknown, State::Invalid] {
        assert!(acts(&mut sup, &stack(state, Some(Desired::Up), vec![]), 0).is_empty());
    }
}

#[test]
fn a_refusal_holds_until_the_window_passes_then_retries_with_backoff() {
    let mut sup = Supervisor::new(GRACE);
    let mut s = stack(State::Failed, Some(Desired::Up), vec![exited("web", 1)]);
    assert_eq!(acts(&mut sup, &s, 0)[0].0, Act::Restart);
    assert!(sup.record("m", Attempt::Refused, t(0)), "a hold begins");
    s.limit.free_at = Some(t(100));
    // Held: no restart while the window lasts, whatever happens.
    assert!(acts(&mut sup, &s, 1).is_empty());
    assert!(acts(&mut sup, &s, 100).is_empty());
    assert_eq!(sup.next_due(t(2)), Some(t(101)));
    // The window has passed: one retry.
    s.limit.free_at = None;
    assert_eq!(acts(&mut sup, &s, 101)[0].0, Act::Retry);
    // It fails again: still the same hold (no second on_failure), and a longer pause.
    assert!(!sup.record("m", Attempt::Failed, t(101)));
    assert!(acts(&mut sup, &s, 120).is_empty());
    assert_eq!(sup.next_due(t(120)), Some(t(121)));
    assert_eq!(acts(&mut sup, &s, 121)[0].0, Act::Retry);
    assert!(!sup.record("m", Attempt::Refused, t(121)));
    assert_eq!(sup.next_due(t(121)), Some(t(161)));
    // It recovers: the hold ends.
    assert_eq!(acts(&mut sup, &s, 161)[0].0, Act::Retry);
    assert!(!sup.record("m", Attempt::Recovered, t(161)));
    assert!(sup.hold("m").is_none());
}

#[test]
fn a_module_whose_limit_is_already_hit_is_held_without_a_try() {
    let mut sup = Supervisor::new(GRACE);
    let mut s = stack(State::Failed, Some(Desired::Up), vec![exited("web", 1)]);
    s.limit = LimitStatus {
        used: 3,
        burst: 3,
        interval: Duration::from_secs(600),
        free_at: Some(t(600)),
    };
    let a = acts(&mut sup, &s, 0);
    assert_eq!(a.len(), 1);
    assert_eq!(a[0].0, Act::Hold);
    assert!(
        a[0].1
            .ends_with("; start limit hit: 3 starts in 10m, free again at 00:10:00 UTC"),
        "{a:?}"
    );
    assert!(acts(&mut sup, &s, 1).is_empty(), "held: no second hold");
    assert_eq!(sup.next_due(t(1)), Some(t(601)));
    s.limit.free_at = None;
    assert_eq!(acts(&mut sup, &s, 601)[0].0, Act::Retry);
}

#[test]
fn the_backoff_is_bounded() {
    let mut sup = Supervisor::new(GRACE);
    assert!(sup.record("m", Attempt::Refused, t(0)));
    for i in 0..20 {
        sup.record("m", Attempt::Failed, t(i));
    }
    assert_eq!(sup.hold("m").unwrap().backoff, BACKOFF_MAX);
}

#[test]
fn a_hold_ends_when_active_again_or_stopped_by_request() {
    let mut sup = Supervisor::new(GRACE);
    sup.record("m", Attempt::Refused, t(0));
    let up = stack(
        State::Active,
        Some(Desired::Up),
        vec![svc("web", "running")],
    );
    assert_eq!(
        acts(&mut sup, &up, 5),
        [(Act::Release, "active again".into())]
    );
    sup.record("m", Attempt::Refused, t(10));
    let stopped = stack(
        State::Inactive,
        Some(Desired::Down),
        vec![exited("web", 137)],
    );
    assert_eq!(
        acts(&mut sup, &stopped, 11),
        [(Act::Release, "stopped by request".into())]
    );
    assert!(sup.hold("m").is_none());
}

#[test]
fn a_failed_restart_pauses_the_next_one_longer_each_time() {
    let mut sup = Supervisor::new(GRACE);
    let s = stack(State::Failed, Some(Desired::Up), vec![exited("web", 1)]);
    assert_eq!(acts(&mut sup, &s, 0)[0].0, Act::Restart);
    assert!(!sup.record("m", Attempt::Failed, t(0)));
    assert!(sup.hold("m").is_none());
    assert!(acts(&mut sup, &s, 1).is_empty(), "paused");
    assert_eq!(sup.next_due(t(1)), Some(t(2)));
    assert_eq!(sup.due(t(2)), ["m"]);
    assert_eq!(acts(&mut sup, &s, 2)[0].0, Act::Restart);
    sup.record("m", Attempt::Failed, t(2));
    assert!(acts(&mut sup, &s, 5).is_empty());
    assert_eq!(acts(&mut sup, &s, 6)[0].0, Act::Restart);
    for i in 0..10 {
        sup.record("m", Attempt::Failed, t(10 * i));
    }
    assert_eq!(sup.next_due(t(90)), Some(t(90).plus(PAUSE_MAX)));
    // Up again: the pauses are forgotten.
    let up = stack(
        State::Active,
        Some(Desired::Up),
        vec![svc("web", "running")],
    );
    assert!(acts(&mut sup, &up, 100).is_empty());
    assert_eq!(acts(&mut sup, &s, 101)[0].0, Act::Restart);
}

#[test]
fn held_modules_do_not_wake_the_loop_for_their_grace() {
    let mut sup = Supervisor::new(GRACE);
    let s = stack(State::Degraded, Some(Desired::Up), vec![unhealthy("web")]);
    assert!(acts(&mut sup, &s, 0).is_empty());
    sup.record("m", Attempt::Refused, t(0));
    // Only the hold's own try is due, never the grace of a held module.
    assert_eq!(sup.next_due(t(0)), Some(t(0).plus(BACKOFF_FIRST)));
    // Nothing is ever due in the past: a waiting loop cannot spin.
    assert_eq!(sup.next_due(t(10_000)), None);
}

#[test]
fn a_restored_hold_is_held_without_a_new_hold() {
    let mut sup = Supervisor::new(GRACE);
    let mut s = stack(State::Failed, Some(Desired::Up), vec![exited("web", 1)]);
    s.limit.free_at = Some(t(600));
    sup.restore(
        "m",
        Hold {
            since: t(0),
            not_before: t(10),
            backoff: BACKOFF_FIRST * 2,
            free_at: Some(t(600)),
            reason: Cause::Said("held".into()),
            notified: true,
        },
    );
    assert!(
        acts(&mut sup, &s, 5).is_empty(),
        "no second Hold, no restart"
    );
    assert!(sup.hold("m").is_some_and(|h| h.notified));
    assert!(sup.release("m"));
    assert!(sup.holds().is_empty());
}
mod deadlines;
mod repairs;

mod waiting;
