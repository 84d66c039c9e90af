//! End to end: the Docker daemon itself restarts while hal waits for a start. This binary
//! holds one test on purpose: cargo runs test binaries one after another, so no other
//! test sees the daemon go away. It runs in CI (or with HAL_TEST_DAEMON_RESTART=1); on a
//! developer's machine it would stop their containers, so it skips there.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::process::Command;
use std::time::Duration;

use common::{Rig, compose, engine_or_skip, svc};

const PIDFILE: &str = "/var/run/docker.pid";

/// Brings dockerd back the way the rig started it, even if the test fails.
struct Revive;

impl Drop for Revive {
    fn drop(&mut self) {
        let up = || {
            Command::new("docker")
                .arg("info")
                .output()
                .is_ok_and(|o| o.status.success())
        };
        if !up() {
            let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/provision.sh");
            let _ = Command::new("bash").arg(script).status();
        }
        assert!(
            common::eventually(Duration::from_secs(90), up),
            "dockerd did not come back"
        );
    }
}

#[test]
fn dockerd_restart_during_a_start() {
    let allowed =
        common::in_ci() || std::env::var("HAL_TEST_DAEMON_RESTART").is_ok_and(|v| v == "1");
    if !allowed {
        common::skip(
            "dockerd_restart_during_a_start: restarts dockerd; runs in CI or with HAL_TEST_DAEMON_RESTART=1",
        );
        return;
    }
    if !engine_or_skip("dockerd_restart_during_a_start") {
        return;
    }
    let Ok(pid) = std::fs::read_to_string(PIDFILE) else {
        assert!(
            !common::in_ci(),
            "CI starts dockerd with a pidfile at {PIDFILE}"
        );
        common::skip(
            "dockerd_restart_during_a_start: dockerd has no pidfile (not started by scripts/provision.sh)",
        );
        return;
    };
    let pid = pid.trim().to_string();
    let rig = Rig::new("daemon");
    let health = "    restart: unless-stopped\n    healthcheck:\n      test: [\"CMD\", \"test\", \"-f\", \"/tmp/ready\"]\n      interval: 1s\n";
    let m = rig.stack(
        "slow",
        &compose(&[svc(
            "app",
            "sleep 30; touch /tmp/ready; sleep 100000",
            health,
        )]),
    );
    let mut child = rig.cmd(&["module", "start", &m]).spawn().unwrap();
    assert!(common::eventually(Duration::from_secs(30), || {
        !common::containers(&m).is_empty()
    }));
    std::thread::sleep(Duration::from_secs(1));

    let revive = Revive;
    Command::new("kill").args(["-TERM", &pid]).status().unwrap();
    let gone = common::eventually(Duration::from_secs(60), || {
        !std::path::Path::new(&format!("/proc/{pid}")).exists()
    });
    assert!(gone, "dockerd did not stop");

    // hal says the engine went away, with the documented code, and does not hang.
    let out = common::wait_child(&mut child, Duration::from_secs(30));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(6), "{out:?}");
    assert!(
        err.contains("Docker not reachable at unix:///var/run/docker.sock"),
        "{err}"
    );

    // The daemon comes back; the next start works.
    drop(revive);
    let run = rig.run_for(
        &["module", "start", "--timeout", "90s", &m],
        Duration::from_secs(150),
    );
    run.expect(0);
}
