//! End to end: a start is bounded by its timeout, compose included, and every start path starts containers in compose's dependency order.

use std::process::Command;
use std::time::Duration;

use crate::rig::{self, Rig, docker, hal, stack};

/// Many starts in a row: none may be refused by the start limit.
fn many_starts(rig: &Rig) {
    rig.set_config("[defaults]\npull = \"never\"\nrestart = { burst = 50, interval = \"1m\" }\n");
}

#[test]
fn start_timeout_bounds_compose_waiting_on_a_dependency_and_names_it() {
    let Some(rig) = rig::engine() else { return };
    many_starts(&rig);
    // db's health stays `starting` for five minutes: compose holds `slow` back.
    let m = rig.stack(
        "slow",
        stack()
            .service("db")
            .healthcheck("/tmp/never", "interval: 1s\nretries: 3\nstart_period: 300s")
            .service("slow")
            .depends_on_healthy("db"),
    );
    let run = hal(&rig)
        .args(["module", "start", &m, "--timeout", "10s"])
        .within(Duration::from_secs(60))
        .code(1);
    assert!(
        run.took < Duration::from_secs(25),
        "a 10 s timeout took {:?}: {run}",
        run.took
    );
    assert!(
        run.stderr.contains("not active after 10s") && run.stderr.contains("service db"),
        "the error names the service the start waited for: {run}"
    );
    assert!(
        run.stderr.contains("health: starting"),
        "and why it waited: {run}"
    );
    // What compose made stays: db runs on, slow was created.
    let db = service_container(&m, "db");
    assert_eq!(
        docker(&["inspect", "-f", "{{.State.Status}}", &db]).trim(),
        "running"
    );
}

/// The container of `service` in `project` (its first replica).
fn service_container(project: &str, service: &str) -> String {
    let filter = |k: &str, v: &str| format!("label=com.docker.compose.{k}={v}");
    let out = docker(&[
        "ps",
        "-aq",
        "--filter",
        &filter("project", project),
        "--filter",
        &filter("service", service),
    ]);
    let id = out.lines().next().unwrap_or_default().to_string();
    assert!(!id.is_empty(), "{project} has no container for {service}");
    id
}

/// When the container last started: `State.StartedAt` as a sortable
/// `(date and seconds, nanoseconds)` pair.
fn started_at(project: &str, service: &str) -> (String, u32) {
    let id = service_container(project, service);
    let at = docker(&["inspect", "-f", "{{.State.StartedAt}}", &id]);
    let at = at.trim().trim_end_matches('Z');
    let (secs, frac) = at.split_once('.').unwrap_or((at, "0"));
    let nanos = format!("{frac:0<9}")[..9].parse().unwrap();
    (secs.to_string(), nanos)
}

/// `docker compose stop`, run in the module's directory as a person would.
fn compose_stop(rig: &Rig, module: &str) {
    let out = Command::new("docker")
        .args(["compose", "-p", module, "stop"])
        .current_dir(rig.root.join(module))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "docker compose stop: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_start_after_compose_stop_keeps_compose_order_every_time() {
    let Some(rig) = rig::engine() else { return };
    many_starts(&rig);
    // Compose creates db, app, web in that order, within one second: the list
    // gives them newest first, and by name app comes before db.
    let m = rig.stack(
        "order",
        stack()
            .service("web")
            .depends_on_started("app", false)
            .service("app")
            .network_mode("\"service:db\"")
            .service("db"),
    );
    hal(&rig).args(["module", "start", &m]).code(0);
    for round in 1..=10 {
        compose_stop(&rig, &m);
        let run = hal(&rig).args(["module", "start", &m]).run();
        assert_eq!(run.code, Some(0), "round {round}: {run}");
        let (db, app, web) = (
            started_at(&m, "db"),
            started_at(&m, "app"),
            started_at(&m, "web"),
        );
        assert!(
            db < app && app < web,
            "round {round}: started out of order: db {db:?}, app {app:?}, web {web:?}"
        );
    }
}

#[test]
fn a_start_after_compose_stop_waits_for_a_healthy_dependency() {
    let Some(rig) = rig::engine() else { return };
    many_starts(&rig);
    let m = rig.stack(
        "gate",
        stack()
            .service("api")
            .depends_on_healthy("db")
            .service("db")
            // Unhealthy for two seconds at every start (the file outlives a stop).
            .runs("rm -f /tmp/ready; sleep 2; touch /tmp/ready; sleep 100000")
            .healthy_while("/tmp/ready"),
    );
    hal(&rig).args(["module", "start", &m]).code(0);
    compose_stop(&rig, &m);
    hal(&rig).args(["module", "start", &m]).code(0);
    let (db, api) = (started_at(&m, "db"), started_at(&m, "api"));
    // api started only once db was healthy, two seconds after db started.
    let seconds = |t: &(String, u32)| {
        let hms = t.0.rsplit('T').next().unwrap();
        let s: Vec<f64> = hms.split(':').map(|x| x.parse().unwrap()).collect();
        s[0] * 3600.0 + s[1] * 60.0 + s[2] + f64::from(t.1) / 1e9
    };
    assert!(
        seconds(&api) - seconds(&db) >= 2.0,
        "api started before db was healthy: db {db:?}, api {api:?}"
    );
}
