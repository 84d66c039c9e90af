//! One plan: `start|restart|update --dry-run` say the per-service actions `hal plan` says, from the same code, and touch nothing.

use std::collections::BTreeMap;

use crate::rig::registry::{BEHAVES, Repo, with_registry};
use crate::rig::{self, Rig, hal, stack};

use super::model::{Edit, Model, Svc};
use super::{actions, engine_now, events};

/// A running stack with an environment variable edited, a container stopped
/// by hand, and an orphan (a service gone from the file).
fn edited(rig: &Rig) -> String {
    let mut model = Model::new(vec![Svc::long("a"), Svc::long("b"), Svc::long("c")]);
    let m = rig.stack("dry", model.yaml());
    model.files(rig, &m);
    model.apply(&Edit::Add, rig, &m);
    hal(rig).args(["module", "start", &m]).code(0);
    model.apply(&Edit::Remove, rig, &m);
    model.apply(&Edit::Env("a".into()), rig, &m);
    model.apply(&Edit::Stop("b".into()), rig, &m);
    m
}

#[test]
fn start_and_restart_dry_runs_say_the_plan_and_touch_nothing() {
    let Some(rig) = rig::engine() else { return };
    super::config(&rig);
    let m = edited(&rig);
    let since = engine_now();

    let plan = hal(&rig).args(["--json", "plan", &m]).code(3).json();
    let want = actions(&plan["modules"][0]["services"]);
    let expected: BTreeMap<String, String> = [
        ("a", "recreate"),
        ("b", "start"),
        ("c", "keep"),
        ("extra", "remove"),
    ]
    .into_iter()
    .map(|(s, a)| (s.to_string(), a.to_string()))
    .collect();
    assert_eq!(want, expected, "{plan}");

    // start --dry-run: the same services, actions and reasons.
    let dry = hal(&rig)
        .args(["--json", "module", "start", "--dry-run", &m])
        .code(0)
        .json();
    let entry = &dry["modules"][0];
    assert_eq!(
        entry["plan"]["services"], plan["modules"][0]["services"],
        "{dry}"
    );
    assert_eq!(entry["would"], "recreate", "{dry}");
    assert_eq!(entry["changed"], false, "{dry}");

    // For people: the table `hal plan` prints.
    let table = hal(&rig).args(["plan", &m]).code(3).stdout;
    let human = hal(&rig).args(["module", "start", "--dry-run", &m]).code(0);
    assert!(human.stdout.contains(&table), "{table}\n---\n{human}");
    assert!(table.contains("environment.GREETING"), "{table}");

    // restart --dry-run: every container made anew (compose down, then the
    // start), the orphan removed, the start's reasons kept.
    let dry = hal(&rig)
        .args(["--json", "module", "restart", "--dry-run", &m])
        .code(0)
        .json();
    let entry = &dry["modules"][0];
    assert_eq!(entry["would"], "restart", "{dry}");
    let services = &entry["plan"]["services"];
    let got = actions(services);
    let all_anew: BTreeMap<String, String> = [
        ("a", "recreate"),
        ("b", "recreate"),
        ("c", "recreate"),
        ("extra", "remove"),
    ]
    .into_iter()
    .map(|(s, a)| (s.to_string(), a.to_string()))
    .collect();
    assert_eq!(got, all_anew, "{dry}");
    let a = services
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["service"] == "a")
        .unwrap();
    let whats: Vec<&str> = a["reasons"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["what"].as_str())
        .collect();
    assert!(
        whats.contains(&"config") && whats.contains(&"restart"),
        "{a}"
    );

    let until = engine_now();
    let touched = events(&m, &since, &until);
    assert!(touched.is_empty(), "events during dry runs: {touched:?}");
    // The plan was right: the start does what the dry run said.
    hal(&rig).args(["module", "start", &m]).code(0);
    let after = hal(&rig)
        .args(["--json", "module", "start", "--dry-run", &m])
        .code(0)
        .json();
    assert_eq!(after["modules"][0]["would"], "none", "{after}");
}

#[test]
fn update_dry_run_says_the_plan_after_its_pull_and_pulls_nothing() {
    let Some(rig) = with_registry() else { return };
    let repo = Repo::new(&rig, "dryupd");
    repo.publish("good");
    let s = stack()
        .service("app")
        .image(&repo.image)
        .runs(BEHAVES)
        .healthcheck("/tmp/ok", "interval: 1s\ntimeout: 2s\nretries: 2");
    let m = rig.stack("dryupd", s);
    hal(&rig).args(["start", "--pull", "always", &m]).code(0);
    let v2 = repo.publish("good");
    let since = engine_now();

    // The exit and fields of `update --check` stay; the plan is beside.
    let run = hal(&rig)
        .args(["--json", "update", "--dry-run", &m])
        .code(3);
    let entry = &run.json()["modules"][0];
    assert_eq!(entry["update_available"], true, "{run}");
    let services = &entry["plan"]["services"];
    assert_eq!(actions(services)["app"], "recreate", "{run}");
    let why = services[0]["reasons"][0]["detail"].as_str().unwrap_or("");
    assert!(
        services[0]["reasons"][0]["what"] == "image" && why.contains(&repo.image),
        "{run}"
    );
    let human = hal(&rig).args(["update", "--dry-run", &m]).code(3);
    assert!(
        human.stdout.contains("the registry's; pull always"),
        "{human}"
    );

    // The same plan as `hal plan` under pull `always`.
    rig.set_config("[defaults]\npull = \"always\"\n");
    let plan = hal(&rig).args(["--json", "plan", &m]).code(3).json();
    assert_eq!(plan["modules"][0]["services"], *services, "{plan}");

    let until = engine_now();
    let touched = events(&m, &since, &until);
    assert!(touched.is_empty(), "events during dry runs: {touched:?}");
    assert!(crate::rig::registry::local_id(&v2).is_none(), "pulled {v2}");
}
