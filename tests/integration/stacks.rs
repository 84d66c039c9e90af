//! End to end: the real hal binary driving stacks on the real Docker engine.

use std::time::Duration;

use crate::lib_paths::timefmt;
use crate::rig::{
    self, FIXTURE, Rig, containers, docker, eventually, hal, ids, networks, path_str,
    run_with_timeout, running_ids, stack,
};

#[test]
fn one_service_start_status_stop() {
    rig::each_engine(|rig| {
        let web = rig.stack(
            "web",
            stack()
                .service("web")
                .runs("echo hello; sleep 100000")
                .keeps_running(),
        );

        hal(&rig).args(["module", "start", &web]).code(0);
        let st = rig.status(&web).code(0);
        assert_eq!(st.state(), "active");
        let m = st.entry();
        assert_eq!(st.doc()["schema"], 1);
        assert_eq!(m["kind"], "stack");
        assert_eq!(m["desired"], "up");
        assert_eq!(m["limit"]["used"], 1);
        assert_eq!(m["limit"]["burst"], 5);
        assert_eq!(m["services"][0]["name"], "web");
        assert_eq!(m["services"][0]["state"], "running");
        assert!(
            m["services"][0]["started_at"]
                .as_str()
                .unwrap()
                .starts_with("20")
        );

        // The human table names the module and its state.
        let table = hal(&rig).args(["status"]).code(0);
        assert!(
            table.stdout.contains(&web) && table.stdout.contains("active"),
            "{table}"
        );

        hal(&rig).args(["module", "stop", &web]).code(0);
        assert!(containers(&web).is_empty(), "containers left after stop");
        assert!(networks(&web).is_empty(), "network left after stop");
        let st = rig.status(&web).code(3);
        assert_eq!(st.state(), "inactive");
        assert_eq!(st["desired"], "down");
    });
}

#[test]
fn healthchecks_and_depends_on_service_healthy() {
    let Some(rig) = rig::engine() else { return };
    // db becomes healthy after ~3 s; api waits for it (condition: service_healthy).
    let m = rig.stack(
        "multi",
        stack()
            .service("db")
            .healthy_after(3)
            .keeps_running()
            .service("api")
            .healthy_after(0)
            .keeps_running()
            .depends_on_healthy("db"),
    );
    let run = hal(&rig).args(["module", "start", &m]).code(0);
    assert!(
        run.took >= Duration::from_secs(3),
        "start returned before db was healthy: {run}"
    );
    let st = rig.status(&m);
    assert_eq!(st.state(), "active", "{st}");
    for s in st.services() {
        assert_eq!(s["health"], "healthy", "{st}");
    }
}

#[test]
fn slow_healthcheck_is_starting_then_active_and_no_wait_returns_early() {
    let Some(rig) = rig::engine() else { return };
    let m = rig.stack(
        "slow",
        stack().service("app").healthy_after(4).keeps_running(),
    );
    let run = hal(&rig).args(["module", "start", "--no-wait", &m]).code(0);
    // It returned while the healthcheck was still starting (a wait would
    // have said `active`); how long compose took depends on the machine.
    assert!(
        run.stdout.contains("starting") && !run.stdout.contains("active"),
        "--no-wait waited: {run}"
    );
    assert_eq!(rig.status(&m).code(3).state(), "starting");
    // A second start waits for health.
    hal(&rig).args(["module", "start", &m]).code(0);
    assert_eq!(rig.state_of(&m), "active");
}

