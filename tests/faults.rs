//! End to end: signals, a missing or babbling compose, a cut socket, and planted symlinks — each gets a clear message and its exit code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{Rig, compose, engine_or_skip, svc};

const SLOW_HEALTH: &str = "    restart: unless-stopped\n    healthcheck:\n      test: [\"CMD\", \"test\", \"-f\", \"/tmp/ready\"]\n      interval: 1s\n";

fn signal(child: &Child, sig: &str) {
    Command::new("kill")
        .args([sig, &child.id().to_string()])
        .status()
        .unwrap();
}

/// A compose stand-in: answers `version` like v2, sleeps in `up`, recording its pid.
fn slow_compose(rig: &mut Rig) -> std::path::PathBuf {
    let pidfile = rig.dir.join("compose.pid");
    let script = common::script(
        &rig.dir,
        "slow-compose",
        &format!(
            "#!/bin/sh\ncase \"$*\" in\n  *version*) echo 2.26.1 ;;\n  *config*) exec docker compose \"$@\" ;;\n  *' up '*) echo $$ > '{}'; exec sleep 60 ;;\n  *) exec docker compose \"$@\" ;;\nesac\n",
            pidfile.display()
        ),
    );
    rig.env
        .push(("HAL_COMPOSE".into(), script.display().to_string()));
    pidfile
}

fn alive(pid: &str) -> bool {
    std::path::Path::new(&format!("/proc/{pid}")).exists()
        && !std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .unwrap_or_default()
            .contains(") Z ")
}

#[test]
fn ctrl_c_during_compose_up_exits_130_kills_the_child_and_frees_the_lock() {
    if !engine_or_skip("ctrl_c_during_compose_up") {
        return;
    }
    let mut rig = Rig::new("sigint");
    let pidfile = slow_compose(&mut rig);
    let m = rig.stack(
        "slow",
        &compose(&[svc("app", "sleep 100000", "    restart: unless-stopped\n")]),
    );
    let mut child = rig.cmd(&["module", "start", &m]).spawn().unwrap();
    assert!(
        common::eventually(Duration::from_secs(20), || pidfile.exists()),
        "compose up never ran"
    );
    let compose_pid = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .to_string();
    let sent = Instant::now();
    signal(&child, "-INT");
    let out = common::wait_child(&mut child, Duration::from_secs(10));
    assert_eq!(out.status.code(), Some(130), "{out:?}");
    assert!(
        sent.elapsed() < Duration::from_secs(3),
        "took {:?}",
        sent.elapsed()
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("hal: interrupted"),
        "{out:?}"
    );
    assert!(
        common::eventually(Duration::from_secs(5), || !alive(&compose_pid)),
        "compose child {compose_pid} left running"
    );
    // The lock is free and the state file is whole: a real start works at once.
    rig.env.retain(|(k, _)| k != "HAL_COMPOSE");
    rig.run_for(&["module", "start", &m], Duration::from_secs(60))
        .expect(0);
    let text = std::fs::read_to_string(rig.state.join("state.json")).unwrap();
    serde_json::from_str::<serde_json::Value>(&text).unwrap();
}

#[test]
fn signals_during_wait_restart_and_rescue() {
    if !engine_or_skip("signals_during_wait") {
        return;
    }
    let rig = Rig::new("sigwait");
    let m = rig.stack(
        "slow",
        &compose(&[svc(
            "app",
            "sleep 60; touch /tmp/ready; sleep 100000",
            SLOW_HEALTH,
        )]),
    );
    for (args, sig, code) in [
        (vec!["module", "start"], "-INT", 130),
        (vec!["module", "restart"], "-INT", 130),
        (vec!["--yes", "module", "rescue"], "-INT", 130),
        (vec!["module", "start"], "-TERM", 143),
    ] {
        let mut full = args.clone();
        full.push(&m);
        let mut child = rig.cmd(&full).spawn().unwrap();
        // Wait until it waits for health (the container exists and runs).
        assert!(common::eventually(Duration::from_secs(30), || {
            common::docker(&[
                "ps",
                "-q",
                "--filter",
                &format!("label=com.docker.compose.project={m}"),
            ])
            .trim()
            .len()
                > 4
        }));
        std::thread::sleep(Duration::from_millis(1500));
        signal(&child, sig);
        let out = common::wait_child(&mut child, Duration::from_secs(10));
        assert_eq!(out.status.code(), Some(code), "{full:?} {sig}: {out:?}");
    }
}

#[test]
fn missing_or_babbling_compose_is_named() {
    if !engine_or_skip("missing_or_babbling_compose") {
        return;
    }
    let mut rig = Rig::new("nocompose");
    let m = rig.stack("x", &compose(&[svc("app", "sleep 100000", "")]));

    rig.env
        .push(("HAL_COMPOSE".into(), "/nonexistent/compose".into()));
    let run = rig.run(&["module", "start", &m]);
    run.expect(1);
    assert!(
        run.stderr
            .contains("HAL_COMPOSE=\"/nonexistent/compose\" does not answer"),
        "{run:?}"
    );

    let garbage = common::script(
        &rig.dir,
        "garbage",
        "#!/bin/sh\necho '%%% not a version %%%'\n",
    );
    rig.env = vec![("HAL_COMPOSE".into(), garbage.display().to_string())];
    let run = rig.run(&["module", "start", &m]);
    run.expect(1);
    assert!(run.stderr.contains("reports an unknown version"), "{run:?}");

    let failing = common::script(
        &rig.dir,
        "failing",
        "#!/bin/sh\ncase \"$*\" in *version*) echo 2.26.1 ;; *) echo '\u{1b}[31m<<garbage>>' >&2; exit 17 ;; esac\n",
    );
    rig.env = vec![("HAL_COMPOSE".into(), failing.display().to_string())];
    let run = rig.run(&["module", "start", &m]);
    run.expect(1);
    assert!(
        run.stderr.contains("exited with status 17") && run.stderr.contains("<<garbage>>"),
        "{run:?}"
    );
    assert_eq!(run.stderr.lines().count(), 1, "{run:?}");

    // No compose on PATH at all.
    let mut cmd = rig.cmd(&["module", "start", &m]);
    cmd.env_remove("HAL_COMPOSE").env("PATH", "/nonexistent");
    let run = common::run_with_timeout(cmd, Duration::from_secs(30));
    run.expect(1);
    assert!(run.stderr.contains("no compose found"), "{run:?}");
}

