//! End to end: the real hal binary driving stacks on the real Docker engine.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use common::{Rig, compose, containers, engine_or_skip, eventually, networks, svc};

const HEALTHY: &str = "    healthcheck:\n      test: [\"CMD\", \"test\", \"-f\", \"/tmp/ready\"]\n      interval: 1s\n      timeout: 2s\n      retries: 3\n";

#[test]
fn one_service_start_status_stop() {
    if !engine_or_skip("one_service_start_status_stop") {
        return;
    }
    let rig = Rig::new("one");
    let web = rig.stack(
        "web",
        &compose(&[svc(
            "web",
            "echo hello; sleep 100000",
            "    restart: unless-stopped\n",
        )]),
    );

    rig.run(&["module", "start", &web]).expect(0);
    let st = rig.run(&["--json", "module", "status", &web]);
    st.expect(0);
    assert_eq!(st.state_of(&web), "active");
    let doc = st.json();
    let m = &doc["modules"][0];
    assert_eq!(doc["schema"], 1);
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
    let table = rig.run(&["status"]);
    table.expect(0);
    assert!(
        table.stdout.contains(&web) && table.stdout.contains("active"),
        "{table:?}"
    );

    rig.run(&["module", "stop", &web]).expect(0);
    assert!(containers(&web).is_empty(), "containers left after stop");
    assert!(networks(&web).is_empty(), "network left after stop");
    let st = rig.run(&["--json", "module", "status", &web]);
    st.expect(3);
    assert_eq!(st.state_of(&web), "inactive");
    assert_eq!(st.json()["modules"][0]["desired"], "down");
}

#[test]
fn healthchecks_and_depends_on_service_healthy() {
    if !engine_or_skip("healthchecks_and_depends_on_service_healthy") {
        return;
    }
    let rig = Rig::new("health");
    // db becomes healthy after ~3 s; api waits for it (condition: service_healthy).
    let db = svc(
        "db",
        "sleep 3; touch /tmp/ready; sleep 100000",
        &format!("    restart: unless-stopped\n{HEALTHY}"),
    );
    let api = svc(
        "api",
        "touch /tmp/ready; sleep 100000",
        &format!(
            "    restart: unless-stopped\n{HEALTHY}    depends_on:\n      db:\n        condition: service_healthy\n"
        ),
    );
    let m = rig.stack("multi", &compose(&[db, api]));
    let run = rig.run(&["module", "start", &m]);
    run.expect(0);
    assert!(
        run.took >= Duration::from_secs(3),
        "start returned before db was healthy: {run:?}"
    );
    let st = rig.run(&["--json", "module", "status", &m]);
    assert_eq!(st.state_of(&m), "active");
    let services = st.json()["modules"][0]["services"].clone();
    for s in services.as_array().unwrap() {
        assert_eq!(s["health"], "healthy", "{services}");
    }
}

#[test]
fn slow_healthcheck_is_starting_then_active_and_no_wait_returns_early() {
    if !engine_or_skip("slow_healthcheck") {
        return;
    }
    let rig = Rig::new("slow");
    let m = rig.stack(
        "slow",
        &compose(&[svc(
            "app",
            "sleep 4; touch /tmp/ready; sleep 100000",
            &format!("    restart: unless-stopped\n{HEALTHY}"),
        )]),
    );
    let run = rig.run(&["module", "start", "--no-wait", &m]);
    run.expect(0);
    assert!(
        run.took < Duration::from_secs(4),
        "--no-wait waited: {run:?}"
    );
    let st = rig.run(&["--json", "module", "status", &m]);
    st.expect(3);
    assert_eq!(st.state_of(&m), "starting");
    // A second start waits for health.
    rig.run(&["module", "start", &m]).expect(0);
    assert_eq!(
        rig.run(&["--json", "module", "status", &m]).state_of(&m),
        "active"
    );
}

