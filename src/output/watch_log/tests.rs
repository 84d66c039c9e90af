//! Every event's human line and JSON keys, as the log has always written them (tests read these lines).

use std::time::Duration;

use super::event::*;
use crate::module::fix::{Fix, How};
use crate::module::warning::Warning;
use crate::util::timefmt::Stamp;
use crate::util::tz::Zone;

fn at(secs: i64) -> Stamp {
    Stamp::from_secs(secs)
}

/// `(human line, JSON line)` of an event, the time left out of the JSON.
fn lines(e: WatchEvent) -> (String, String) {
    let line = e.line();
    let human = format!("{}: {}", line.subject, line.text);
    let mut doc = line.json(String::new());
    if let Some(m) = doc.as_object_mut() {
        m.remove("time");
    }
    (human, doc.to_string())
}

/// Each event's lines are the ones given.
fn check<const N: usize>(cases: [(WatchEvent, &str, &str); N]) {
    for (e, human, json) in cases {
        assert_eq!(lines(e), (human.to_string(), json.to_string()));
    }
}

fn m(s: &str) -> String {
    s.to_string()
}

#[test]
fn the_watch_and_the_engine_say_what_they_always_said() {
    let secs = Duration::from_secs;
    let cases = [
        (
            WatchEvent::from(WatchOwn::Started {
                modules: 3,
                stacks: 2,
                hosts: 1,
                grace: secs(30),
                interval: secs(10),
                resync: secs(300),
            }),
            "watch: watching 3 modules (2 stacks, 1 host unit; grace 30s, interval 10s, resync 5m); only modules started by hal (desired up) are touched",
            r#"{"action":"watch","event":"started","module":null,"modules":3,"reason":null}"#,
        ),
        (
            WatchEvent::from(WatchOwn::ModulesChanged {
                added: vec![m("a"), m("b")],
                gone: vec![],
            }),
            "watch: modules changed: added a, b; gone none",
            r#"{"action":null,"event":"modules_changed","module":null,"reason":null}"#,
        ),
        (
            WatchEvent::ConfigRead,
            "watch: config read again",
            r#"{"action":null,"event":"config_read","module":null,"reason":null}"#,
        ),
        (
            WatchEvent::DependenciesChanged { edges: 3 },
            "watch: dependencies read again: 3 edge(s) between modules",
            r#"{"action":null,"edges":3,"event":"dependencies_changed","module":null,"reason":"dependencies read again: 3 edge(s) between modules"}"#,
        ),
        (
            WatchEvent::from(WatchOwn::Problem {
                module: Some(m("web")),
                why: m("could not keep the hold"),
            }),
            "web: could not keep the hold",
            r#"{"action":null,"event":"problem","module":"web","reason":"could not keep the hold"}"#,
        ),
        (
            WatchEvent::StateUnwritable {
                why: m("no space left on device"),
            },
            "watch: hal's state cannot be written (no space left on device); repairs go on, their start counts and holds kept in memory until it can",
            r#"{"action":null,"event":"state_unwritable","module":null,"reason":"no space left on device"}"#,
        ),
        (
            WatchEvent::StateWritable,
            "watch: hal's state can be written again; what was kept in memory is written",
            r#"{"action":null,"event":"state_writable","module":null,"reason":null}"#,
        ),
        (
            WatchEvent::from(WatchOwn::Stopped { why: m("SIGTERM") }),
            "watch: stopping (SIGTERM)",
            r#"{"action":"exit","event":"stopped","module":null,"reason":"SIGTERM"}"#,
        ),
        (
            WatchEvent::from(WatchOwn::EngineUp {
                engine: m("docker"),
                endpoint: m("unix:///run/docker.sock"),
                again: true,
            }),
            "docker: connected again to unix:///run/docker.sock; checking every module",
            r#"{"action":"full_pass","event":"engine_up","module":null,"reason":"unix:///run/docker.sock"}"#,
        ),
        (
            WatchEvent::from(WatchOwn::Subscribed {
                engine: m("podman"),
            }),
            "podman: subscribed to container events",
            r#"{"action":null,"event":"subscribed","module":null,"reason":null}"#,
        ),
        (
            WatchEvent::from(WatchOwn::EngineLost {
                engine: m("docker"),
                what: m("lost connection"),
                why: m("EOF"),
                retry_in: Duration::from_millis(1500),
            }),
            "docker: lost connection: EOF; retrying in 1500ms",
            r#"{"action":"reconnect","event":"engine_lost","module":null,"reason":"EOF","retry_in_ms":1500}"#,
        ),
        (
            WatchEvent::from(WatchOwn::EventUnreadable {
                engine: m("docker"),
                why: m("bad json"),
            }),
            "docker: bad json",
            r#"{"action":null,"event":"event_unreadable","module":null,"reason":"bad json"}"#,
        ),
    ];
    check(cases);
}

