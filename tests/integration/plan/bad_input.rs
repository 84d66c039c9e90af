//! Bad input fails `hal plan` as it fails `start`: the same exit code and the same `hal: …: why` line, and never a plan that looks whole; with several modules, the others are planned and the bad one carries its error, as `start --all` reports it.

use crate::rig::{self, FIXTURE, Run, hal};

/// The why of the run's `hal: ` error line: what follows `plan M: ` or
/// `start M: ` (a line with no verb, such as "no such module", whole).
fn why(run: &Run) -> String {
    let line = run
        .stderr
        .lines()
        .find(|l| l.starts_with("hal: ") && !l.starts_with("hal: warning"))
        .unwrap_or_else(|| panic!("no error line: {run}"));
    let rest = &line["hal: ".len()..];
    for verb in ["plan ", "start "] {
        if let Some(after) = rest.strip_prefix(verb)
            && let Some((_, why)) = after.split_once(": ")
        {
            return why.to_string();
        }
    }
    rest.to_string()
}

/// The plan's `--json` for `m` is not a whole plan: an error document, or
/// every module in it carries its error.
fn not_whole(run: &Run) -> bool {
    let doc = run.json();
    doc["error"].is_object()
        || doc["modules"]
            .as_array()
            .is_some_and(|ms| ms.iter().all(|m| m["error"].is_string()))
}

#[test]
fn bad_input_fails_the_plan_as_it_fails_the_start() {
    let Some(rig) = rig::engine() else { return };
    super::config(&rig);
    let broken = rig.stack("broken", "services:\n  a: [\n");
    let envless = rig.stack(
        "envless",
        format!("services:\n  a:\n    image: {FIXTURE}\n    env_file: missing.env\n"),
    );
    let good = rig.idle("good");
    let unknown = rig.name("nosuch");
    let cases: [(&str, &[(&str, &str)]); 4] = [
        (&broken, &[]),
        (&envless, &[]),
        (&unknown, &[]),
        (&good, &[("DOCKER_HOST", "unix:///nonexistent")]),
    ];
    for (m, env) in cases {
        let with = |args: &[&str]| {
            let mut h = hal(&rig);
            for (k, v) in env {
                h = h.env(k, v);
            }
            for a in args {
                h = h.arg(a);
            }
            h.run()
        };
        let start = with(&["module", "start", "--no-wait", m]);
        let plan = with(&["plan", m]);
        assert!(!matches!(start.code, Some(0)), "{start}");
        assert_eq!(plan.code, start.code, "{m}: {plan}\n{start}");
        assert_eq!(why(&plan), why(&start), "{m}: {plan}\n{start}");
        let json = with(&["--json", "plan", m]);
        assert_eq!(json.code, start.code, "{json}");
        assert!(not_whole(&json), "{m}: {json}");
    }
}

#[test]
fn with_one_bad_module_the_plan_of_all_reports_it_as_start_all_does() {
    let Some(rig) = rig::engine() else { return };
    super::config(&rig);
    let broken = rig.stack("broken", "services:\n  a: [\n");
    let good = rig.idle("good");
    let json = hal(&rig).args(["--json", "plan", "--all"]).run();
    let plan = hal(&rig).args(["plan", "--all"]).run();
    let start = hal(&rig)
        .args(["module", "start", "--all", "--no-wait"])
        .run();
    assert_eq!(start.code, Some(1), "{start}");
    assert_eq!(plan.code, start.code, "{plan}");
    assert_eq!(json.code, start.code, "{json}");
    assert!(
        plan.stderr.contains(&format!("hal: plan {broken}: ")) && plan.stdout.contains(&good),
        "{plan}"
    );
    // The document says which module could not be planned; the others are whole.
    let doc = json.json();
    let modules = doc["modules"].as_array().unwrap();
    let of = |n: &str| modules.iter().find(|m| m["name"] == n).unwrap();
    assert!(
        of(&broken)["error"]
            .as_str()
            .is_some_and(|e| e.starts_with(&format!("plan {broken}: compose config"))),
        "{doc}"
    );
    assert_eq!(of(&broken)["services"], serde_json::json!([]), "{doc}");
    assert!(of(&good)["error"].is_null(), "{doc}");
    assert_eq!(of(&good)["services"][0]["action"], "create", "{doc}");
}
