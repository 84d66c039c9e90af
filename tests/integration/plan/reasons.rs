//! `hal plan`'s reasons for a configuration change: the file, the key and both values, from the record of the last start; secrets masked; the hashes alone where hal has no record.

use crate::rig::{self, FIXTURE, Rig, hal};

fn compose(greeting: &str, cmd: u32) -> String {
    format!(
        "services:\n  app:\n    image: {FIXTURE}\n    command: [\"sh\", \"-c\", \"sleep 100000; echo {cmd}\"]\n    environment:\n      GREETING: \"{greeting}\"\n      FROM_DOTENV: \"${{VALUE:-none}}\"\n    env_file: [app.env]\n"
    )
}

/// The details of the plan's `config` reasons for `app`.
fn config_reasons(rig: &Rig, m: &str) -> Vec<String> {
    let out = hal(rig).args(["--json", "plan", m]).run();
    assert_eq!(out.code, Some(3), "{out}");
    let doc = out.json();
    let service = doc["modules"][0]["services"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["service"] == "app")
        .unwrap()
        .clone();
    assert_eq!(service["action"], "recreate", "{doc}");
    service["reasons"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["what"] == "config")
        .map(|r| r["detail"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_config_change_names_the_file_the_key_and_both_values() {
    let Some(rig) = rig::engine() else { return };
    super::config(&rig);
    let m = rig.stack("why", compose("hello", 0));
    rig.write(&m, ".env", "VALUE=one\n");
    rig.write(&m, "app.env", "NAME=first\nDB_PASSWORD=hunter2\n");
    hal(&rig).args(["module", "start", &m]).code(0);

    // An environment variable in the compose file.
    rig.write(&m, "compose.yaml", &compose("bye", 0));
    assert_eq!(
        config_reasons(&rig, &m),
        ["compose.yaml: environment.GREETING: hello -> bye"]
    );
    hal(&rig).args(["module", "start", &m]).code(0);

    // A `.env` variable the compose file interpolates.
    rig.write(&m, ".env", "VALUE=two\n");
    assert_eq!(
        config_reasons(&rig, &m),
        [".env (VALUE): environment.FROM_DOTENV: one -> two"]
    );
    hal(&rig).args(["module", "start", &m]).code(0);

    // An env_file's variable.
    rig.write(&m, "app.env", "NAME=second\nDB_PASSWORD=hunter2\n");
    assert_eq!(
        config_reasons(&rig, &m),
        ["app.env: environment.NAME: first -> second"]
    );
    hal(&rig).args(["module", "start", &m]).code(0);

    // The command.
    rig.write(&m, "compose.yaml", &compose("bye", 1));
    assert_eq!(
        config_reasons(&rig, &m),
        [
            r#"compose.yaml: command: ["sh","-c","sleep 100000; echo 0"] -> ["sh","-c","sleep 100000; echo 1"]"#
        ]
    );
    hal(&rig).args(["module", "start", &m]).code(0);

    // A secret: named, never shown, old or new.
    rig.write(&m, "app.env", "NAME=second\nDB_PASSWORD=swordfish\n");
    let why = config_reasons(&rig, &m);
    assert_eq!(
        why,
        ["app.env: environment.DB_PASSWORD: *** -> *** (masked)"]
    );
    let text = hal(&rig).args(["plan", &m]).run();
    assert!(
        !text.stdout.contains("swordfish") && !text.stdout.contains("hunter2"),
        "{text}"
    );
    hal(&rig).args(["module", "start", &m]).code(0);
    // The record in the state keeps no secret in clear either.
    let record =
        std::fs::read_to_string(rig.state.join("applied").join(format!("{m}.json"))).unwrap();
    assert!(!record.contains("swordfish"), "{record}");
}

#[test]
fn with_no_record_the_plan_says_the_hashes_differ() {
    let Some(rig) = rig::engine() else { return };
    super::config(&rig);
    let m = rig.stack("norecord", compose("hello", 0));
    rig.write(&m, ".env", "VALUE=one\n");
    rig.write(&m, "app.env", "NAME=first\n");
    hal(&rig).args(["module", "start", &m]).code(0);
    // As if hal had not made these containers (no record of their configuration).
    std::fs::remove_file(rig.state.join("applied").join(format!("{m}.json"))).unwrap();
    rig.write(&m, "compose.yaml", &compose("bye", 0));
    let why = config_reasons(&rig, &m);
    assert_eq!(why.len(), 1, "{why:?}");
    assert!(
        why[0].contains("config hash")
            && why[0].contains("no record")
            && why[0].contains(&format!("{m}-app-1")),
        "{why:?}"
    );
}
