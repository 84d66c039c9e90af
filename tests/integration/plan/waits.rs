//! `hal plan` beyond one stack's files: a requirement not active (the start would start it and wait), and an image the registry moved under pull `always` (asked, never pulled).

use crate::rig::registry::{Repo, local_id, with_registry};
use crate::rig::{self, hal, stack};

#[test]
fn a_requirement_not_active_is_a_wait_naming_it() {
    let Some(rig) = rig::engine() else { return };
    let db = rig.stack("db", stack().service("db").keeps_running());
    let app = rig.stack("app", stack().service("app").keeps_running());
    rig.set_config(&format!(
        "[defaults]\npull = \"never\"\n\n[module.{app}]\nrequires = [\"{db}\"]\n"
    ));
    hal(&rig).args(["module", "start", &db, &app]).code(0);
    hal(&rig).args(["plan", &app]).code(0);
    hal(&rig).args(["module", "stop", &db]).code(0);
    let out = hal(&rig).args(["--json", "plan", &app]).run();
    assert_eq!(out.code, Some(3), "{out}");
    let doc = out.json();
    let waits = &doc["modules"][0]["waits"];
    assert_eq!(waits[0]["what"], "requires", "{doc}");
    let detail = waits[0]["detail"].as_str().unwrap();
    assert!(detail.starts_with(&format!("{db} is inactive")), "{detail}");
    let table = hal(&rig).args(["plan", &app]).run();
    assert!(table.stdout.contains("wait"), "{table}");
}

#[test]
fn under_pull_always_the_plan_asks_the_registry_and_pulls_nothing() {
    let Some(rig) = with_registry() else { return };
    let mut repo = Repo::new(&rig, "planpull");
    repo.publish("good");
    let m = repo.module(&rig, "planpull");
    rig.set_config("[defaults]\npull = \"always\"\n");
    hal(&rig).args(["module", "start", &m]).code(0);
    hal(&rig).args(["plan", &m]).code(0);
    let here = local_id(&repo.image);
    repo.publish("good");
    let out = hal(&rig).args(["--json", "plan", &m]).run();
    assert_eq!(out.code, Some(3), "{out}");
    let doc = out.json();
    let app = &doc["modules"][0]["services"][0];
    assert_eq!(app["action"], "recreate", "{doc}");
    let why = app["reasons"][0]["detail"].as_str().unwrap();
    assert!(
        app["reasons"][0]["what"] == "image"
            && why.starts_with(&format!("{}: sha256:", repo.image))
            && why.contains(" -> sha256:"),
        "{doc}"
    );
    // Nothing pulled: the tag names the image it named.
    assert_eq!(local_id(&repo.image), here);
    // The start pulls and recreates, as planned.
    hal(&rig).args(["module", "start", &m]).code(0);
    hal(&rig).args(["plan", &m]).code(0);
}
