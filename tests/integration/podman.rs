//! End to end on Podman's Docker-compatible API (the rootful service
//! scripts/provision.sh starts), where the two engines' words, states and
//! events differ. The lifecycle tests that hold on both engines run on each
//! (`rig::each_engine`): start, status and stop, a failing service and a
//! finished job (stacks.rs), the fast path (fastpath.rs), following logs
//! across a recreate (logs.rs).

use std::sync::MutexGuard;
use std::time::Duration;

use crate::rig::watch::Watch;
use crate::rig::{self, Rig, containers, docker, hal, stack};

/// A Podman rig, in its turn ([`rig::podman_turn`]: one at a time).
fn podman() -> Option<(MutexGuard<'static, ()>, Rig)> {
    let turn = rig::podman_turn();
    Some((turn, rig::podman()?))
}

fn app(greeting: &str) -> rig::compose::Stack {
    stack()
        .service("app")
        .runs(&format!("echo {greeting}; sleep 100000"))
        .keeps_running()
}

/// Kept apart from `stacks::unhealthy_service_times_out_with_a_diagnosis`:
/// that one waits 6 s, which Podman's health check missed on a loaded
/// machine, and asserts the last log lines, which hal's diagnosis lacks on
/// Podman. (A finished job runs on each engine: `stacks::failing_service_and_finished_job`.)
#[test]
fn an_unhealthy_service_on_podman() {
    let Some((_turn, rig)) = podman() else { return };
    let sick = rig.stack(
        "sick",
        stack()
            .service("sick")
            .runs("echo cannot reach the database; sleep 100000")
            .keeps_running()
            .healthy_while("/tmp/ready"),
    );
    let run = hal(&rig)
        .args(["module", "start", "--timeout", "10s", &sick])
        .code(1);
    assert!(run.stderr.contains("service sick is unhealthy"), "{run}");
    let st = rig.status(&sick).code(3);
    // The start failed, so the module stays failed until someone acts (issue 29).
    assert_eq!(st.state(), "failed", "{st}");
    assert!(st.run.stdout.contains("\"health\": \"unhealthy\""), "{st}");
    let table = hal(&rig).args(["status", &sick]).code(3);
    assert!(
        table.stdout.contains(" failed "),
        "the table agrees: {table}"
    );
}

#[test]
fn a_crash_loop_never_fails_a_status_read_on_podman() {
    let Some((_turn, rig)) = podman() else { return };
    let m = rig.stack(
        "crash",
        stack()
            .service("crash")
            .runs("sleep 0.3; exit 3")
            .restart("always"),
    );
    let _ = hal(&rig).args(["module", "start", "--no-wait", &m]).run();
    // Podman's transient `stopped` comes and goes: no read may fail on it.
    for _ in 0..15 {
        let st = rig.status(&m).run;
        assert_ne!(
            st.code,
            Some(6),
            "an unreadable state is not an unreachable engine: {st}"
        );
        assert_ne!(st.code, Some(1), "{st}");
        std::thread::sleep(Duration::from_millis(150));
    }
}

#[test]
fn watch_repairs_a_killed_container_on_podman() {
    let Some((_turn, rig)) = podman() else { return };
    let m = rig.stack(
        "two",
        stack()
            .service("a")
            .keeps_running()
            .service("b")
            .keeps_running(),
    );
    hal(&rig).args(["module", "start", &m]).code(0);
    // With a resync of an hour only the engine's events can start the repair.
    let mut w = Watch::spawn_every(&rig, &[], "1h");
    // The watch names the engine it subscribed to; from this line on no event is missed.
    w.expect(Duration::from_secs(20), |l| {
        l == "podman: subscribed to container events"
    });
    let b = format!("{m}-b-1");
    docker(&["kill", &b]);
    let why = w.expect(Duration::from_secs(30), |l| {
        l.starts_with(&format!("{m}: repairing: "))
    });
    assert!(why.contains("service b exited with code 137"), "{why}");
    assert!(why.contains("the engine is not restarting it"), "{why}");
    w.expect(Duration::from_secs(45), |l| {
        l.starts_with(&format!("{m}: restarted, active ("))
    });
    assert_eq!(rig.state_of(&m), "active");
}