#[test]
fn unhealthy_service_times_out_with_a_diagnosis() {
    let Some(rig) = rig::engine() else { return };
    let m = rig.stack(
        "sick",
        stack()
            .service("ok")
            .keeps_running()
            .service("sick")
            .runs("echo cannot reach the database; sleep 100000")
            .keeps_running()
            .healthy_while("/tmp/ready"),
    );
    let run = hal(&rig)
        .args(["module", "start", "--timeout", "6s", &m])
        .code(1);
    assert!(
        run.stderr
            .contains(&format!("hal: start {m}: not active after 6s")),
        "{run}"
    );
    assert!(run.stderr.contains("service sick is unhealthy"), "{run}");
    assert!(
        run.stderr
            .contains("sick: state running, exit code 0, health unhealthy"),
        "{run}"
    );
    assert!(
        run.stderr.contains("sick | cannot reach the database"),
        "last log lines missing: {run}"
    );
    // A start that timed out leaves the module failed, with the cause, until someone acts.
    let st = rig.status(&m).code(3);
    assert_eq!(st.state(), "failed");
    assert!(
        st.reason().contains("start failed: not active after 6s"),
        "{st}"
    );
}

#[test]
fn failing_service_and_finished_job() {
    rig::each_engine(|rig| {
        let bad = rig.stack(
            "bad",
            stack()
                .service("job")
                .runs("echo migration failed >&2; exit 3")
                .restart("no"),
        );
        let run = hal(&rig).args(["module", "start", &bad]).code(1);
        assert!(
            run.took < Duration::from_secs(30),
            "a terminal failure should not wait for the timeout"
        );
        assert!(
            run.stderr.contains("service job exited with code 3"),
            "{run}"
        );
        // Podman: hal's diagnosis shows no last log lines there (yet).
        if !rig.on_podman() {
            assert!(run.stderr.contains("job | migration failed"), "{run}");
        }
        let st = rig.status(&bad).code(3);
        assert_eq!(st.state(), "failed");

        // A job that exits 0 under restart: "no" is finished, not failed.
        let ok = rig.stack(
            "ok",
            stack()
                .service("migrate")
                .runs("echo done")
                .restart("no")
                .service("web")
                .keeps_running(),
        );
        hal(&rig).args(["module", "start", &ok]).code(0);
        assert_eq!(rig.state_of(&ok), "active");
    });
}

#[test]
fn restart_loop_is_failed() {
    let Some(rig) = rig::engine() else { return };
    let m = rig.stack(
        "loop",
        stack()
            .service("crash")
            .runs("echo crashing; exit 1")
            .restart("always"),
    );
    let run = hal(&rig)
        .args(["module", "start", "--timeout", "60s", &m])
        .code(1);
    assert!(run.stderr.contains("restarting in a loop"), "{run}");
    assert!(
        eventually(Duration::from_secs(20), || rig.state_of(&m) == "failed"),
        "status never said failed"
    );
}

#[test]
fn dotenv_env_file_and_docker_compose_yml() {
    let Some(rig) = rig::engine() else { return };
    // `${GREETING}` is compose's (from .env); `$$SECRET` the shell's (from env_file).
    let yaml = format!(
        "services:\n  app:\n    image: {FIXTURE}\n    command: [\"sh\", \"-c\", \"echo greeting=${{GREETING}} secret=$$SECRET; sleep 100000\"]\n    env_file: app.env\n    stop_signal: SIGKILL\n"
    );
    let m = rig.stack_file("legacy", "docker-compose.yml", &yaml);
    rig.write(&m, ".env", "GREETING=hello-from-dotenv\n");
    rig.write(&m, "app.env", "SECRET=from-env-file\n");
    let list = hal(&rig).args(["--json", "module", "list"]).code(0);
    assert!(
        list.json()["modules"][0]["source"]
            .as_str()
            .unwrap()
            .ends_with("docker-compose.yml")
    );
    hal(&rig).args(["module", "start", &m]).code(0);
    let logs = hal(&rig).args(["module", "logs", &m]).code(0);
    assert!(
        logs.stdout
            .contains("greeting=hello-from-dotenv secret=from-env-file"),
        "{logs}"
    );
}

