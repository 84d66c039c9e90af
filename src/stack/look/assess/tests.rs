//! The module-state rules of a stack's containers, on made-up facts.

use super::*;
use crate::util::timefmt;

fn c(service: &str, status: &str) -> ContainerFacts {
    ContainerFacts {
        id: format!("id-{service}"),
        name: format!("p-{service}-1"),
        project: "p".into(),
        service: service.into(),
        number: 1,
        run: ContainerRun::from_word(status),
        restart: RestartPolicy::Always,
        ..Default::default()
    }
}

fn state(cs: &[ContainerFacts]) -> State {
    assess(&cs.iter().collect::<Vec<_>>()).0
}

#[test]
fn empty_is_inactive() {
    assert_eq!(state(&[]), State::Inactive);
}

#[test]
fn running_and_healthy_is_active() {
    let mut db = c("db", "running");
    db.health = Some(Health::Healthy);
    assert_eq!(state(&[c("web", "running"), db]), State::Active);
}

#[test]
fn health_starting_is_starting_and_unhealthy_is_degraded() {
    let mut db = c("db", "running");
    db.health = Some(Health::Starting);
    assert_eq!(state(&[c("web", "running"), db.clone()]), State::Starting);
    db.health = Some(Health::Unhealthy);
    let (s, why) = assess(&[&db]);
    assert_eq!(s, State::Degraded);
    assert_eq!(why.unwrap().to_string(), "service db is unhealthy");
}

#[test]
fn finished_job_counts_as_active() {
    let mut job = c("migrate", "exited");
    job.restart = RestartPolicy::No;
    job.exit_code = Some(0);
    assert_eq!(state(&[c("web", "running"), job]), State::Active);
}

#[test]
fn non_zero_exit_is_failed_and_terminal() {
    let mut job = c("migrate", "exited");
    job.restart = RestartPolicy::No;
    job.exit_code = Some(3);
    let (s, why) = assess(&[&job]);
    assert_eq!(s, State::Failed);
    assert_eq!(
        why.unwrap().to_string(),
        "service migrate exited with code 3"
    );
    assert!(hopeless(&[&job]));
}

#[test]
fn restart_loop_is_failed() {
    let mut w = c("web", "restarting");
    w.exit_code = Some(1);
    w.restart_count = 1;
    assert_eq!(state(std::slice::from_ref(&w)), State::Failed);
    assert!(!hopeless(&[&w]));
    w.restart_count = 5;
    assert!(hopeless(&[&w]));
}

#[test]
fn on_failure_retries_that_ran_out_are_failed() {
    let mut job = c("migrate", "exited");
    job.restart = RestartPolicy::OnFailure(3);
    job.exit_code = Some(1);
    job.restart_count = 3;
    let (s, why) = assess(&[&job, &c("web", "running")]);
    assert_eq!(s, State::Failed);
    assert_eq!(
        why.unwrap().to_string(),
        "service migrate exited with code 1"
    );
    assert!(hopeless(&[&job]));
    // Still retrying (or stopped by a person before the last try): not given up.
    job.restart_count = 2;
    assert_eq!(job.verdict(), Verdict::Stopped);
    job.restart_count = 3;
    job.exit_code = Some(143);
    assert_eq!(job.verdict(), Verdict::Stopped);
    // `on-failure` with no limit: Docker never gives up, so a person stopped it.
    job.exit_code = Some(1);
    job.restart = RestartPolicy::OnFailure(0);
    assert_eq!(job.verdict(), Verdict::Stopped);
}

#[test]
fn a_container_its_policy_keeps_running_is_never_done_when_exited() {
    for policy in [RestartPolicy::Always, RestartPolicy::UnlessStopped] {
        for code in [0, 1, 137, 143] {
            let mut w = c("web", "exited");
            w.restart = policy;
            w.exit_code = Some(code);
            assert_eq!(w.verdict(), Verdict::Halted, "{policy:?} {code}");
            assert_eq!(
                w.describe(),
                format!("service web exited with code {code} and the engine is not restarting it")
            );
        }
    }
    // A one-shot that exited 0 is done, under `on-failure` too.
    for policy in [RestartPolicy::No, RestartPolicy::OnFailure(3)] {
        let mut job = c("job", "exited");
        job.restart = policy;
        job.exit_code = Some(0);
        assert_eq!(job.verdict(), Verdict::Completed, "{policy:?}");
    }
    // From the containers alone (no wanted state): stopped, as before.
    let mut w = c("web", "exited");
    w.exit_code = Some(137);
    assert_eq!(state(std::slice::from_ref(&w)), State::Inactive);
    let (s, why) = assess(&[&w, &c("db", "running")]);
    assert_eq!(s, State::Degraded);
    assert_eq!(
        why.unwrap().to_string(),
        "service web exited with code 137 and the engine is not restarting it"
    );
}

