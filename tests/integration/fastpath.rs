//! End to end: an unchanged module starts without compose; any change to its files goes through compose.

use std::path::PathBuf;

use crate::rig::{self, Rig, docker, hal, ids, script, stack};

/// A compose wrapper that logs every call, so a test can see whether compose ran.
fn spy(rig: &mut Rig) -> PathBuf {
    let log = rig.dir.join("compose-calls.log");
    let script = script(
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

/// Says `GREETING NAME` (NAME from app.env; GREETING may be `${…}` from .env), then idles.
fn app(greeting: &str) -> rig::compose::Stack {
    stack()
        .service("app")
        .runs_as_written(&format!("echo {greeting} $${{NAME}}; sleep 100000"))
        .env_file("app.env")
        .keeps_running()
}

#[test]
fn unchanged_active_module_starts_without_compose_and_changes_go_through_compose() {
    let Some(mut rig) = rig::engine() else { return };
    let log = spy(&mut rig);
    let m = rig.stack("fast", app("v1"));
    rig.write(&m, "app.env", "NAME=one\n");
    hal(&rig).args(["module", "start", &m]).code(0);
    assert!(
        calls(&log).contains("up -d"),
        "first start goes through compose"
    );
    std::thread::sleep(std::time::Duration::from_millis(1200));

    // Already active, nothing changed: no compose process at all.
    std::fs::write(&log, "").unwrap();
    let before = ids(&m);
    hal(&rig).args(["module", "start", &m]).code(0);
    assert_eq!(calls(&log), "", "a no-op start ran compose");
    assert_eq!(ids(&m), before);

    // An edited compose file is applied.
    rig.write(&m, "compose.yaml", &app("v2").to_string());
    hal(&rig).args(["module", "start", &m]).code(0);
    assert!(
        calls(&log).contains("up -d"),
        "an edited compose file must go through compose"
    );
    assert!(
        hal(&rig)
            .args(["module", "logs", &m])
            .run()
            .stdout
            .contains("v2 one")
    );

    // An edited env file is applied.
    rig.write(&m, "app.env", "NAME=two\n");
    hal(&rig).args(["module", "start", &m]).code(0);
    assert!(
        hal(&rig)
            .args(["module", "logs", &m])
            .run()
            .stdout
            .contains("v2 two"),
        "edited env_file not applied"
    );

    // An edited .env is applied (it changes interpolation).
    rig.write(&m, "compose.yaml", &app("${GREETING}").to_string());
    rig.write(&m, ".env", "GREETING=hello\n");
    hal(&rig).args(["module", "start", &m]).code(0);
    rig.write(&m, ".env", "GREETING=bonjour\n");
    hal(&rig).args(["module", "start", &m]).code(0);
    assert!(
        hal(&rig)
            .args(["module", "logs", &m])
            .run()
            .stdout
            .contains("bonjour two"),
        "edited .env not applied"
    );
}

#[test]
fn docker_stopped_module_starts_through_the_engine_api() {
    let Some(mut rig) = rig::engine() else { return };
    let log = spy(&mut rig);
    let m = rig.stack("stopped", app("hi"));
    rig.write(&m, "app.env", "NAME=x\n");
    hal(&rig).args(["module", "start", &m]).code(0);
    let before = ids(&m);
    for id in before.split_whitespace() {
        docker(&["stop", id]);
    }
    assert_eq!(rig.state_of(&m), "inactive");
    std::fs::write(&log, "").unwrap();
    hal(&rig).args(["module", "start", &m]).code(0);
    assert_eq!(
        calls(&log),
        "",
        "a docker-stopped, unchanged module should start through the API"
    );
    assert_eq!(ids(&m), before, "the same containers should be started");
    assert_eq!(rig.state_of(&m), "active");

    // The same, after an edit: compose recreates.
    for id in before.split_whitespace() {
        docker(&["stop", id]);
    }
    rig.write(&m, "app.env", "NAME=y\n");
    hal(&rig).args(["module", "start", &m]).code(0);
    assert!(calls(&log).contains("up -d"));
    assert_ne!(ids(&m), before);
}
