//! End to end: an unchanged module starts without compose; any change to its files goes through compose.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::PathBuf;

use common::{FIXTURE, Rig, engine_or_skip};

/// A compose wrapper that logs every call, so a test can see whether compose ran.
fn spy(rig: &mut Rig) -> PathBuf {
    let log = rig.dir.join("compose-calls.log");
    let script = common::script(
        &rig.dir,
        "compose-spy",
        &format!(
            "#!/bin/sh\necho \"$*\" >> '{}'\nexec docker compose \"$@\"\n",
            log.display()
        ),
    );
    rig.env
        .push(("HAL_COMPOSE".into(), script.display().to_string()));
    // Every start counts against the limit; these tests start often.
    rig.set_config("[defaults]\npull = \"never\"\nrestart = { burst = 50, interval = \"1m\" }\n");
    log
}

fn calls(log: &PathBuf) -> String {
    std::fs::read_to_string(log).unwrap_or_default()
}

fn app(greeting: &str) -> String {
    format!(
        "services:\n  app:\n    image: {FIXTURE}\n    command: [\"sh\", \"-c\", \"echo {greeting} $${{NAME}}; sleep 100000\"]\n    env_file: app.env\n    restart: unless-stopped\n    stop_signal: SIGKILL\n"
    )
}

#[test]
fn unchanged_active_module_starts_without_compose_and_changes_go_through_compose() {
    if !engine_or_skip("fast_path") {
        return;
    }
    let mut rig = Rig::new("fast");
    let log = spy(&mut rig);
    let m = rig.stack("fast", &app("v1"));
    rig.write(&m, "app.env", "NAME=one\n");
    rig.run(&["module", "start", &m]).expect(0);
    assert!(
        calls(&log).contains("up -d"),
        "first start goes through compose"
    );
    std::thread::sleep(std::time::Duration::from_millis(1200));

    // Already active, nothing changed: no compose process at all.
    std::fs::write(&log, "").unwrap();
    let before = common::ids(&m);
    let run = rig.run(&["module", "start", &m]);
    run.expect(0);
    assert_eq!(calls(&log), "", "a no-op start ran compose");
    assert_eq!(common::ids(&m), before);

    // An edited compose file is applied.
    rig.write(&m, "compose.yaml", &app("v2"));
    rig.run(&["module", "start", &m]).expect(0);
    assert!(
        calls(&log).contains("up -d"),
        "an edited compose file must go through compose"
    );
    assert!(rig.run(&["module", "logs", &m]).stdout.contains("v2 one"));

    // An edited env file is applied.
    rig.write(&m, "app.env", "NAME=two\n");
    rig.run(&["module", "start", &m]).expect(0);
    assert!(
        rig.run(&["module", "logs", &m]).stdout.contains("v2 two"),
        "edited env_file not applied"
    );

    // An edited .env is applied (it changes interpolation).
    rig.write(&m, "compose.yaml", &app("${GREETING}"));
    rig.write(&m, ".env", "GREETING=hello\n");
    rig.run(&["module", "start", &m]).expect(0);
    rig.write(&m, ".env", "GREETING=bonjour\n");
    rig.run(&["module", "start", &m]).expect(0);
    assert!(
        rig.run(&["module", "logs", &m])
            .stdout
            .contains("bonjour two"),
        "edited .env not applied"
    );
}

#[test]
fn docker_stopped_module_starts_through_the_engine_api() {
    if !engine_or_skip("docker_stopped_module") {
        return;
    }
    let mut rig = Rig::new("stopped");
    let log = spy(&mut rig);
    let m = rig.stack("stopped", &app("hi"));
    rig.write(&m, "app.env", "NAME=x\n");
    rig.run(&["module", "start", &m]).expect(0);
    let before = common::ids(&m);
    for id in before.split_whitespace() {
        common::docker(&["stop", id]);
    }
    assert_eq!(rig.run(&["--json", "status", &m]).state_of(&m), "inactive");
    std::fs::write(&log, "").unwrap();
    rig.run(&["module", "start", &m]).expect(0);
    assert_eq!(
        calls(&log),
        "",
        "a docker-stopped, unchanged module should start through the API"
    );
    assert_eq!(
        common::ids(&m),
        before,
        "the same containers should be started"
    );
    assert_eq!(rig.run(&["--json", "status", &m]).state_of(&m), "active");

    // The same, after an edit: compose recreates.
    for id in before.split_whitespace() {
        common::docker(&["stop", id]);
    }
    rig.write(&m, "app.env", "NAME=y\n");
    rig.run(&["module", "start", &m]).expect(0);
    assert!(calls(&log).contains("up -d"));
    assert_ne!(common::ids(&m), before);
}
