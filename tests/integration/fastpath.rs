//! End to end: an unchanged module starts without compose; any change to its files goes through compose.

use crate::rig::{self, ComposeCalls, Rig, docker, hal, ids, past_first_second, script, stack};

/// The rig's compose spy, with a limit these tests (they start often) stay under.
fn spy(rig: &mut Rig) -> ComposeCalls {
    // Every start counts against the limit; these tests start often.
    rig.set_config("[defaults]\npull = \"never\"\nrestart = { burst = 50, interval = \"1m\" }\n");
    ComposeCalls::install(rig)
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
    rig::each_engine(|mut rig| {
        let log = spy(&mut rig);
        let m = rig.stack("fast", app("v1"));
        rig.write(&m, "app.env", "NAME=one\n");
        let logs = || hal(&rig).args(["module", "logs", &m]).run().stdout;
        hal(&rig).args(["module", "start", &m]).code(0);
        assert!(
            log.calls().contains("up -d"),
            "first start goes through compose"
        );
        // Settled for the fast path, which a no-op start must take.
        past_first_second(&m);

        // Already active, nothing changed: no compose process at all.
        log.forget();
        let before = ids(&m);
        hal(&rig).args(["module", "start", &m]).code(0);
        assert_eq!(log.calls(), "", "a no-op start ran compose");
        assert_eq!(ids(&m), before);

        // An edited compose file is applied.
        rig.write(&m, "compose.yaml", &app("v2").to_string());
        hal(&rig).args(["module", "start", &m]).code(0);
        assert!(
            log.calls().contains("up -d"),
            "an edited compose file must go through compose"
        );
        assert!(logs().contains("v2 one"));

        // An edited env file is applied.
        rig.write(&m, "app.env", "NAME=two\n");
        hal(&rig).args(["module", "start", &m]).code(0);
        assert!(logs().contains("v2 two"), "edited env_file not applied");

        // An edited .env is applied (it changes interpolation).
        rig.write(&m, "compose.yaml", &app("${GREETING}").to_string());
        rig.write(&m, ".env", "GREETING=hello\n");
        hal(&rig).args(["module", "start", &m]).code(0);
        rig.write(&m, ".env", "GREETING=bonjour\n");
        hal(&rig).args(["module", "start", &m]).code(0);
        assert!(logs().contains("bonjour two"), "edited .env not applied");
    });
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
    // Wanted up, and its policy keeps it running: not done (issue 33).
    assert_eq!(rig.state_of(&m), "failed");
    log.forget();
    hal(&rig).args(["module", "start", &m]).code(0);
    assert_eq!(
        log.calls(),
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
    assert!(log.calls().contains("up -d"));
    assert_ne!(ids(&m), before);
}

/// The first start after `down` asks compose for the image list (`config`);
/// later ones reuse it while the files, the variables they interpolate and
/// the compose version are the same, so `up` is the only compose process.
#[test]
fn start_after_down_runs_compose_once_while_its_inputs_are_the_same() {
    let Some(mut rig) = rig::engine() else { return };
    let log = spy(&mut rig);
    let m = rig.stack("down", app("${GREETING:-hi}"));
    rig.write(&m, "app.env", "NAME=x\n");
    // What compose ran for one start, the version probe left out.
    let start = |env: &[(&str, &str)]| {
        log.forget();
        let mut h = hal(&rig).args(["module", "start", &m]);
        for (k, v) in env {
            h = h.env(k, v);
        }
        h.code(0);
        let text = log.calls();
        let runs: Vec<String> = text
            .lines()
            .filter(|l| !l.starts_with("version"))
            .map(|l| l.split_whitespace().nth(2).unwrap_or("").to_string())
            .collect();
        hal(&rig).args(["module", "stop", &m]).code(0);
        assert!(rig::containers(&m).is_empty(), "stop leaves containers");
        runs
    };
    assert_eq!(
        start(&[]),
        ["config", "up"],
        "the first start learns the images"
    );
    assert_eq!(
        start(&[]),
        ["up"],
        "an unchanged start after down ran more than `up`"
    );
    assert_eq!(
        start(&[("GREETING", "hello")]),
        ["config", "up"],
        "a variable the files interpolate changed: compose must say the images again"
    );
    assert_eq!(start(&[("GREETING", "hello")]), ["up"]);
    log.fake_version("2.99.0\n");
    assert_eq!(
        start(&[("GREETING", "hello")]),
        ["config", "up"],
        "another compose version must say the images again"
    );
    rig.write(&m, "app.env", "NAME=y\n");
    assert_eq!(
        start(&[("GREETING", "hello")]),
        ["config", "up"],
        "an edited env_file must go through config"
    );
}

/// With no `HAL_COMPOSE`, hal runs the docker CLI's compose plugin itself,
/// found where the CLI looks first (`$DOCKER_CONFIG/cli-plugins`), with no
/// `docker` process in front of it, and names it `docker compose`.
#[test]
fn the_compose_plugin_is_run_directly() {
    let Some(mut rig) = rig::engine() else { return };
    let Some(real) = [
        "/usr/local/lib/docker/cli-plugins/docker-compose",
        "/usr/local/libexec/docker/cli-plugins/docker-compose",
        "/usr/lib/docker/cli-plugins/docker-compose",
        "/usr/libexec/docker/cli-plugins/docker-compose",
    ]
    .into_iter()
    .find(|p| std::path::Path::new(p).exists())
    .or_else(|| {
        rig::missing(
            "no compose plugin",
            "install the compose plugin (scripts/provision.sh)",
        )
    }) else {
        return;
    };
    let cfg = rig.dir.join("dockercfg");
    std::fs::create_dir_all(cfg.join("cli-plugins")).unwrap();
    let log = rig.dir.join("plugin-calls.log");
    let plugin = script(
        &cfg.join("cli-plugins"),
        "docker-compose",
        &format!(
            "#!/bin/sh\necho \"$*\" >> '{}'\nexec '{real}' \"$@\"\n",
            log.display()
        ),
    );
    assert!(plugin.ends_with("cli-plugins/docker-compose"));
    rig.env
        .push(("DOCKER_CONFIG".into(), cfg.display().to_string()));
    rig.set_config("[defaults]\npull = \"never\"\n");
    let m = rig.stack("plugin", app("hi"));
    rig.write(&m, "app.env", "NAME=x\n");
    hal(&rig).args(["module", "start", &m]).code(0);
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(
        text.lines()
            .any(|l| l.starts_with(&format!("-p {m} up -d"))),
        "the plugin was not run directly for `up`: {text:?}"
    );
    assert!(
        !text.lines().any(|l| l.starts_with("compose ")),
        "the plugin was run through the docker CLI: {text:?}"
    );
    let doc = hal(&rig).args(["doctor"]).run();
    assert!(doc.stdout.contains("docker compose"), "{doc}");
    hal(&rig).args(["module", "stop", &m]).code(0);
    assert!(rig::containers(&m).is_empty());
}

/// A tag moved to another image by hand, no file changed: compose recreates,
/// so the start must go through compose, not keep the old container (issue 49).
#[test]
fn a_tag_moved_to_another_image_is_recreated() {
    let Some(mut rig) = rig::engine() else { return };
    let log = spy(&mut rig);
    let tag = format!("hal-moved:{}", rig.name("t").to_lowercase());
    docker(&["tag", rig::FIXTURE, &tag]);
    let m = rig.stack(
        "moved",
        format!("services:\n  app:\n    image: {tag}\n    command: [\"sh\", \"-c\", \"sleep 100000\"]\n    restart: unless-stopped\n"),
    );
    hal(&rig).args(["module", "start", &m]).code(0);
    past_first_second(&m);
    let before = ids(&m);
    // Another image under the same tag: the fixture with a label.
    let dir = std::env::temp_dir().join(rig.name("moved-build"));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("Dockerfile"),
        format!("FROM {}\nLABEL hal.moved=\"{tag}\"\n", rig::FIXTURE),
    )
    .unwrap();
    let built = rig::docker::cli()
        .args(["build", "-q", "-t", &tag])
        .arg(&dir)
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(built.status.success(), "docker build: {built:?}");
    log.forget();
    hal(&rig).args(["module", "start", &m]).code(0);
    let after = ids(&m);
    docker(&["rmi", "-f", &tag]);
    assert!(
        log.calls().contains("up -d"),
        "the moved tag did not go through compose"
    );
    assert_ne!(before, after, "the container of the old image was kept");
}

/// One replica of a job service removed while the others were stopped:
/// compose creates it again, and so must the start (issue 49).
#[test]
fn a_removed_replica_of_a_stopped_job_is_created_again() {
    let Some(mut rig) = rig::engine() else { return };
    let _log = spy(&mut rig);
    let m = rig.stack(
        "replica",
        format!(
            "services:\n  job:\n    image: {}\n    command: [\"true\"]\n    deploy:\n      replicas: 3\n",
            rig::FIXTURE
        ),
    );
    hal(&rig).args(["module", "start", &m]).code(0);
    assert_eq!(rig::docker::containers(&m).len(), 3);
    docker(&["rm", "-f", &format!("{m}-job-2")]);
    hal(&rig).args(["module", "start", &m]).code(0);
    let mut names = rig::docker::containers(&m);
    names.sort();
    assert_eq!(
        names.len(),
        3,
        "the removed replica was not created again: {names:?}"
    );
}