#[test]
fn doctor_asks_podman_for_events_and_reads_its_pools() {
    let Some((_turn, rig)) = podman() else { return };
    let doc = hal(&rig).args(["--json", "doctor"]).run().json();
    let check = |name: &str| rig::check(&doc, name).clone();
    assert_eq!(check("events")["ok"], true, "{doc:#}");
    let docker = check("docker")["detail"].as_str().unwrap().to_string();
    assert!(docker.contains("Podman"), "{docker}");
    let pools = check("address-pools")["detail"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(!pools.contains("daemon.json"), "{pools}");
    assert!(pools.contains("containers"), "{pools}");
}

/// Podman behind TLS (issue 33): list and inspect go through hal's one tolerant
/// decoder on every transport, so a crash loop (Podman says `stopped` between its
/// restarts, most of the time) fails no read, and the engine is named from its ping.
#[test]
fn a_stack_over_tls_on_podman_reads_its_stopped_state() {
    let Some((_turn, mut rig)) = podman() else {
        return;
    };
    let host = rig::podman_host();
    let socket = host.trim_start_matches("unix://");
    let Some(tls) = rig::tls::terminator(&rig.dir, socket) else {
        return;
    };
    tls.serve(&mut rig);
    let m = rig.stack("tlsup", app("v1"));
    hal(&rig).args(["module", "start", &m]).code(0);
    assert_eq!(rig.state_of(&m), "active");

    let crash = rig.stack(
        "tlscrash",
        stack().service("crash").runs("exit 3").restart("always"),
    );
    let _ = hal(&rig)
        .args(["module", "start", "--no-wait", &crash])
        .run();
    let name = format!("{crash}-crash-1");
    // Podman itself (its socket, read by the docker CLI) says `stopped`.
    let seen = rig::eventually(Duration::from_secs(30), || {
        docker(&["inspect", "-f", "{{.State.Status}}", &name]).trim() == "stopped"
    });
    assert!(seen, "Podman never said stopped for {name}");
    for _ in 0..8 {
        let st = rig.status_of(&[]).run;
        assert_eq!(st.code, Some(3), "a read failed on Podman's words: {st}");
        assert_eq!(st.state_of(&m), "active", "{st}");
        let state = st.state_of(&crash);
        assert!(
            ["failed", "degraded", "activating", "inactive"].contains(&state.as_str()),
            "{state}: {st}"
        );
        let one = rig.status(&crash).run;
        assert!(one.code == Some(3) || one.code == Some(0), "{one}");
        // `https://` is TLS in so many words (it was bollard's strict path).
        let https = hal(&rig)
            .env("DOCKER_HOST", tls.host.replace("tcp://", "https://"))
            .status(&[])
            .run;
        assert_eq!(
            https.code,
            Some(3),
            "a read failed on Podman's words: {https}"
        );
    }
    let table = hal(&rig).args(["status", &m]).code(0);
    assert!(table.stdout.contains(" active "), "{table}");
    let doc = hal(&rig).args(["--json", "doctor"]).run().json();
    assert!(doc.to_string().contains("Podman"), "{doc:#}");

    hal(&rig).args(["module", "stop", &crash]).code(0);
    hal(&rig).args(["module", "stop", &m]).code(0);
    assert!(containers(&m).is_empty() && containers(&crash).is_empty());
    assert_eq!(rig.status(&m).code(3).state(), "inactive");
}

#[test]
fn doctor_names_podmans_log_driver_and_its_containers_conf_fix() {
    let Some((_turn, rig)) = podman() else { return };
    // What Podman itself says (containers.conf's log_driver), not hal.
    let out = std::process::Command::new("podman")
        .args([
            "--url",
            &rig::podman_host(),
            "info",
            "--format",
            "{{.Host.LogDriver}}",
        ])
        .output()
        .expect("podman info");
    let driver = String::from_utf8_lossy(&out.stdout).trim().to_string();
    assert!(!driver.is_empty(), "podman info: {out:?}");
    let doc = hal(&rig).args(["--json", "doctor"]).run().json();
    let check = rig::check(&doc, "history").clone();
    let detail = check["detail"].as_str().unwrap_or_default();
    assert!(!detail.contains("()"), "{check:#}");
    if driver == "journald" {
        assert_eq!(check["ok"], true, "{check:#}");
        assert!(detail.contains("by its id"), "{check:#}");
        return;
    }
    assert_eq!(check["ok"], false, "{check:#}");
    assert!(detail.contains(&format!("({driver})")), "{check:#}");
    let hint = check["hint"].as_str().unwrap_or_default();
    assert!(hint.contains("log_driver = \"journald\""), "{hint}");
    assert!(hint.contains("containers.conf"), "{hint}");
    assert!(hint.contains("[containers]"), "{hint}");
    assert!(
        !hint.contains("daemon.json"),
        "Docker's fix on Podman: {hint}"
    );
}
