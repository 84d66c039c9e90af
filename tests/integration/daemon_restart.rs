//! End to end: the Docker daemon itself restarts while hal waits for a start. The test
//! takes the engine alone (`rig::engine_alone`): no other test runs while the daemon is
//! away, and the systemd machine (a container, stopped with the daemon) is booted anew
//! after. It runs in CI (or with HAL_TEST_DAEMON_RESTART=1); on a developer's machine it
//! would stop their containers, so it skips there.

use std::process::Command;
use std::time::Duration;

use crate::rig::{self, ComposeCalls, docker, eventually, hal, in_ci, stack, wait_child};

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
            eventually(Duration::from_secs(90), up),
            "dockerd did not come back"
        );
    }
}

/// Restarting dockerd stops every container: only in CI, or when asked.
fn may_restart_dockerd() -> Option<()> {
    let allowed = in_ci() || std::env::var("HAL_TEST_DAEMON_RESTART").is_ok_and(|v| v == "1");
    rig::need_that(
        allowed,
        "restarts dockerd",
        "runs in CI or with HAL_TEST_DAEMON_RESTART=1",
    )
}

/// The running dockerd's pid, from the pidfile provisioning writes.
fn dockerd_pid() -> Option<String> {
    let pid = std::fs::read_to_string(PIDFILE).ok().or_else(|| {
        rig::missing(
            &format!("dockerd has no pidfile at {PIDFILE}"),
            "start dockerd with scripts/provision.sh, as CI does",
        )
    })?;
    Some(pid.trim().to_string())
}

#[test]
fn dockerd_restart_during_a_start() {
    let Some(()) = may_restart_dockerd() else {
        return;
    };
    let Some(mut rig) = rig::engine_alone() else {
        return;
    };
    let calls = ComposeCalls::install(&mut rig);
    let Some(pid) = dockerd_pid() else {
        return;
    };
    let m = rig.stack(
        "slow",
        stack().service("app").healthy_after(30).keeps_running(),
    );
    let mut child = hal(&rig).args(["module", "start", &m]).spawn();
    // Its `compose up` returned: hal waits for health, on the Engine API alone.
    calls.await_up(1);

    let revive = Revive;
    rig.engine_restarted();
    Command::new("kill").args(["-TERM", &pid]).status().unwrap();
    let gone = eventually(Duration::from_secs(60), || {
        !std::path::Path::new(&format!("/proc/{pid}")).exists()
    });
    assert!(gone, "dockerd did not stop");

    // hal says the engine went away, with the documented code, and does not hang.
    let out = wait_child(&mut child, Duration::from_secs(30));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(6), "{out:?}");
    assert!(
        err.contains("Docker not reachable at unix:///var/run/docker.sock"),
        "{err}"
    );

    // The daemon comes back; the next start works.
    drop(revive);
    hal(&rig)
        .args(["module", "start", "--timeout", "90s", &m])
        .within(Duration::from_secs(150))
        .code(0);
}

