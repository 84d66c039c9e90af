//! End to end: status tells the truth of a stack against its expected set (a service without a
//! container is named and repaired), a failed start stays `failed` with its cause until someone acts,
//! a deliberate stop is never `failed`, a service its restart policy keeps running is not done
//! when it is stopped behind hal's back, and health reads the same in every output.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::rig::watch::{SUBSCRIBED, Watch};
use crate::rig::{self, Rig, docker, eventually, hal, stack};

/// Container name → id, for every container of the module.
fn ids_of(m: &str) -> BTreeMap<String, String> {
    rig::containers(m)
        .into_iter()
        .map(|c| {
            let id = docker(&["inspect", "-f", "{{.Id}}", &c]);
            (c, id.trim().to_string())
        })
        .collect()
}

/// The names `status --failed` lists (as JSON).
fn failed(rig: &Rig) -> Vec<String> {
    let doc = rig.status_of(&["--failed"]).run.json();
    rig::module_names(&doc)
}

fn three(rig: &Rig, short: &str) -> String {
    rig.stack(
        short,
        stack()
            .service("web")
            .keeps_running()
            .service("db")
            .keeps_running()
            .service("cache")
            .keeps_running(),
    )
}

#[test]
fn a_service_without_its_container_degrades_the_module_and_is_named() {
    let Some(rig) = rig::engine() else { return };
    let m = three(&rig, "gone");
    hal(&rig).args(["module", "start", &m]).code(0);
    docker(&["rm", "-f", &format!("{m}-db-1")]);
    let table = hal(&rig).args(["status", &m]).code(3);
    assert!(table.stdout.contains("degraded"), "{table:?}");
    assert!(table.stdout.contains("db: no container"), "{table:?}");
    let s = rig.status(&m);
    assert_eq!(s["state"], "degraded", "{s}");
    assert_eq!(s["reason"], "db: no container", "{s}");
    assert_eq!(s["missing"][0]["name"], "db", "{s}");
    assert!(failed(&rig).contains(&m));
    hal(&rig).args(["-q", "status", &m]).code(3);
    // A service stopped on purpose is expected down: the module is active.
    hal(&rig).args(["module", "start", &m]).code(0);
    hal(&rig)
        .args(["module", "stop", &format!("{m}/cache")])
        .code(0);
    let s = rig.status(&m);
    assert_eq!(s["state"], "active", "{s}");
    assert_eq!(s["expected_down"][0], "cache", "{s}");
    assert!(!failed(&rig).contains(&m));
    hal(&rig).args(["status", &m]).code(0);
}

#[test]
fn watch_brings_a_removed_service_back_and_leaves_its_siblings_alone() {
    let Some(rig) = rig::engine() else { return };
    let m = three(&rig, "back");
    hal(&rig).args(["module", "start", &m]).code(0);
    let before = ids_of(&m);
    let mut w = Watch::spawn(&rig, &[]);
    let db = format!("{m}-db-1");
    docker(&["rm", "-f", &db]);
    let why = w.expect(Duration::from_secs(30), |l| {
        l.starts_with(&format!("{m}: repairing: "))
    });
    assert!(why.contains("db: no container"), "{why}");
    w.expect(Duration::from_secs(45), |l| {
        l.starts_with(&format!("{m}: restarted, active ("))
    });
    let after = ids_of(&m);
    assert_eq!(after.len(), 3, "{after:?}");
    for sibling in ["web", "cache"] {
        let c = format!("{m}-{sibling}-1");
        assert_eq!(before[&c], after[&c], "{sibling} was touched");
    }
    assert_ne!(before[&db], after[&db]);
    assert_eq!(rig.status(&m).state(), "active");
    // A service a person stops is expected down: watch leaves it so.
    hal(&rig)
        .args(["module", "stop", &format!("{m}/cache")])
        .code(0);
    let lines = w.collect_for(Duration::from_secs(5));
    assert!(!rig::containers(&m).contains(&format!("{m}-cache-1")));
    assert!(
        !lines.iter().any(|l| l.contains("cache: no container")),
        "{lines:?}"
    );
    assert_eq!(rig.status(&m).state(), "active");
}

#[test]
fn a_stack_taken_down_by_hand_under_watch_comes_back_whole() {
    let Some(rig) = rig::engine() else { return };
    let m = three(&rig, "down");
    hal(&rig).args(["module", "start", &m]).code(0);
    let _w = Watch::spawn(&rig, &[]);
    let out = std::process::Command::new("docker")
        .args(["compose", "-p", &m, "down", "-t", "0"])
        .current_dir(rig.root.join(&m))
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let whole = eventually(Duration::from_secs(60), || {
        rig::running_ids(&m).lines().count() == 3 && rig.status(&m).state() == "active"
    });
    assert!(whole, "{:?} {}", rig::containers(&m), rig.status(&m));
}

