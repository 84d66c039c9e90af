//! `status --json` reads one list call and what hal remembers of each running
//! container's current run (the state directory's `containers.json`), and
//! inspects only what that cannot describe. These tests hold its answers
//! against `docker inspect` of the same containers: the facts must be the
//! engine's, whichever way hal learnt them.

use std::time::Duration;

use crate::rig::{self, docker, hal, stack};

/// What `docker inspect` says of a container, in the status document's words.
fn truth(container: &str) -> serde_json::Value {
    let out = docker(&[
        "inspect",
        "--format",
        "{{json .State}}|{{.RestartCount}}",
        container,
    ]);
    let (state, count) = out.trim().split_once('|').expect("docker inspect answered");
    let state: serde_json::Value = serde_json::from_str(state).unwrap();
    let health = state["Health"]["Status"].as_str().map(str::to_string);
    serde_json::json!({
        "state": state["Status"],
        "health": health,
        "exit_code": state["ExitCode"],
        "restart_count": count.parse::<i64>().unwrap(),
        "started_at": state["StartedAt"],
    })
}

/// Every row of `rows` for the given services equals what the engine says.
#[track_caller]
fn same_as_engine(rows: &[serde_json::Value], services: &[&str]) {
    for svc in services {
        let row = rows
            .iter()
            .find(|r| r["name"] == *svc)
            .unwrap_or_else(|| panic!("no row for {svc} in {rows:?}"));
        let container = row["container"].as_str().unwrap();
        let want = truth(container);
        for field in [
            "state",
            "health",
            "exit_code",
            "restart_count",
            "started_at",
        ] {
            assert_eq!(
                row[field], want[field],
                "{svc}: {field} is {} in hal's status, {} in docker inspect",
                row[field], want[field]
            );
        }
    }
}

#[test]
fn json_status_facts_match_docker_inspect_for_exited_restarted_unhealthy_and_running() {
    let Some(rig) = rig::engine() else { return };
    let m = rig.stack(
        "facts",
        stack()
            .service("up")
            .runs("sleep 100000")
            .keeps_running()
            .service("done")
            .runs("exit 3")
            .restart("no")
            .service("sick")
            .runs("sleep 100000")
            .healthcheck("/tmp/never", "interval: 1s\ntimeout: 2s\nretries: 1")
            .restart("no")
            .service("crash")
            .runs("sleep 1; exit 1")
            .restart("always"),
    );
    // It never gets active (a job fails, a service is unhealthy): any exit will do.
    hal(&rig).args(["module", "start", "--no-wait", &m]).run();
    // Long enough up that hal may describe running containers without an
    // inspect (from what it remembers of their run).
    rig::wait_out(
        "containers up past the inspect-free age",
        Duration::from_secs(12),
    );

    let first = rig.status(&m).services().to_vec();
    same_as_engine(&first, &["up", "done", "sick"]);
    let sick = first.iter().find(|r| r["name"] == "sick").unwrap();
    assert_eq!(sick["health"], "unhealthy");
    let done = first.iter().find(|r| r["name"] == "done").unwrap();
    assert_eq!(done["exit_code"], 3);
    assert_eq!(done["state"], "exited");
    let crash = first.iter().find(|r| r["name"] == "crash").unwrap();
    assert!(
        crash["restart_count"].as_i64().unwrap() >= 1,
        "crash has restarted: {crash}"
    );
    assert!(
        rig.state.join("containers.json").exists(),
        "hal remembers the running containers' runs"
    );

    // Now from memory for what runs: still the engine's facts.
    let second = rig.status(&m).services().to_vec();
    same_as_engine(&second, &["up", "done", "sick"]);

    // A restart makes a new run: hal must not answer with the old one's start
    // time, even once the container has been up long enough again.
    let up = second.iter().find(|r| r["name"] == "up").unwrap();
    let container = up["container"].as_str().unwrap();
    docker(&["restart", "-t", "0", container]);
    rig::wait_out(
        "the new run up past the inspect-free age",
        Duration::from_secs(11),
    );
    let third = rig.status(&m).services().to_vec();
    same_as_engine(&third, &["up", "done", "sick"]);
    let up3 = third.iter().find(|r| r["name"] == "up").unwrap();
    assert_ne!(
        up3["started_at"], up["started_at"],
        "the restart is seen: {up3}"
    );
}

#[test]
fn a_remembered_run_that_is_not_the_current_one_is_not_used() {
    let Some(rig) = rig::engine() else { return };
    let m = rig.stack(
        "memory",
        stack().service("web").runs("sleep 100000").keeps_running(),
    );
    hal(&rig).args(["module", "start", &m]).run().expect(0);
    rig::wait_out(
        "the container up past the inspect-free age",
        Duration::from_secs(11),
    );
    let rows1 = rig.status(&m).services().to_vec();
    same_as_engine(&rows1, &["web"]);
    // Plant a memory of another run of the same container (other endpoint
    // ids) with facts the engine never said: hal must inspect instead.
    let file = rig.state.join("containers.json");
    let text = std::fs::read_to_string(&file).expect("containers.json written");
    let mut doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    let entries = doc["containers"].as_object_mut().unwrap();
    assert!(!entries.is_empty(), "{text}");
    for (_, e) in entries.iter_mut() {
        e["run"] = "an-endpoint-of-another-run".into();
        e["restart_count"] = 42.into();
        e["started_at"] = "2000-01-01T00:00:00Z".into();
    }
    std::fs::write(&file, serde_json::to_string(&doc).unwrap()).unwrap();
    let rows2 = rig.status(&m).services().to_vec();
    same_as_engine(&rows2, &["web"]);
    // And hal corrected its memory.
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(!text.contains("an-endpoint-of-another-run"), "{text}");
}