#[test]
fn bad_input_gets_one_clear_line() {
    let Some(rig) = rig::engine() else { return };
    let broken = rig.stack("broken", "services:\n  x: [oops\n");
    std::fs::create_dir_all(rig.root.join("Not_Valid")).unwrap();
    std::fs::write(rig.root.join("Not_Valid/compose.yaml"), "services: {}\n").unwrap();

    let run = hal(&rig).args(["module", "start", &broken]).code(1);
    assert!(
        run.stderr.starts_with(&format!("hal: start {broken}: ")),
        "{run}"
    );
    assert!(
        run.stderr.contains("yaml"),
        "compose's own message is missing: {run}"
    );

    let list = hal(&rig).args(["--json", "module", "list"]).run();
    let doc = list.json();
    let invalid = doc["modules"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "Not_Valid")
        .unwrap()
        .clone();
    assert_eq!(invalid["valid"], false);
    assert!(
        invalid["reason"]
            .as_str()
            .unwrap()
            .contains("not a valid compose project name")
    );
    assert_eq!(rig.state_of("Not_Valid"), "invalid");
    hal(&rig).args(["module", "start", "Not_Valid"]).code(1);

    let run = hal(&rig).args(["module", "start", "ghost"]).code(4);
    assert_eq!(run.stderr.lines().count(), 1, "{run}");
    assert!(
        run.stderr.starts_with("hal: no such module: ghost"),
        "{run}"
    );

    // `a/b` is MODULE/SERVICE: no module a (exit 4), not an invalid name.
    hal(&rig).args(["module", "start", "a/b"]).code(4);
    for hostile in [
        "../etc",
        &format!("{broken}/../etc"),
        "a b",
        "$(touch /tmp/pwned)",
        "x;rm -rf /",
        "",
    ] {
        let run = hal(&rig).args(["module", "start", hostile]).code(2);
        assert!(
            run.stderr.starts_with("hal: invalid module name"),
            "{hostile:?}: {run}"
        );
        assert!(!run.stderr.contains("panicked"), "{run}");
    }

    rig.set_config("[defaults]\npull = \"sometimes\"\n");
    let run = hal(&rig).args(["status"]).code(2);
    assert!(run.stderr.contains(path_str(&rig.config)), "{run}");
    assert!(
        run.stderr.contains("line 2") && run.stderr.contains("defaults.pull"),
        "{run}"
    );
}

#[test]
fn unreachable_engine_exits_6_naming_the_endpoint() {
    let rig = Rig::new();
    let m = rig.stack("web", stack().service("web").runs("sleep 1"));
    for args in [
        vec!["status"],
        vec!["module", "start", &m],
        vec!["module", "logs", &m],
    ] {
        let mut cmd = hal(&rig).args(["-H", "unix:///nonexistent"]);
        for a in &args {
            cmd = cmd.arg(a);
        }
        let run = cmd.within(Duration::from_secs(30)).code(6);
        assert!(
            run.stderr.contains("unix:///nonexistent"),
            "{args:?}: {run}"
        );
        assert!(!run.stderr.contains("panicked"), "{run}");
    }
    // The start that could not happen was not counted.
    let st = hal(&rig)
        .args(["-H", "unix:///nonexistent"])
        .status(&[])
        .code(6);
    assert_eq!(st.module(&m)["state"], "unknown", "{st}");
    assert_eq!(st.module(&m)["limit"]["used"], 0, "{st}");
}

#[test]
fn socket_permission_denied_says_how_to_fix_it() {
    let Some(rig) = rig::engine() else { return };
    let Some(()) = rig::need_that(
        nix_is_root(),
        "needs root to switch to an unprivileged user",
        "run as root, as CI does",
    ) else {
        return;
    };
    let _ = std::fs::set_permissions(
        &rig.dir,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    );
    let mut cmd = std::process::Command::new("setpriv");
    cmd.args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .arg(env!("CARGO_BIN_EXE_hal"))
        .args(["status"])
        .env("HAL_SERVICES_DIR", &rig.root)
        .env("HAL_STATE_DIR", "/tmp/hal-test-nobody-state")
        .env("HAL_CONFIG", &rig.config)
        .env("USER", "nobody")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    rig.stack("web", stack().service("web").runs("sleep 1"));
    let _ = std::fs::set_permissions(
        &rig.config,
        std::os::unix::fs::PermissionsExt::from_mode(0o644),
    );
    let run = run_with_timeout(cmd, Duration::from_secs(30));
    run.expect(6);
    assert!(
        run.stderr
            .contains("permission denied on /var/run/docker.sock: add nobody to the docker group"),
        "{run}"
    );
}