#[test]
fn stopped_by_request_is_inactive_or_degraded() {
    let mut s = c("web", "exited");
    s.exit_code = Some(137);
    assert_eq!(state(std::slice::from_ref(&s)), State::Inactive);
    assert_eq!(state(&[s, c("db", "running")]), State::Degraded);
}

#[test]
fn just_started_containers_settle_first() {
    let mut w = c("web", "running");
    w.started_at = timefmt::parse("2026-01-01T00:00:10Z");
    w.observed_at = timefmt::parse("2026-01-01T00:00:10.5Z");
    assert_eq!(w.verdict(), Verdict::Starting);
    w.observed_at = timefmt::parse("2026-01-01T00:00:12Z");
    assert_eq!(w.verdict(), Verdict::Up);
    w.restart_count = 2;
    assert_eq!(w.verdict(), Verdict::Starting);
    assert_eq!(
        w.describe(),
        "service web restarted 2 times (last exit code 0)"
    );
    w.observed_at = timefmt::parse("2026-01-01T00:00:16Z");
    assert_eq!(w.verdict(), Verdict::Up);
}

#[test]
fn settles_in_is_the_longest_settle_left_and_nothing_else_pending() {
    let at = |started: &str| {
        let mut w = c("web", "running");
        w.started_at = timefmt::parse(started);
        w.observed_at = timefmt::parse("2026-01-01T00:00:10.5Z");
        w
    };
    let (a, b) = (at("2026-01-01T00:00:10.2Z"), at("2026-01-01T00:00:10.4Z"));
    assert_eq!(
        settles_in(&[&a, &b]),
        Some(Duration::from_millis(900)),
        "the later start settles last"
    );
    let old = at("2026-01-01T00:00:01Z");
    assert_eq!(settles_in(&[&old]), Some(Duration::ZERO));
    let mut health = at("2026-01-01T00:00:10.2Z");
    health.health = Some(Health::Starting);
    assert_eq!(settles_in(&[&a, &health]), None, "a healthcheck decides");
    assert_eq!(settles_in(&[&a, &c("db", "exited")]), None);
    let mut crashed = at("2026-01-01T00:00:10Z");
    crashed.restart_count = 1;
    assert_eq!(settles_in(&[&crashed]), Some(Duration::from_millis(4500)));
}

#[test]
fn oneoffs_are_ignored() {
    let mut run = c("web", "exited");
    run.oneoff = true;
    run.exit_code = Some(1);
    assert_eq!(state(&[run, c("db", "running")]), State::Active);
}

#[test]
fn uptime_is_read_from_status_text() {
    let up = |t| uptime_from_status(t).map(|d| d.as_secs());
    assert_eq!(up("Up Less than a second"), Some(0));
    assert_eq!(up("Up 1 second"), Some(1));
    assert_eq!(up("Up 5 minutes (healthy)"), Some(300));
    assert_eq!(up("Up About a minute"), Some(60));
    assert_eq!(up("Up About an hour (health: starting)"), Some(3600));
    assert_eq!(up("Up 3 days"), Some(259_200));
    assert_eq!(up("Up 2 weeks (Paused)"), Some(1_209_600));
    assert_eq!(up("Exited (0) 2 minutes ago"), None);
    assert_eq!(up("Up"), None);
}

#[test]
fn an_exit_and_its_age_are_read_and_worded_as_the_engine_does() {
    assert_eq!(
        exited_from_status("Exited (0) 3 hours ago"),
        Some((0, "3 hours"))
    );
    assert_eq!(
        exited_from_status("Exited (137) About a minute ago"),
        Some((137, "About a minute"))
    );
    assert_eq!(exited_from_status("Up 3 hours"), None);
    for (secs, text) in [
        (0, "Less than a second"),
        (1, "1 second"),
        (59, "59 seconds"),
        (60, "About a minute"),
        (119, "About a minute"),
        (120, "2 minutes"),
        (3599, "59 minutes"),
        (3600, "About an hour"),
        (5399, "About an hour"),
        (5400, "2 hours"),
        (47 * 3600, "47 hours"),
        (48 * 3600, "2 days"),
        (14 * 86400, "2 weeks"),
        (60 * 86400, "2 months"),
        (730 * 86400, "2 years"),
    ] {
        assert_eq!(engine_age(secs), text, "{secs} s");
    }
}
