//! The node as a whole in `hal status` (issue 39): `starting`, `running` or `degraded`, as
//! `systemctl is-system-running` says it, in the table's footer, the document's `node` field
//! and the Prometheus series `hal_node_state`.
//!
//! The window of `starting` runs from the node's last boot or engine start for each module's
//! start timeout: a module whose timeout is long (`3650d`) is still inside its window on
//! this engine, one whose timeout is `1s` is past it, without restarting the engine.

use crate::rig::{self, docker, hal, need, stack};

#[test]
fn status_says_the_node_state_in_the_table_the_document_and_the_metrics() {
    let Some(rig) = rig::engine() else { return };
    let app = rig.stack(
        "nsapp",
        stack().service("app").runs("sleep 100000").keeps_running(),
    );
    let db = rig.stack(
        "nsdb",
        stack()
            .service("db")
            .runs("sleep 100000")
            .keeps_running()
            .service("side")
            .runs("sleep 100000")
            .keeps_running(),
    );
    let config = |timeout: &str| {
        format!("[defaults]\npull = \"never\"\n\n[module.{db}]\ntimeout = \"{timeout}\"\n")
    };
    rig.set_config(&config("3650d"));
    hal(&rig).args(["start", &app, &db]).code(0);

    // Every module wanted up is active: running.
    let doc = rig.status_of(&[]).code(0).doc().clone();
    assert_eq!(doc["node"], "running", "{doc}");
    assert_eq!(doc["node_detail"]["wanted_up"], 2, "{doc}");
    assert!(doc["node_detail"]["up_since"].is_string(), "{doc}");
    let table = hal(&rig).args(["status"]).code(0).stdout;
    assert!(
        table.contains("node: running (2 of 2 modules wanted up are active)"),
        "{table}"
    );

    // One of db's containers removed behind hal's back (db degraded: not active, not
    // failed), inside its window (the node came up less than 3650 days ago).
    docker(&["rm", "-f", &format!("{db}-side-1")]);
    let doc = rig.status_of(&[]).code(3).doc().clone();
    assert_eq!(doc["node"], "starting", "{doc}");
    assert_eq!(doc["node_detail"]["not_active"][0], db.as_str(), "{doc}");
    assert!(doc["node_detail"]["until"].is_string(), "{doc}");
    let table = hal(&rig).args(["status"]).code(3).stdout;
    assert!(table.contains("node: starting ("), "{table}");

    // Past its window: degraded, in the footer, the document and the metrics.
    rig.set_config(&config("1s"));
    let doc = rig.status_of(&[]).code(3).doc().clone();
    assert_eq!(doc["node"], "degraded", "{doc}");
    assert_eq!(
        doc["node_detail"]["until"],
        serde_json::Value::Null,
        "{doc}"
    );
    let table = hal(&rig).args(["status"]).code(3).stdout;
    assert!(
        table.contains(&format!(
            "node: degraded (1 of 2 modules wanted up are active; not active: {db})"
        )),
        "{table}"
    );
    let text = hal(&rig)
        .args(["status", "--format", "prometheus"])
        .code(3)
        .stdout;
    for (word, value) in [("starting", 0), ("running", 0), ("degraded", 1)] {
        let want = format!("hal_node_state{{state=\"{word}\"}} {value}\n");
        assert!(text.contains(&want), "no {want} in\n{text}");
    }
    if need("promtool", "--version").is_some() {
        let path = rig.dir.join("node.prom");
        std::fs::write(&path, &text).unwrap();
        assert_eq!(crate::fleet::promtool_metrics(&path), None, "{text}");
    }

    // A module stopped by request counts for nothing: running again.
    hal(&rig).args(["stop", &db]).code(0);
    let doc = rig.status_of(&[]).code(3).doc().clone();
    assert_eq!(doc["node"], "running", "{doc}");
    assert_eq!(doc["node_detail"]["wanted_up"], 1, "{doc}");
}

/// The contract's `starting` lasts "until every module wanted up is active, failed or
/// past its timeout": a module whose start failed (it exits 3, `restart: "no"`, no
/// watch to hold it) ends the wait at once, though its window of 2 h is still open.
#[test]
fn a_failed_module_ends_starting_inside_its_window() {
    let Some(rig) = rig::engine() else { return };
    let app = rig.stack(
        "nsfine",
        stack().service("app").runs("sleep 100000").keeps_running(),
    );
    let bad = rig.stack(
        "nsbad",
        stack()
            .service("bad")
            .runs("echo cannot; exit 3")
            .restart("no"),
    );
    rig.set_config(&format!(
        "[defaults]\npull = \"never\"\n\n[module.{bad}]\ntimeout = \"2h\"\n"
    ));
    hal(&rig).args(["start", &app]).code(0);
    hal(&rig).args(["start", &bad]).code(1);

    let run = rig.status_of(&[]).code(3).run;
    assert_eq!(run.state_of(&bad), "failed", "{run}");
    let doc = run.json();
    assert_eq!(doc["node"], "degraded", "{doc}");
    assert_eq!(
        doc["node_detail"]["until"],
        serde_json::Value::Null,
        "{doc}"
    );
    assert_eq!(doc["node_detail"]["not_active"][0], bad.as_str(), "{doc}");
    let table = hal(&rig).args(["status"]).code(3).stdout;
    assert!(
        table.contains(&format!(
            "node: degraded (1 of 2 modules wanted up are active; not active: {bad})"
        )),
        "{table}"
    );
}
