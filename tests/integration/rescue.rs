//! End to end: `hal rescue` recovers crashed and looping stacks, plans without acting, and asks first.

use std::time::Duration;

use crate::rig::{self, Rig, eventually, hal, ids, stack};

/// A stack whose service fails until the file `ok` exists in its module directory.
fn fragile(rig: &Rig, short: &str, restart: &str) -> String {
    rig.stack(
        short,
        stack()
            .service("app")
            .runs("test -f /m/ok || { echo no ok file; exit 3; }; sleep 100000")
            .restart(restart)
            .volume("./:/m:ro"),
    )
}

#[test]
fn rescue_recovers_a_crashed_stack_and_a_restart_loop() {
    let Some(rig) = rig::engine() else { return };
    let crashed = fragile(&rig, "crashed", "no");
    let looping = fragile(&rig, "looping", "always");
    let healthy = rig.stack("fine", stack().service("app").keeps_running());
    hal(&rig).args(["module", "start", &healthy]).code(0);
    hal(&rig).args(["module", "start", &crashed]).code(1);
    hal(&rig)
        .args(["module", "start", "--timeout", "30s", &looping])
        .code(1);
    assert!(eventually(Duration::from_secs(20), || {
        let st = rig.status_of(&[]).run;
        st.state_of(&crashed) == "failed" && st.state_of(&looping) == "failed"
    }));

    // --dry-run: the plan, and nothing changes.
    let before = (ids(&crashed), ids(&looping), ids(&healthy));
    let plan = hal(&rig).args(["rescue", "--dry-run"]).code(0);
    assert!(
        plan.stdout.contains(&crashed) && plan.stdout.contains(&looping),
        "{plan}"
    );
    assert!(
        !plan.stdout.contains(&healthy),
        "a healthy module is not in the plan: {plan}"
    );
    assert!(plan.stdout.contains("recreate"), "{plan}");
    let json = hal(&rig)
        .args(["--json", "rescue", "--dry-run"])
        .run()
        .json();
    assert_eq!(json["modules"].as_array().unwrap().len(), 2, "{json}");
    assert_eq!(json["modules"][0]["was"], "failed");
    assert_eq!(
        (ids(&crashed), ids(&looping), ids(&healthy)),
        before,
        "--dry-run changed something"
    );

    // No terminal and no --yes: exit 2, nothing done.
    let run = hal(&rig).args(["rescue"]).code(2);
    assert!(run.stderr.contains("--yes"), "{run}");
    assert_eq!(ids(&crashed), before.0);

    // Fix the cause, then rescue: both come back, the healthy one is untouched.
    rig.write(&crashed, "ok", "");
    rig.write(&looping, "ok", "");
    let run = hal(&rig).args(["--yes", "rescue"]).code(0);
    for m in [&crashed, &looping] {
        let row = run
            .stdout
            .lines()
            .find(|l| l.contains(m.as_str()))
            .unwrap_or_else(|| panic!("{m} not in report: {run}"));
        assert!(
            row.contains("failed") && row.contains("recreate") && row.contains("active"),
            "{row}"
        );
    }
    assert!(run.stdout.contains("TOOK"), "{run}");
    assert_eq!(ids(&healthy), before.2, "rescue touched a healthy module");
    rig.status_of(&[]).code(0);
}

/// The fields of every verb's document (`state`, `reason`, `error`, `diagnosis`,
/// `exit_code`, `took_ms`, `warnings`, `changed`) beside rescue's own (`was`, `now`,
/// `critical`), in the plan of `--dry-run` (nothing done) and in the report.
#[test]
fn rescue_json_has_every_verbs_fields_beside_its_own() {
    let Some(rig) = rig::engine() else { return };
    let m = fragile(&rig, "shape", "no");
    hal(&rig).args(["module", "start", &m]).code(1);
    let common = [
        "name",
        "kind",
        "action",
        "ok",
        "state",
        "reason",
        "error",
        "diagnosis",
        "exit_code",
        "took_ms",
        "warnings",
        "changed",
    ];
    let has_all = |row: &serde_json::Value, own: &[&str]| {
        for key in common.iter().chain(own) {
            assert!(row.get(key).is_some(), "no {key:?} in {row}");
        }
    };

    let doc = hal(&rig)
        .args(["--json", "module", "rescue", "--dry-run", &m])
        .code(0)
        .json();
    let row = &doc["modules"][0];
    has_all(row, &["was", "critical", "would"]);
    assert_eq!(
        (&row["was"], &row["state"], &row["action"], &row["would"]),
        (
            &serde_json::json!("failed"),
            &serde_json::json!("failed"),
            &serde_json::json!("recreate"),
            &serde_json::json!("recreate")
        ),
        "{doc}"
    );
    assert_eq!(row["changed"], false, "{doc}");
    assert_eq!(row["exit_code"], 0, "{doc}");

    rig.write(&m, "ok", "");
    let doc = hal(&rig)
        .args(["--json", "--yes", "module", "rescue", &m])
        .code(0)
        .json();
    let row = &doc["modules"][0];
    has_all(row, &["was", "now", "critical"]);
    assert_eq!(row["was"], "failed", "{doc}");
    assert_eq!(row["now"], "active", "{doc}");
    assert_eq!(row["state"], "active", "{doc}");
    assert_eq!(row["ok"], true, "{doc}");
    assert_eq!(row["changed"], true, "{doc}");
    assert_eq!(row["exit_code"], 0, "{doc}");
    assert_eq!(row["diagnosis"], serde_json::Value::Null, "{doc}");
    assert!(row["warnings"].is_array(), "{doc}");
}

#[test]
fn rescue_of_a_module_that_stays_broken_exits_1() {
    let Some(rig) = rig::engine() else { return };
    let m = fragile(&rig, "broken", "no");
    hal(&rig).args(["module", "start", &m]).code(1);
    let run = hal(&rig)
        .args(["--json", "--yes", "module", "rescue", &m])
        .code(1);
    let doc = run.json();
    assert_eq!(doc["modules"][0]["ok"], false, "{doc}");
    // As a start that failed says it: failed, its code, nothing changed, the diagnosis.
    assert_eq!(doc["modules"][0]["state"], "failed", "{doc}");
    assert_eq!(doc["modules"][0]["exit_code"], 1, "{doc}");
    assert_eq!(doc["modules"][0]["changed"], false, "{doc}");
    assert!(doc["modules"][0]["diagnosis"].is_string(), "{doc}");
    assert!(
        doc["modules"][0]["error"]
            .as_str()
            .unwrap()
            .contains("exited with code 3"),
        "{doc}"
    );
}

#[test]
fn rescue_waits_a_bounded_time_for_docker_and_exits_6() {
    let rig = Rig::new();
    let m = fragile(&rig, "x", "no");
    let run = hal(&rig)
        .args(["-H", "unix:///nonexistent", "--yes", "module", "rescue"])
        .args(["--timeout", "3s", &m])
        .within(Duration::from_secs(30))
        .code(6);
    assert!(run.stderr.contains("waiting up to 3s"), "{run}");
    assert!(
        run.stderr
            .contains("Docker not reachable at unix:///nonexistent"),
        "{run}"
    );
    assert!(run.took >= Duration::from_secs(3), "{run}");
}