/// Starts `m` (which must fail), then checks that status says `failed` with
/// `cause` in the reason, twice, and in the start's own JSON entry.
fn fails_with(rig: &Rig, m: &str, cause: &str) {
    let run = hal(rig).args(["--json", "module", "start", m]).run();
    assert_ne!(run.code, Some(0), "{run:?}");
    let entry = &run.json()["modules"][0];
    assert_eq!(entry["state"], "failed", "{run:?}");
    let reason = entry["reason"].as_str().unwrap_or_default();
    assert!(!reason.contains('\n'), "{reason}");
    for _ in 0..2 {
        let s = rig.status(m);
        assert_eq!(s["state"], "failed", "{s}");
        let reason = s["reason"].as_str().unwrap_or_default();
        assert!(reason.contains(cause), "{cause:?} not in {s}");
        assert!(failed(rig).contains(&m.to_string()));
    }
    hal(rig).args(["-q", "status", m]).code(3);
}

#[test]
fn a_failed_start_stays_failed_with_its_cause_until_the_next_good_start() {
    let Some(rig) = rig::engine() else { return };
    let good = stack().service("web").keeps_running();
    // A missing image, then the good file: active, the failure gone.
    let m = rig.stack(
        "noimage",
        stack()
            .service("web")
            .image("hal-test-no-such-image:none")
            .keeps_running(),
    );
    fails_with(&rig, &m, "hal-test-no-such-image");
    rig.stack("noimage", good.clone());
    hal(&rig).args(["module", "start", &m]).code(0);
    assert_eq!(rig.status(&m).state(), "active");
    // Broken YAML.
    let m = rig.stack("yaml", "services:\n  web: [\n");
    fails_with(&rig, &m, "yaml");
    rig.stack("yaml", good.clone());
    hal(&rig).args(["module", "start", &m]).code(0);
    assert_eq!(rig.status(&m).state(), "active");
    // A missing env_file.
    let m = rig.stack("envfile", good.clone().env_file("missing.env"));
    fails_with(&rig, &m, "missing.env");
    rig.write(&m, "missing.env", "A=1\n");
    hal(&rig).args(["module", "start", &m]).code(0);
    assert_eq!(rig.status(&m).state(), "active");
    // A port in use: stays failed until a stop.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let m = rig.stack(
        "port",
        good.clone()
            .line(&format!("ports: [\"127.0.0.1:{port}:80\"]")),
    );
    fails_with(&rig, &m, "address already in use");
    hal(&rig).args(["module", "stop", &m]).code(0);
    let s = rig.status(&m);
    assert_eq!(s["state"], "inactive", "{s}");
    assert!(!failed(&rig).contains(&m));
}

#[test]
fn a_module_stopped_by_request_is_never_failed() {
    let Some(rig) = rig::engine() else { return };
    rig.set_config("[defaults]\npull = \"never\"\nrestart = { burst = 5, interval = \"10m\" }\n");
    let m = rig.stack("parked", stack().service("web").keeps_running());
    hal(&rig).args(["module", "start", &m]).code(0);
    for _ in 0..4 {
        hal(&rig).args(["module", "restart", &m]).code(0);
    }
    assert_eq!(rig.status(&m)["limit"]["used"], 5);
    hal(&rig).args(["module", "stop", &m]).code(0);
    let s = rig.status(&m);
    assert_eq!(s["state"], "inactive", "{s}");
    assert!(!failed(&rig).contains(&m), "{s}");
    let table = hal(&rig).args(["status", "--failed"]).run();
    assert!(!table.stdout.contains(&m), "{table:?}");
}

#[test]
fn an_unhealthy_container_reads_the_same_in_every_output() {
    let Some(rig) = rig::engine() else { return };
    let m = rig.stack(
        "sick",
        stack()
            .service("web")
            .keeps_running()
            .healthcheck("/tmp/never", "interval: 1s\ntimeout: 2s\nretries: 1"),
    );
    hal(&rig).args(["module", "start", &m, "--no-wait"]).run();
    let sick = eventually(Duration::from_secs(30), || {
        rig.status(&m).state() == "degraded"
    });
    assert!(sick, "{}", rig.status(&m));
    rig::wait_out(
        "the age past which a status describes running containers without inspecting them",
        Duration::from_secs(11),
    );
    for _ in 0..2 {
        let s = rig.status(&m);
        assert_eq!(s["state"], "degraded", "{s}");
        assert_eq!(s["services"][0]["health"], "unhealthy", "{s}");
        let table = hal(&rig).args(["status", &m]).code(3);
        assert!(table.stdout.contains("degraded"), "{table:?}");
        hal(&rig).args(["-q", "status", &m]).code(3);
        assert!(failed(&rig).contains(&m));
    }
}

