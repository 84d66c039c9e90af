//! What a fleet's tools read from hal: `changed` and `--dry-run` in the JSON results, and the Prometheus metrics (`status --format prometheus`, `watch --metrics`) checked by promtool.

use std::path::Path;
use std::time::Duration;

use crate::rig::watch::Watch;
use crate::rig::{self, Rig, eventually, hal, ids, need, stack};

/// The one module's entry of a verb's JSON document.
fn entry(rig: &Rig, args: &[&str]) -> serde_json::Value {
    let mut h = hal(rig).arg("--json");
    for a in args {
        h = h.arg(a);
    }
    let doc = h.code(0).json();
    doc["modules"][0].clone()
}

#[test]
fn a_start_says_it_changed_the_module_once_and_a_stop_dry_run_changes_nothing() {
    let Some(rig) = rig::engine() else { return };
    rig.set_config("[defaults]\npull = \"never\"\n");
    let m = rig.idle("changed");
    let plan = entry(&rig, &["module", "start", "--dry-run", &m]);
    assert_eq!(
        (plan["would"].as_str(), plan["changed"].as_bool()),
        (Some("start"), Some(false)),
        "{plan}"
    );
    assert!(ids(&m).is_empty(), "a dry run started something");

    let first = entry(&rig, &["module", "start", &m]);
    assert_eq!(first["changed"], true, "{first}");
    assert!(first.get("would").is_none(), "{first}");
    let second = entry(&rig, &["module", "start", &m]);
    assert_eq!(second["changed"], false, "{second}");
    let plan = entry(&rig, &["module", "start", "--dry-run", &m]);
    assert_eq!(plan["would"], "none", "{plan}");

    let before = ids(&m);
    let plan = entry(&rig, &["module", "stop", "--dry-run", &m]);
    assert_eq!(
        (plan["would"].as_str(), plan["changed"].as_bool()),
        (Some("stop"), Some(false)),
        "{plan}"
    );
    assert_eq!(plan["state"], "active", "{plan}");
    assert_eq!(ids(&m), before, "a stop dry run touched the containers");
    assert_eq!(rig.state_of(&m), "active");

    assert_eq!(entry(&rig, &["module", "stop", &m])["changed"], true);
    let again = entry(&rig, &["module", "stop", &m]);
    assert_eq!(again["changed"], false, "{again}");
    assert_eq!(
        entry(&rig, &["module", "stop", "--dry-run", &m])["would"],
        "none"
    );
}

/// `promtool check metrics` on a file: its complaints, or `None`.
pub(crate) fn promtool_metrics(path: &Path) -> Option<String> {
    let out = std::process::Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(std::fs::File::open(path).unwrap())
        .output()
        .unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (!out.status.success() || !said.trim().is_empty()).then_some(said)
}

#[test]
fn status_in_prometheus_format_passes_promtool() {
    let Some(rig) = rig::engine() else { return };
    let Some(()) = need("promtool", "--version") else {
        return;
    };
    rig.set_config("[defaults]\npull = \"never\"\n");
    let up = rig.idle("promup");
    let down = rig.idle("promdown");
    hal(&rig).args(["module", "start", &up]).code(0);
    let run = hal(&rig).args(["status", "--format", "prometheus"]).code(3);
    let text = run.stdout.clone();
    for want in [
        format!("hal_module_state{{module=\"{up}\",kind=\"stack\",state=\"active\"}} 1"),
        format!("hal_module_state{{module=\"{down}\",kind=\"stack\",state=\"inactive\"}} 1"),
        format!("hal_module_desired{{module=\"{up}\",kind=\"stack\",desired=\"up\"}} 1"),
        format!("hal_module_held{{module=\"{up}\",kind=\"stack\"}} 0"),
    ] {
        assert!(text.contains(&want), "no {want} in\n{text}");
    }
    assert!(
        !text.contains("hal_watch_"),
        "watch series from status:\n{text}"
    );
    let path = rig.dir.join("status.prom");
    std::fs::write(&path, &text).unwrap();
    assert_eq!(promtool_metrics(&path), None, "{text}");
}

#[test]
fn the_example_alert_rules_pass_promtool() {
    let Some(()) = need("promtool", "--version") else {
        return;
    };
    let rules = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/prometheus/hal-rules.yml"
    );
    let out = std::process::Command::new("promtool")
        .args(["check", "rules", rules])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A module that fails, wanted up, with one start allowed: the watch holds it