#[test]
fn unhealthy_service_times_out_with_a_diagnosis() {
    if !engine_or_skip("unhealthy_service_times_out") {
        return;
    }
    let rig = Rig::new("unhealthy");
    let m = rig.stack(
        "sick",
        &compose(&[
            svc("ok", "sleep 100000", "    restart: unless-stopped\n"),
            svc(
                "sick",
                "echo cannot reach the database; sleep 100000",
                &format!("    restart: unless-stopped\n{HEALTHY}"),
            ),
        ]),
    );
    let run = rig.run(&["module", "start", "--timeout", "6s", &m]);
    run.expect(1);
    assert!(
        run.stderr
            .contains(&format!("hal: start {m}: not active after 6s")),
        "{run:?}"
    );
    assert!(run.stderr.contains("service sick is unhealthy"), "{run:?}");
    assert!(
        run.stderr
            .contains("sick: state running, exit code 0, health unhealthy"),
        "{run:?}"
    );
    assert!(
        run.stderr.contains("sick | cannot reach the database"),
        "last log lines missing: {run:?}"
    );
    let st = rig.run(&["--json", "module", "status", &m]);
    st.expect(3);
    assert_eq!(st.state_of(&m), "degraded");
}

#[test]
fn failing_service_and_finished_job() {
    if !engine_or_skip("failing_service_and_finished_job") {
        return;
    }
    let rig = Rig::new("fail");
    let bad = rig.stack(
        "bad",
        &compose(&[svc(
            "job",
            "echo migration failed >&2; exit 3",
            "    restart: \"no\"\n",
        )]),
    );
    let run = rig.run(&["module", "start", &bad]);
    run.expect(1);
    assert!(
        run.took < Duration::from_secs(30),
        "a terminal failure should not wait for the timeout"
    );
    assert!(
        run.stderr.contains("service job exited with code 3"),
        "{run:?}"
    );
    assert!(run.stderr.contains("job | migration failed"), "{run:?}");
    let st = rig.run(&["--json", "status", &bad]);
    st.expect(3);
    assert_eq!(st.state_of(&bad), "failed");

    // A job that exits 0 under restart: "no" is finished, not failed.
    let ok = rig.stack(
        "ok",
        &compose(&[
            svc("migrate", "echo done", "    restart: \"no\"\n"),
            svc("web", "sleep 100000", "    restart: unless-stopped\n"),
        ]),
    );
    rig.run(&["module", "start", &ok]).expect(0);
    assert_eq!(rig.run(&["--json", "status", &ok]).state_of(&ok), "active");
}

#[test]
fn restart_loop_is_failed() {
    if !engine_or_skip("restart_loop_is_failed") {
        return;
    }
    let rig = Rig::new("loop");
    let m = rig.stack(
        "loop",
        &compose(&[svc(
            "crash",
            "echo crashing; exit 1",
            "    restart: always\n",
        )]),
    );
    let run = rig.run(&["module", "start", "--timeout", "60s", &m]);
    run.expect(1);
    assert!(run.stderr.contains("restarting in a loop"), "{run:?}");
    assert!(
        eventually(Duration::from_secs(20), || rig
            .run(&["--json", "status", &m])
            .state_of(&m)
            == "failed"),
        "status never said failed"
    );
}

#[test]
fn dotenv_env_file_and_docker_compose_yml() {
    if !engine_or_skip("dotenv_env_file_and_docker_compose_yml") {
        return;
    }
    let rig = Rig::new("env");
    let yaml = format!(
        "services:\n  app:\n    image: {}\n    command: [\"sh\", \"-c\", \"echo greeting=${{GREETING}} secret=$$SECRET; sleep 100000\"]\n    env_file: app.env\n    stop_signal: SIGKILL\n",
        common::FIXTURE
    );
    let m = rig.stack_file("legacy", "docker-compose.yml", &yaml);
    rig.write(&m, ".env", "GREETING=hello-from-dotenv\n");
    rig.write(&m, "app.env", "SECRET=from-env-file\n");
    let list = rig.run(&["--json", "module", "list"]);
    list.expect(0);
    assert!(
        list.json()["modules"][0]["source"]
            .as_str()
            .unwrap()
            .ends_with("docker-compose.yml")
    );
    rig.run(&["module", "start", &m]).expect(0);
    let logs = rig.run(&["module", "logs", &m]);
    logs.expect(0);
    assert!(
        logs.stdout
            .contains("greeting=hello-from-dotenv secret=from-env-file"),
        "{logs:?}"
    );
}

