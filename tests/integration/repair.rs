//! End to end: `hal watch` repairs at the smallest scope (the failed container, never its healthy
//! siblings), restarts `depends_on: {restart: true}` dependents with their dependency, escalates to the
//! module when that does not hold, and keeps its holds across its own restart; `restart web/worker`
//! restarts every replica of one service alone.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

use crate::rig::watch::{SUBSCRIBED, Watch, lines_about};
use crate::rig::{self, docker, hal, stack};

const FOREVER: &str = "while true; do sleep 1 & wait; done";

/// Container name → `Id StartedAt`, for every container of the module.
fn identities(m: &str) -> BTreeMap<String, String> {
    rig::containers(m)
        .into_iter()
        .map(|c| {
            let id = docker(&["inspect", "-f", "{{.Id}} {{.State.StartedAt}}", &c]);
            (c, id.trim().to_string())
        })
        .collect()
}

fn id_of(identity: &str) -> &str {
    identity.split(' ').next().unwrap()
}

/// The containers whose identity changed: (same id, new start) or a new id.
fn changed(before: &BTreeMap<String, String>, after: &BTreeMap<String, String>) -> Vec<String> {
    let mut out: Vec<String> = after
        .iter()
        .filter(|(c, now)| before.get(*c) != Some(*now))
        .map(|(c, _)| c.clone())
        .collect();
    out.extend(before.keys().filter(|c| !after.contains_key(*c)).cloned());
    out
}

#[test]
fn watch_repairs_the_killed_service_alone() {
    let Some(rig) = rig::engine() else { return };
    let m = rig.stack(
        "three",
        stack()
            .service("a")
            .keeps_running()
            .service("b")
            .keeps_running()
            .service("c")
            .keeps_running(),
    );
    hal(&rig).args(["module", "start", &m]).code(0);
    let before = identities(&m);
    assert_eq!(before.len(), 3, "{before:?}");
    // No full pass after the first: the engine's `die` event alone starts the repair.
    let mut w = Watch::spawn_every(&rig, &[], "1h");
    w.expect(Duration::from_secs(20), |l| l == SUBSCRIBED);
    let b = format!("{m}-b-1");
    docker(&["kill", &b]);
    let why = w.expect(Duration::from_secs(30), |l| {
        l.starts_with(&format!("{m}: repairing: "))
    });
    assert!(why.contains("service b exited with code 137"), "{why}");
    let done = w.expect(Duration::from_secs(45), |l| {
        l.starts_with(&format!("{m}: restarted, active ("))
    });
    assert!(
        done.contains(&format!("started container {b} again")),
        "{done}"
    );
    let after = identities(&m);
    assert_eq!(
        changed(&before, &after),
        vec![b.clone()],
        "{before:?}\n{after:?}"
    );
    assert_eq!(id_of(&before[&b]), id_of(&after[&b]), "b was recreated");
    // The repair counted against the module's limit, as a restart does.
    let doc = rig.status(&m);
    assert_eq!(doc["limit"]["used"], 2, "{doc}");
    assert_eq!(doc["state"], "active", "{doc}");
}

#[test]
fn dependents_with_restart_true_are_restarted_with_their_dependency() {
    let Some(rig) = rig::engine() else { return };
    let m = rig.stack(
        "deps",
        stack()
            .service("db")
            .runs(FOREVER)
            .keeps_running()
            .service("api")
            .runs(FOREVER)
            .keeps_running()
            .depends_on_started("db", true)
            .service("cron")
            .runs(FOREVER)
            .keeps_running()
            .depends_on_started("db", false)
            .service("other")
            .runs(FOREVER)
            .keeps_running(),
    );
    hal(&rig).args(["module", "start", &m]).code(0);
    let before = identities(&m);
    let mut w = Watch::spawn(&rig, &[]);
    let (db, api) = (format!("{m}-db-1"), format!("{m}-api-1"));
    docker(&["kill", &db]);
    let why = w.expect(Duration::from_secs(30), |l| {
        l.starts_with(&format!("{m}: repairing: "))
    });
    assert!(
        why.ends_with(&format!(
            "; starting container {db} again, then restarting container {api} (depends on db with restart: true)"
        )),
        "{why}"
    );
    w.expect(Duration::from_secs(45), |l| {
        l.starts_with(&format!("{m}: restarted, active ("))
    });
    let after = identities(&m);
    let mut touched = changed(&before, &after);
    touched.sort();
    assert_eq!(touched, [api.clone(), db.clone()], "{before:?}\n{after:?}");
    for c in [&db, &api] {
        assert_eq!(id_of(&before[c]), id_of(&after[c]), "{c} was recreated");
    }
}

#[test]
fn an_unhealthy_container_is_restarted_alone() {
    let Some(rig) = rig::engine() else { return };
    let m = rig.stack(
        "sick",
        stack()
            .service("app")
            .runs("touch /tmp/ok; sleep 100000")
            .keeps_running()
            .healthcheck("/tmp/ok", "interval: 1s\ntimeout: 1s\nretries: 1")
            .service("side")
            .keeps_running(),
    );
    hal(&rig).args(["module", "start", &m]).code(0);
    let before = identities(&m);
    let mut w = Watch::spawn_json(&rig, "3s");
    let app = format!("{m}-app-1");
    docker(&["exec", &app, "rm", "/tmp/ok"]);
    let line = w.expect_json(Duration::from_secs(40), |d| {
        d["module"] == m.as_str() && d["event"] == "trouble"
    });
    assert_eq!(line["action"], "restart", "{line}");
    assert_eq!(line["repair"], "containers", "{line}");
    assert_eq!(line["containers"], serde_json::json!([app]), "{line}");
    let done = w.expect_json(Duration::from_secs(45), |d| {
        d["module"] == m.as_str() && d["event"] == "restarted"
    });
    assert_eq!(done["state"], "active", "{done}");
    let after = identities(&m);
    assert_eq!(
        changed(&before, &after),
        vec![app.clone()],
        "{before:?}\n{after:?}"
    );
    assert_eq!(
        id_of(&before[&app]),
        id_of(&after[&app]),
        "app was recreated"
    );
}