/// at once, and its metrics file says so within a pass.
#[test]
fn watch_metrics_show_a_failed_module_within_one_pass() {
    let Some(rig) = rig::engine() else { return };
    let Some(()) = need("promtool", "--version") else {
        return;
    };
    rig.set_config("[defaults]\npull = \"never\"\nrestart = { burst = 1, interval = \"10m\" }\n");
    let ok = rig.idle("metok");
    hal(&rig).args(["module", "start", &ok]).code(0);
    let (_w, path) = Watch::with_metrics(&rig);
    let active = format!("hal_module_state{{module=\"{ok}\",kind=\"stack\",state=\"active\"}} 1");
    let read = || std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        eventually(Duration::from_secs(10), || read().contains(&active)),
        "{}",
        read()
    );

    let bad = rig.stack("metbad", stack().service("app").runs("exit 3"));
    hal(&rig)
        .args(["module", "start", "--no-wait", &bad])
        .code(0);
    let failed = format!("hal_module_state{{module=\"{bad}\",kind=\"stack\",state=\"failed\"}} 1");
    let held = format!("hal_module_held{{module=\"{bad}\",kind=\"stack\"}} 1");
    // A pass every 2 s: the new stack is read at the next one.
    assert!(
        eventually(Duration::from_secs(8), || read().contains(&failed)
            && read().contains(&held)),
        "{}",
        read()
    );
    let text = read();
    assert!(
        text.contains("hal_watch_last_pass_timestamp_seconds "),
        "{text}"
    );
    assert_eq!(promtool_metrics(&path), None, "{text}");
    let dir = std::fs::read_dir(path.parent().unwrap()).unwrap().count();
    assert_eq!(dir, 1, "a temporary file was left beside the metrics file");
}

/// A restart dry run says `restart`, a start dry run of an active stack whose
/// files changed says `recreate`; neither touches a container or counts a
/// start, and neither does a start that finds the stack as asked.
#[test]
fn dry_runs_say_recreate_and_restart_and_count_nothing() {
    let Some(rig) = rig::engine() else { return };
    rig.set_config("[defaults]\npull = \"never\"\n");
    let m = rig.idle("dryrun");
    hal(&rig).args(["module", "start", &m]).code(0);
    assert_eq!(rig.status(&m)["limit"]["used"], 1);
    let before = ids(&m);
    // Settled: the fast path sees every container up for more than a moment.
    rig::past_first_second(&m);
    let noop = entry(&rig, &["module", "start", &m]);
    assert_eq!(noop["changed"], false, "{noop}");
    assert_eq!(
        rig.status(&m)["limit"]["used"],
        1,
        "a start that found the stack as asked counted"
    );

    let plan = entry(&rig, &["module", "restart", "--dry-run", &m]);
    assert_eq!(
        (
            plan["would"].as_str(),
            plan["changed"].as_bool(),
            plan["state"].as_str()
        ),
        (Some("restart"), Some(false), Some("active")),
        "{plan}"
    );
    let file = rig.root.join(&m).join("compose.yaml");
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.contains("sleep 100000"), "{text}");
    std::fs::write(&file, text.replace("sleep 100000", "sleep 100001")).unwrap();
    let plan = entry(&rig, &["module", "start", "--dry-run", &m]);
    assert_eq!(
        (plan["would"].as_str(), plan["changed"].as_bool()),
        (Some("recreate"), Some(false)),
        "{plan}"
    );
    assert_eq!(ids(&m), before, "a dry run touched the containers");
    assert_eq!(
        rig.status(&m)["limit"]["used"],
        1,
        "a dry run counted a start"
    );
    // The plan was right: the start recreates, and counts.
    let start = entry(&rig, &["module", "start", &m]);
    assert_eq!(start["changed"], true, "{start}");
    assert_ne!(ids(&m), before, "the changed files were not applied");
    assert_eq!(rig.status(&m)["limit"]["used"], 2);
}

/// The config's `metrics_file` is where the watch writes its metrics when no
/// `--metrics` is given.
#[test]
fn the_config_metrics_file_gets_the_watch_metrics() {
    let Some(rig) = rig::engine() else { return };
    let Some(()) = need("promtool", "--version") else {
        return;
    };
    let path = rig.dir.join("from-config").join("hal.prom");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    rig.set_config(&format!(
        "metrics_file = \"{}\"\n\n[defaults]\npull = \"never\"\n",
        path.display()
    ));
    let ok = rig.idle("metconf");
    hal(&rig).args(["module", "start", &ok]).code(0);
    let _w = Watch::spawn_with(&rig, &[], &["--interval", "2s"]);
    let active = format!("hal_module_state{{module=\"{ok}\",kind=\"stack\",state=\"active\"}} 1");
    let read = || std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        eventually(Duration::from_secs(10), || read().contains(&active)
            && read().contains("hal_watch_last_pass_timestamp_seconds ")),
        "no metrics in {}: {}",
        path.display(),
        read()
    );
    assert_eq!(promtool_metrics(&path), None, "{}", read());
}