#[test]
fn bad_input_gets_one_clear_line() {
    if !engine_or_skip("bad_input_gets_one_clear_line") {
        return;
    }
    let rig = Rig::new("bad");
    let broken = rig.stack("broken", "services:\n  x: [oops\n");
    std::fs::create_dir_all(rig.root.join("Not_Valid")).unwrap();
    std::fs::write(rig.root.join("Not_Valid/compose.yaml"), "services: {}\n").unwrap();

    let run = rig.run(&["module", "start", &broken]);
    run.expect(1);
    assert!(
        run.stderr.starts_with(&format!("hal: start {broken}: ")),
        "{run:?}"
    );
    assert!(
        run.stderr.contains("yaml"),
        "compose's own message is missing: {run:?}"
    );

    let list = rig.run(&["--json", "module", "list"]);
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
    let st = rig.run(&["--json", "status", "Not_Valid"]);
    assert_eq!(st.state_of("Not_Valid"), "invalid");
    rig.run(&["module", "start", "Not_Valid"]).expect(1);

    let run = rig.run(&["module", "start", "ghost"]);
    run.expect(4);
    assert_eq!(run.stderr.lines().count(), 1, "{run:?}");
    assert!(
        run.stderr.starts_with("hal: no such module: ghost"),
        "{run:?}"
    );

    // `a/b` is MODULE/SERVICE: no module a (exit 4), not an invalid name.
    rig.run(&["module", "start", "a/b"]).expect(4);
    for hostile in [
        "../etc",
        &format!("{broken}/../etc"),
        "a b",
        "$(touch /tmp/pwned)",
        "x;rm -rf /",
        "",
    ] {
        let run = rig.run(&["module", "start", hostile]);
        run.expect(2);
        assert!(
            run.stderr.starts_with("hal: invalid module name"),
            "{hostile:?}: {run:?}"
        );
        assert!(!run.stderr.contains("panicked"), "{run:?}");
    }

    rig.set_config("[defaults]\npull = \"sometimes\"\n");
    let run = rig.run(&["status"]);
    run.expect(2);
    assert!(
        run.stderr.contains(common::path_str(&rig.config)),
        "{run:?}"
    );
    assert!(
        run.stderr.contains("line 2") && run.stderr.contains("defaults.pull"),
        "{run:?}"
    );
}

#[test]
fn unreachable_engine_exits_6_naming_the_endpoint() {
    let rig = Rig::new("unreach");
    let m = rig.stack("web", &compose(&[svc("web", "sleep 1", "")]));
    for args in [
        vec!["-H", "unix:///nonexistent", "status"],
        vec!["-H", "unix:///nonexistent", "module", "start", &m],
        vec!["-H", "unix:///nonexistent", "module", "logs", &m],
    ] {
        let run = rig.run_for(&args, Duration::from_secs(30));
        run.expect(6);
        assert!(
            run.stderr.contains("unix:///nonexistent"),
            "{args:?}: {run:?}"
        );
        assert!(!run.stderr.contains("panicked"), "{run:?}");
    }
    // The start that could not happen was not counted.
    let st = rig.run(&["-H", "unix:///nonexistent", "--json", "status"]);
    st.expect(6);
    let doc = st.json();
    assert_eq!(doc["modules"][0]["state"], "unknown");
    assert_eq!(doc["modules"][0]["limit"]["used"], 0);
}