/// History kept in the journal outlives the engine: what a module printed before
/// dockerd restarted is still in `hal logs` afterwards, in order, beside what its
/// containers printed since (issue 26).
#[test]
fn journal_history_survives_an_engine_restart() {
    let Some(()) = may_restart_dockerd() else {
        return;
    };
    let Some(()) = rig::need_that(
        crate::history::journal_live(),
        "no journald answers systemd-cat",
        "scripts/provision.sh starts one (step journald)",
    ) else {
        return;
    };
    let Some(rig) = rig::engine_alone() else {
        return;
    };
    let Some(pid) = dockerd_pid() else {
        return;
    };
    let m = rig.stack("jrestart", crate::history::counting("gen"));
    hal(&rig).args(["start", &m]).code(0);
    let first = eventually(Duration::from_secs(10), || {
        crate::history::messages(&rig, &m, "10 min ago") == ["gen-1"]
    });
    assert!(first, "the first run's line is in the journal");

    let revive = Revive;
    rig.engine_restarted();
    Command::new("kill").args(["-TERM", &pid]).status().unwrap();
    let gone = eventually(Duration::from_secs(60), || {
        !std::path::Path::new(&format!("/proc/{pid}")).exists()
    });
    assert!(gone, "dockerd did not stop");
    drop(revive);

    // A new generation after the engine came back: the container is recreated.
    hal(&rig)
        .args(["restart", "--timeout", "90s", &m])
        .within(Duration::from_secs(150))
        .code(0);
    // The service counts its own starts in the module directory.
    let starts: usize = std::fs::read_to_string(rig.root.join(&m).join("n"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(starts >= 2, "{starts} starts");
    let want: Vec<String> = (1..=starts).map(|n| format!("gen-{n}")).collect();
    let mut got = Vec::new();
    let all = eventually(Duration::from_secs(20), || {
        got = crate::history::messages(&rig, &m, "10 min ago");
        got == want
    });
    assert!(all, "{got:?}");
    assert_eq!(
        got, want,
        "every generation's line, the one before the engine restart first"
    );
    hal(&rig).args(["stop", &m]).code(0);
}

/// Issue 39: an engine restart under `hal watch`, on a node whose modules need each other
/// (`tun` in `gw`'s network namespace, `app` requiring `db`): every module is active again
/// without a person, none is held, and `status` says the node is `starting` (never
/// `degraded`) until it is `running` again: a reboot pages nobody.
#[test]
fn an_engine_restart_under_the_watch_brings_a_node_of_dependents_back() {
    let Some(()) = may_restart_dockerd() else {
        return;
    };
    let Some(rig) = rig::engine_alone() else {
        return;
    };
    let Some(pid) = dockerd_pid() else {
        return;
    };
    let (gw, tun) = rig.gateway();
    let db = rig.stack("db", stack().service("db").healthy_after(2).keeps_running());
    let app = rig.stack("app", stack().service("app").keeps_running());
    rig.set_config(&format!(
        "[defaults]\npull = \"never\"\n\n[module.{app}]\nrequires = [\"{db}\"]\n"
    ));
    for m in [&gw, &tun, &db, &app] {
        hal(&rig).args(["start", m]).code(0);
    }
    let doc = rig.status_of(&[]).code(0).doc().clone();
    assert_eq!(doc["node"], "running", "{doc}");
    let w = crate::rig::watch::Watch::spawn(&rig, &[]);

    let revive = Revive;
    rig.engine_restarted();
    Command::new("kill").args(["-TERM", &pid]).status().unwrap();
    let gone = eventually(Duration::from_secs(60), || {
        !std::path::Path::new(&format!("/proc/{pid}")).exists()
    });
    assert!(gone, "dockerd did not stop");
    drop(revive);

    // From the engine's return until every module is active: starting, never degraded.
    let mut seen = Vec::new();
    let back = eventually(Duration::from_secs(120), || {
        let run = rig.status_of(&[]).run;
        // While the engine is away there is no node to judge (exit 6).
        if run.code == Some(6) {
            return false;
        }
        let doc = run.json();
        let node = doc["node"].as_str().unwrap_or_default().to_string();
        if seen.last() != Some(&node) {
            seen.push(node.clone());
        }
        node == "running"
    });
    assert!(back, "{seen:?}\n{}", w.dump());
    assert!(
        !seen.iter().any(|s| s == "degraded"),
        "{seen:?}\n{}",
        w.dump()
    );
    for m in [&gw, &tun, &db, &app] {
        assert_eq!(rig.state_of(m), "active", "{m}\n{}", w.dump());
    }
    let provider = docker(&["inspect", "-f", "{{.Id}}", &format!("{gw}-main")]);
    let mode = docker(&[
        "inspect",
        "-f",
        "{{.HostConfig.NetworkMode}}",
        &format!("{tun}-vpn-1"),
    ]);
    assert_eq!(mode.trim(), format!("container:{}", provider.trim()));
    assert!(
        !w.seen.iter().any(|l| l.contains(": held: ")),
        "{}",
        w.dump()
    );
}