#[test]
fn a_cut_socket_mid_start_exits_6_without_hanging() {
    if !engine_or_skip("a_cut_socket_mid_start") {
        return;
    }
    if Command::new("socat")
        .arg("-V")
        .stdout(Stdio::null())
        .status()
        .is_err()
    {
        assert!(!common::in_ci(), "socat is provisioned in CI");
        common::skip("a_cut_socket_mid_start: socat missing");
        return;
    }
    let rig = Rig::new("cut");
    let sock = rig.dir.join("docker.sock");
    let mut proxy = Command::new("socat")
        .arg(format!("UNIX-LISTEN:{},fork", sock.display()))
        .arg("UNIX-CONNECT:/var/run/docker.sock")
        .spawn()
        .unwrap();
    assert!(common::eventually(Duration::from_secs(5), || sock.exists()));
    let host = format!("unix://{}", sock.display());
    let m = rig.stack(
        "slow",
        &compose(&[svc(
            "app",
            "sleep 60; touch /tmp/ready; sleep 100000",
            SLOW_HEALTH,
        )]),
    );
    let mut child = rig
        .cmd(&["-H", &host, "module", "start", &m])
        .spawn()
        .unwrap();
    assert!(common::eventually(Duration::from_secs(30), || {
        !common::containers(&m).is_empty()
    }));
    std::thread::sleep(Duration::from_secs(1));
    proxy.kill().unwrap();
    proxy.wait().unwrap();
    let _ = std::fs::remove_file(&sock);
    let out = common::wait_child(&mut child, Duration::from_secs(20));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(6), "{out:?}");
    assert!(
        err.contains(&format!("Docker not reachable at {host}")),
        "{err}"
    );
}

#[test]
fn planted_symlinks_are_refused() {
    let rig = Rig::new("symlink");
    std::fs::create_dir_all(&rig.state).unwrap();
    std::fs::set_permissions(
        &rig.state,
        std::os::unix::fs::PermissionsExt::from_mode(0o700),
    )
    .unwrap();
    let precious = rig.dir.join("precious");
    std::fs::write(&precious, "do not touch").unwrap();
    std::os::unix::fs::symlink(&precious, rig.state.join("state.lock")).unwrap();
    rig.stack("x", &compose(&[svc("app", "sleep 1", "")]));
    let name = rig.name("x");
    let run = rig.run(&["module", "reset-failed", &name]);
    run.expect(1);
    assert!(
        run.stderr.contains("state.lock") && run.stderr.contains("symlink"),
        "{run:?}"
    );
    assert_eq!(std::fs::read_to_string(&precious).unwrap(), "do not touch");

    // A state directory others can write to is refused, not used.
    std::fs::remove_file(rig.state.join("state.lock")).unwrap();
    std::fs::set_permissions(
        &rig.state,
        std::os::unix::fs::PermissionsExt::from_mode(0o777),
    )
    .unwrap();
    let run = rig.run(&["module", "reset-failed", &name]);
    run.expect(1);
    assert!(run.stderr.contains("writable by others"), "{run:?}");
}

#[test]
fn a_cut_socket_under_logs_follow_ends_with_6() {
    if !engine_or_skip("a_cut_socket_under_logs_follow") {
        return;
    }
    let rig = Rig::new("cutlogs");
    let m = rig.stack(
        "chat",
        &compose(&[svc(
            "app",
            "while true; do echo tick; sleep 0.2; done",
            "    restart: unless-stopped\n",
        )]),
    );
    rig.run(&["module", "start", &m]).expect(0);
    let sock = rig.dir.join("docker.sock");
    // Its own process group: the forked children carry the live connections.
    let mut proxy = Command::new("socat")
        .arg(format!("UNIX-LISTEN:{},fork", sock.display()))
        .arg("UNIX-CONNECT:/var/run/docker.sock")
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .unwrap();
    assert!(common::eventually(Duration::from_secs(5), || sock.exists()));
    let host = format!("unix://{}", sock.display());
    let mut child = rig
        .cmd(&["-H", &host, "module", "logs", "-f", &m])
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_secs(2));
    Command::new("kill")
        .args(["-KILL", "--", &format!("-{}", proxy.id())])
        .status()
        .unwrap();
    proxy.wait().unwrap();
    let out = common::wait_child(&mut child, Duration::from_secs(20));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(6), "{out:?}");
    assert!(
        err.contains(&format!(
            "Docker not reachable at {host}: lost while following logs"
        )),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("tick"));
}