#[test]
fn socket_permission_denied_says_how_to_fix_it() {
    if !engine_or_skip("socket_permission_denied") {
        return;
    }
    if !nix_is_root() {
        common::skip("socket_permission_denied: needs root to switch to an unprivileged user");
        assert!(!common::in_ci(), "CI runs as root");
        return;
    }
    let rig = Rig::new("perm");
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
    rig.stack("web", &compose(&[svc("web", "sleep 1", "")]));
    let _ = std::fs::set_permissions(
        &rig.config,
        std::os::unix::fs::PermissionsExt::from_mode(0o644),
    );
    let run = common::run_with_timeout(cmd, Duration::from_secs(30));
    run.expect(6);
    assert!(
        run.stderr
            .contains("permission denied on /var/run/docker.sock: add nobody to the docker group"),
        "{run:?}"
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
    if !engine_or_skip("several_modules_concurrently") {
        return;
    }
    let rig = Rig::new("many");
    let names: Vec<String> = (0..3)
        .map(|i| {
            rig.stack(
                &format!("m{i}"),
                &compose(&[svc(
                    "app",
                    "sleep 3; touch /tmp/ready; sleep 100000",
                    &format!("    restart: unless-stopped\n{HEALTHY}"),
                )]),
            )
        })
        .collect();
    let mut args = vec!["--json", "module", "start", "--jobs", "3"];
    args.extend(names.iter().map(String::as_str));
    let run = rig.run(&args);
    run.expect(0);
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
    let created: Vec<hal::util::timefmt::Stamp> = names
        .iter()
        .map(|n| {
            let id = common::ids(n);
            let t = common::docker(&["inspect", "--format", "{{.Created}}", id.trim()]);
            hal::util::timefmt::parse(t.trim()).unwrap()
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
    let run = rig.run(&["module", "stop", "--all"]);
    run.expect(2);
    assert!(run.stderr.contains("--yes"), "{run:?}");
    assert_eq!(rig.run(&["--json", "status"]).state_of(&names[0]), "active");
    let run = rig.run(&["--yes", "module", "stop", "--all"]);
    run.expect(0);
    for n in &names {
        assert!(containers(n).is_empty());
    }
}

#[test]
fn compose_v1_start_restart_stop() {
    if !engine_or_skip("compose_v1_start_restart_stop") {
        return;
    }
    let v1 = std::process::Command::new("docker-compose")
        .arg("version")
        .arg("--short")
        .output();
    let is_v1 = v1
        .as_ref()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim().starts_with("1."));
    if !is_v1 {
        assert!(!common::in_ci(), "CI must provide docker-compose v1");
        common::skip("compose_v1_start_restart_stop: docker-compose v1 is not installed");
        return;
    }
    let mut rig = Rig::new("v1");
    rig.env
        .push(("HAL_COMPOSE".into(), "docker-compose".into()));
    let ready = format!("    restart: unless-stopped\n{HEALTHY}");
    let m = rig.stack(
        "legacy",
        &compose(&[
            svc("web", "touch /tmp/ready; sleep 100000", &ready),
            svc("db", "touch /tmp/ready; sleep 100000", &ready),
        ]),
    );
    rig.run(&["module", "start", &m]).expect(0);
    let names = containers(&m);
    assert!(
        names.iter().any(|n| n.contains('_')),
        "not started by compose v1: {names:?}"
    );
    let st = rig.run(&["--json", "status", &m]);
    assert_eq!(st.state_of(&m), "active");

    let before = common::docker(&[
        "ps",
        "-q",
        "--filter",
        &format!("label=com.docker.compose.project={m}"),
    ]);
    rig.run(&["module", "restart", &m]).expect(0);
    let after = common::docker(&[
        "ps",
        "-q",
        "--filter",
        &format!("label=com.docker.compose.project={m}"),
    ]);
    assert_ne!(before, after, "restart did not recreate the containers");
    assert_eq!(rig.run(&["--json", "status", &m]).state_of(&m), "active");

    rig.run(&["module", "stop", &m]).expect(0);
    assert!(containers(&m).is_empty());
    assert!(networks(&m).is_empty());
}