/// A start that timed out on an unhealthy container says that container's
/// trouble once: the failure saw it, so the live cause is not said again.
#[test]
fn a_failed_start_says_the_trouble_it_saw_once() {
    let Some(rig) = rig::engine() else { return };
    let m = rig.stack(
        "sawit",
        stack()
            .service("web")
            .keeps_running()
            .healthcheck("/tmp/never", "interval: 1s\ntimeout: 2s\nretries: 1"),
    );
    let run = hal(&rig)
        .args(["module", "start", "--timeout", "6s", &m])
        .code(1);
    assert!(run.stderr.contains("service web is unhealthy"), "{run}");
    let s = rig.status(&m);
    assert_eq!(s["state"], "failed", "{s}");
    let reason = s["reason"].as_str().unwrap_or_default();
    assert!(
        reason.starts_with("start failed: not active after 6s"),
        "{s}"
    );
    assert_eq!(reason.matches("service web is unhealthy").count(), 1, "{s}");
}

/// `docker compose -p M ARGS` in the module's directory, as a person would run it.
fn compose(rig: &Rig, m: &str, args: &[&str]) {
    let out = std::process::Command::new("docker")
        .args(["compose", "-p", m])
        .args(args)
        .current_dir(rig.root.join(m))
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
}

/// `m` reads `state` in every output (JSON, table, `-q`, `--failed`); its reason.
fn reads_everywhere(rig: &Rig, m: &str, state: &str) -> String {
    let s = rig.status(m);
    assert_eq!(s["state"], state, "{s}");
    let table = hal(rig).args(["status", m]).code(3);
    assert!(table.stdout.contains(state), "{table:?}");
    hal(rig).args(["-q", "status", m]).code(3);
    assert!(failed(rig).contains(&m.to_string()), "{s}");
    s["reason"].as_str().unwrap_or_default().to_string()
}

/// The spec: a service whose restart policy says it should run (`always`,
/// `unless-stopped`) and that is not running is not done, whatever its exit
/// code. A `docker stop` is the commonest way one goes down behind hal's back.
#[test]
fn a_service_its_policy_keeps_running_is_not_done_when_stopped_behind_hals_back() {
    let Some(rig) = rig::engine() else { return };
    let m = rig.stack(
        "policy",
        stack()
            .service("web")
            .keeps_running()
            .service("db")
            .restart("always")
            .service("job")
            .runs("exit 0")
            .restart("no"),
    );
    hal(&rig).args(["module", "start", &m]).code(0);
    // A one-shot that exited 0 is done.
    assert_eq!(rig.status(&m).state(), "active");
    for (first, last) in [("web", "db"), ("db", "web")] {
        docker(&["stop", &format!("{m}-{first}-1")]);
        let why = reads_everywhere(&rig, &m, "degraded");
        assert!(why.contains(&format!("service {first} ")), "{why}");
        // The last one running: nothing of the module runs.
        docker(&["stop", &format!("{m}-{last}-1")]);
        let why = reads_everywhere(&rig, &m, "failed");
        assert!(why.starts_with("service "), "{why}");
        hal(&rig).args(["module", "start", &m]).code(0);
        assert_eq!(rig.status(&m).state(), "active");
    }
    // A service a person stopped with hal stays expected down; the other is not done.
    hal(&rig)
        .args(["module", "stop", &format!("{m}/web")])
        .code(0);
    assert_eq!(rig.status(&m).state(), "active");
    docker(&["stop", &format!("{m}-db-1")]);
    let why = reads_everywhere(&rig, &m, "failed");
    assert!(why.contains("service db "), "{why}");
    assert!(!why.contains("web"), "{why}");
    // A module stopped by request stays inactive, whatever its containers' policy.
    hal(&rig).args(["module", "stop", &m]).code(0);
    compose(&rig, &m, &["up", "-d"]);
    compose(&rig, &m, &["stop", "-t", "0"]);
    let s = rig.status(&m);
    assert_eq!(s["state"], "inactive", "{s}");
    assert_eq!(s["services"][0]["state"], "exited", "{s}");
    assert!(!failed(&rig).contains(&m), "{s}");
}

#[test]
fn watch_starts_again_a_service_stopped_behind_its_back() {
    let Some(rig) = rig::engine() else { return };
    let m = rig.stack(
        "halted",
        stack()
            .service("web")
            .keeps_running()
            .service("db")
            .restart("always"),
    );
    hal(&rig).args(["module", "start", &m]).code(0);
    // No full pass after the first: the engine's events alone start each repair.
    let mut w = Watch::spawn_every(&rig, &[], "1h");
    w.expect(Duration::from_secs(20), |l| l == SUBSCRIBED);
    for svc in ["web", "db"] {
        let c = format!("{m}-{svc}-1");
        docker(&["stop", &c]);
        let why = w.expect(Duration::from_secs(30), |l| {
            l.starts_with(&format!("{m}: repairing: "))
        });
        assert!(why.contains(&format!("service {svc} ")), "{why}");
        assert!(
            why.ends_with(&format!("; starting container {c} again")),
            "{why}"
        );
        w.expect(Duration::from_secs(45), |l| {
            l.starts_with(&format!("{m}: restarted, active ("))
        });
        assert_eq!(rig.status(&m).state(), "active");
    }
}