/// A service that dies 3 s after every start: its repair holds a moment, it
/// fails again, watch recreates the module, that fails too, and the module is
/// held at its limit. The hold is kept in hal's state: a watch started again
/// holds it still and does not run `on_failure` a second time.
#[test]
fn a_service_that_keeps_dying_escalates_then_is_held_across_a_watch_restart() {
    let Some(rig) = rig::engine() else { return };
    let m = rig.stack(
        "dying",
        stack()
            .service("app")
            .runs("sleep 3; exit 3")
            .restart("no")
            .service("www")
            .keeps_running(),
    );
    let marker = rig.dir.join("paged.txt");
    rig.set_config(&format!(
        "[defaults]\npull = \"never\"\n\n[module.{m}]\nrestart = {{ burst = 3, interval = \"10m\" }}\non_failure = [\"/bin/sh\", \"-c\", \"echo \\\"$HAL_MODULE\\\" >> {}\"]\n",
        marker.display()
    ));
    std::fs::set_permissions(&rig.config, std::fs::Permissions::from_mode(0o600)).unwrap();
    std::fs::set_permissions(&rig.dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    let canary = rig.stack("canary", stack().service("app").keeps_running());
    hal(&rig).args(["module", "start", &m, &canary]).code(0);
    let www = format!("{m}-www-1");
    let www_before = identities(&m)[&www].clone();
    let mut w = Watch::spawn(&rig, &[]);
    let small = w.expect(Duration::from_secs(30), |l| {
        l.starts_with(&format!("{m}: repairing: "))
    });
    assert!(
        small.ends_with(&format!("; starting container {m}-app-1 again")),
        "{small}"
    );
    w.expect(Duration::from_secs(30), |l| {
        l.starts_with(&format!("{m}: restarted, active ("))
    });
    assert_eq!(
        identities(&m)[&www],
        www_before,
        "the small repair touched www"
    );
    let big = w.expect(Duration::from_secs(30), |l| {
        l.starts_with(&format!("{m}: recreating the module: "))
    });
    assert!(big.contains("service app failed again "), "{big}");
    assert!(big.contains("s after its repair"), "{big}");
    let held = w.expect(Duration::from_secs(60), |l| {
        l.starts_with(&format!("{m}: held: "))
    });
    assert!(held.contains("start limit hit: 3 starts in 10m"), "{held}");
    w.expect(Duration::from_secs(20), |l| {
        l.starts_with(&format!("{m}: on_failure exited with 0"))
    });
    let doc = rig.status(&m);
    let until = doc["held"]["until"].as_str().unwrap().to_string();
    let (code, _) = w.signal("TERM");
    assert_eq!(code, Some(0));

    // A new watch: still held, no repair, no second page.
    let mut w = Watch::spawn(&rig, &[]);
    let still = w.expect(Duration::from_secs(10), |l| {
        l.starts_with(&format!("{m}: still held ("))
    });
    assert!(
        still.ends_with("; on_failure already ran for this hold"),
        "{still}"
    );
    let later = w.canary(&canary);
    for what in [
        "repairing",
        "recreating",
        "restarting",
        "held: ",
        "on_failure",
    ] {
        assert!(
            lines_about(&later, &m, what).is_empty(),
            "{what} after a watch restart\n{}",
            w.dump()
        );
    }
    let paged = std::fs::read_to_string(&marker).unwrap();
    assert_eq!(
        paged.lines().count(),
        1,
        "on_failure ran more than once: {paged:?}"
    );
    let doc = rig.status(&m);
    assert_eq!(doc["held"]["until"], until.as_str(), "{doc}");

    // reset-failed lifts the limit and the hold: watch lets go and repairs again.
    hal(&rig).args(["module", "reset-failed", &m]).code(0);
    w.expect(Duration::from_secs(10), |l| {
        l.starts_with(&format!("{m}: hold released: "))
    });
    let doc = rig.status(&m);
    assert!(doc["held"].is_null(), "{doc}");
}

#[test]
fn restart_of_one_service_restarts_all_its_replicas_and_nothing_else() {
    let Some(rig) = rig::engine() else { return };
    let m = rig.stack(
        "replicas",
        stack()
            .service("www")
            .runs(FOREVER)
            .service("worker")
            .runs(FOREVER)
            .replicas(2),
    );
    hal(&rig).args(["module", "start", &m]).code(0);
    let before = identities(&m);
    assert_eq!(before.len(), 3, "{before:?}");
    hal(&rig)
        .args(["module", "restart", &format!("{m}/worker")])
        .code(0);
    let after = identities(&m);
    let mut touched = changed(&before, &after);
    touched.sort();
    touched.dedup();
    assert_eq!(
        touched,
        [format!("{m}-worker-1"), format!("{m}-worker-2")],
        "{before:?}\n{after:?}"
    );
    assert_eq!(before[&format!("{m}-www-1")], after[&format!("{m}-www-1")]);
}