#[test]
fn repairs_and_holds_say_what_they_always_said() {
    let took = Duration::from_millis(2345);
    let cases = [
        (
            WatchEvent::from(RepairEvent::Trouble {
                module: m("web"),
                reason: Cause::Container(m("service app exited with code 1")),
                retry: false,
                plan: Plan::Containers {
                    fixes: vec![Fix {
                        service: m("app"),
                        container: m("web-app-1"),
                        how: How::Start,
                        because: None,
                    }],
                },
            }),
            "web: repairing: service app exited with code 1; starting container web-app-1 again",
            r#"{"action":"start","containers":["web-app-1"],"event":"trouble","module":"web","reason":"service app exited with code 1","repair":"containers"}"#,
        ),
        (
            WatchEvent::from(RepairEvent::Trouble {
                module: m("web"),
                reason: Cause::Said(m("x")),
                retry: true,
                plan: Plan::Module,
            }),
            "web: retrying after hold: x",
            r#"{"action":"retry","event":"trouble","module":"web","reason":"x","repair":"module"}"#,
        ),
        (
            WatchEvent::from(RepairEvent::Trouble {
                module: m("web"),
                reason: Cause::Said(m("x")),
                retry: false,
                plan: Plan::Recreate {
                    why: Escalation::RepairFailed,
                },
            }),
            "web: recreating the module: x; the repair of its containers did not bring it back",
            r#"{"action":"recreate","event":"trouble","module":"web","reason":"x","repair":"module"}"#,
        ),
        (
            WatchEvent::from(RepairEvent::Restarted {
                module: m("web"),
                containers: false,
                took,
                what: Repaired::Restarted,
                warnings: vec![Warning::State(m("w1")), Warning::State(m("w2"))],
            }),
            "web: restarted, active (2.3s; restarted the module; w1; w2)",
            r#"{"action":null,"event":"restarted","module":"web","reason":null,"repair":"module","state":"active","took_ms":2345}"#,
        ),
        (
            WatchEvent::from(RepairEvent::RepairFailed {
                module: m("web"),
                how: Failure::Retry,
                error: Cause::Said(m("boom")),
                took,
                next_try: Some(at(3661)),
            }),
            "web: retry failed: boom (2.3s); still held, next try after 01:01:01 UTC",
            r#"{"action":null,"event":"retry_failed","module":"web","reason":"boom","took_ms":2345}"#,
        ),
        (
            WatchEvent::from(HoldEvent::Held {
                module: m("web"),
                refusal: Cause::Said(m("start limit hit")),
                on_failure: OnFailure::Runs,
            }),
            "web: held: start limit hit; running on_failure",
            r#"{"action":"hold","event":"held","module":"web","reason":"start limit hit"}"#,
        ),
        (
            WatchEvent::from(HoldEvent::StillHeld {
                module: m("web"),
                since: at(60),
                until: at(120),
                reason: Cause::Said(m("r")),
                notified: true,
            }),
            "web: still held (since 00:01:00 UTC, until 00:02:00 UTC): r; on_failure already ran for this hold",
            r#"{"action":"hold","event":"held","module":"web","reason":"r","restored":true}"#,
        ),
        (
            WatchEvent::from(HoldEvent::Released {
                module: m("web"),
                why: Release::CountReset,
            }),
            "web: hold released: its start count was reset",
            r#"{"action":"release","event":"released","module":"web","reason":"start count reset"}"#,
        ),
        (
            WatchEvent::from(HookEvent::Ran {
                module: m("web"),
                how: m("exited 0"),
                ok: true,
                took,
            }),
            "web: on_failure exited 0 (2.3s)",
            r#"{"action":null,"event":"on_failure","module":"web","ok":true,"reason":"exited 0","took_ms":2345}"#,
        ),
        (
            WatchEvent::from(HookEvent::Failed {
                module: m("web"),
                why: m("no such file"),
            }),
            "web: on_failure could not run: no such file",
            r#"{"action":null,"event":"on_failure","module":"web","ok":false,"reason":"no such file"}"#,
        ),
    ];
    check(cases);
}

#[test]
fn update_rounds_say_what_they_always_said() {
    let took = Duration::from_millis(1000);
    let cases = [
        (
            WatchEvent::from(RoundEvent::UpdateSchedule {
                schedule: m("daily 04:00"),
                next: LocalAt {
                    at: at(0),
                    zone: Zone::fixed(4 * 3600),
                },
            }),
            "watch: scheduled updates daily 04:00; next at 1970-01-01 04:00:00 local time",
            r#"{"action":null,"event":"update_schedule","module":null,"next":"1970-01-01T00:00:00Z","reason":null,"schedule":"daily 04:00"}"#,
        ),
        (
            WatchEvent::from(RoundEvent::UpdateDue { modules: vec![] }),
            "watch: scheduled update: no stack is wanted up with auto_update on",
            r#"{"action":"update","event":"update_due","module":null,"modules":[],"reason":null}"#,
        ),
        (
            WatchEvent::from(RoundEvent::UpdateStopped {
                failed: 1,
                left: vec![m("b")],
            }),
            "watch: scheduled update stopped after 1 failed update; not updated: b",
            r#"{"action":null,"event":"update_stopped","module":null,"modules":["b"],"reason":null}"#,
        ),
        (
            WatchEvent::from(UpdateEvent::Updated {
                module: m("web"),
                took,
                rolled_back: false,
                end: UpdateEnd::Updated(vec![Moved {
                    service: m("app"),
                    from: Some(m("sha256:0123456789abcdef")),
                    to: None,
                }]),
            }),
            "web: updated, active (1.0s; app 0123456789ab → ?)",
            r#"{"action":null,"event":"updated","module":"web","reason":null,"rolled_back":false,"took_ms":1000}"#,
        ),
        (
            WatchEvent::from(UpdateEvent::Updated {
                module: m("web"),
                took,
                rolled_back: true,
                end: UpdateEnd::RolledBack(m("rolled back")),
            }),
            "web: update failed, rolled back (1.0s)",
            r#"{"action":null,"event":"update_rolled_back","module":"web","reason":"rolled back","rolled_back":true,"took_ms":1000}"#,
        ),
        (
            WatchEvent::from(UpdateEvent::UpdateDone {
                updated: 1,
                up_to_date: 2,
                failed: 0,
                skipped: 1,
                next: None,
            }),
            "watch: scheduled update done: 1 updated, 2 up to date, 0 failed, 1 not updated; next at ",
            r#"{"action":null,"event":"update_done","failed":0,"module":null,"reason":null,"skipped":1,"up_to_date":2,"updated":1}"#,
        ),
    ];
    check(cases);
}