fn nix_is_root() -> bool {
    std::process::Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

#[test]
fn several_modules_concurrently_and_all_needs_yes() {
    let Some(rig) = rig::engine() else { return };
    let names: Vec<String> = (0..3)
        .map(|i| {
            rig.stack(
                &format!("m{i}"),
                stack().service("app").healthy_after(3).keeps_running(),
            )
        })
        .collect();
    let mut start = hal(&rig).args(["--json", "module", "start", "--jobs", "3"]);
    for n in &names {
        start = start.arg(n);
    }
    let run = start.code(0);
    let doc = run.json();
    let reports = doc["modules"].as_array().unwrap();
    assert_eq!(reports.len(), 3);
    for (r, n) in reports.iter().zip(&names) {
        assert_eq!(&r["name"], n);
        assert_eq!(r["ok"], true);
        assert_eq!(r["state"], "active");
    }
    // Concurrent: every container was created before the first could turn
    // healthy (3 s after it started), read from the engine's own clock.
    let created: Vec<timefmt::Stamp> = names
        .iter()
        .map(|n| {
            let id = ids(n);
            let t = docker(&["inspect", "--format", "{{.Created}}", id.trim()]);
            timefmt::parse(t.trim()).unwrap()
        })
        .collect();
    let spread = created
        .iter()
        .max()
        .unwrap()
        .since(*created.iter().min().unwrap());
    assert!(
        spread < Duration::from_secs(3),
        "not concurrent: created {spread:?} apart"
    );

    // stop --all with no terminal and no --yes is a usage error that changes nothing.
    let run = hal(&rig).args(["module", "stop", "--all"]).code(2);
    assert!(run.stderr.contains("--yes"), "{run}");
    assert_eq!(rig.status_all(&names[0]).state(), "active");
    hal(&rig).args(["--yes", "module", "stop", "--all"]).code(0);
    for n in &names {
        assert!(containers(n).is_empty());
    }
}

#[test]
fn compose_v1_start_restart_stop() {
    let Some(mut rig) = rig::engine() else { return };
    let v1 = std::process::Command::new("docker-compose")
        .arg("version")
        .arg("--short")
        .output();
    let is_v1 = v1
        .as_ref()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim().starts_with("1."));
    let Some(()) = rig::need_that(
        is_v1,
        "docker-compose v1 is not installed",
        "CI must provide it: scripts/provision.sh",
    ) else {
        return;
    };
    rig.env
        .push(("HAL_COMPOSE".into(), "docker-compose".into()));
    let m = rig.stack(
        "legacy",
        stack()
            .service("web")
            .healthy_after(0)
            .keeps_running()
            .service("db")
            .healthy_after(0)
            .keeps_running(),
    );
    hal(&rig).args(["module", "start", &m]).code(0);
    let names = containers(&m);
    assert!(
        names.iter().any(|n| n.contains('_')),
        "not started by compose v1: {names:?}"
    );
    assert_eq!(rig.state_of(&m), "active");

    let before = running_ids(&m);
    hal(&rig).args(["module", "restart", &m]).code(0);
    let after = running_ids(&m);
    assert_ne!(before, after, "restart did not recreate the containers");
    assert_eq!(rig.state_of(&m), "active");

    hal(&rig).args(["module", "stop", &m]).code(0);
    assert!(containers(&m).is_empty());
    assert!(networks(&m).is_empty());
}
