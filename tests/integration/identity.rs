//! A module is its project and its directory, and `status` answers for the node: a stop that compose cannot make, another directory's project of the same name, a renamed module directory, a missing services root, a bad endpoint, a project named only by `COMPOSE_FILE`.

use std::process::Command;

use crate::rig::{self, Rig, containers, docker, hal, networks, path_str, stack};

/// Two services, `web` depending on `db`, both stopping at once.
fn pair() -> String {
    stack()
        .service("db")
        .keeps_running()
        .line("stop_grace_period: 1s")
        .service("web")
        .keeps_running()
        .line("stop_grace_period: 1s")
        .line("depends_on: [db]")
        .to_string()
}

#[test]
fn stop_with_a_container_removed_by_hand_leaves_none() {
    let Some(rig) = rig::engine() else { return };
    let m = rig.stack("gone", pair());
    hal(&rig).args(["module", "start", &m]).code(0);
    docker(&["rm", "-f", &format!("{m}-db-1")]);
    let run = hal(&rig).args(["module", "stop", &m]).code(0);
    assert!(containers(&m).is_empty(), "containers left: {run}");
    assert!(networks(&m).is_empty(), "network left: {run}");
    assert!(run.stderr.contains("compose down failed"), "{run}");
}

#[test]
fn a_missing_services_root_fails_status_and_doctor() {
    let rig = Rig::new();
    let root = rig.dir.join("no-such-root");
    let root = path_str(&root);
    for args in [
        vec!["status"],
        vec!["-q", "status"],
        vec!["status", "--failed"],
        vec!["--json", "status"],
    ] {
        let mut cmd = rig.cmd(&args);
        cmd.env("HAL_SERVICES_DIR", root);
        let out = cmd.output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{args:?}: {out:?}");
        if args[0] == "--json" {
            let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            assert_eq!(doc["error"]["exit_code"], 1, "{doc}");
        }
    }
    let doctor = hal(&rig)
        .env("HAL_SERVICES_DIR", root)
        .args(["--json", "doctor"])
        .code(1);
    let doc = doctor.json();
    let check = doc["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "services-root")
        .cloned()
        .unwrap();
    assert_eq!(check["ok"], false, "{doc}");
}

#[test]
fn another_directorys_project_is_a_conflict_and_left_alone() {
    let Some(rig) = rig::engine() else { return };
    let m = rig.stack("twin", pair());
    let other = rig.dir.join("elsewhere").join(&m);
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join("compose.yaml"), pair()).unwrap();
    let up = Command::new("docker")
        .args(["compose", "-p", &m, "up", "-d"])
        .current_dir(&other)
        .output()
        .unwrap();
    assert!(up.status.success(), "{up:?}");
    let before = rig::ids(&m);

    let st = rig.status(&m).code(3);
    assert_eq!(st.state(), "conflict");
    let reason = st["reason"].to_string();
    assert!(reason.contains(path_str(&other)), "{reason}");

    let start = hal(&rig).args(["module", "start", &m]).code(2);
    assert!(
        start.stderr.contains(path_str(&other)) && start.stderr.contains(path_str(&rig.root)),
        "{start}"
    );
    hal(&rig).args(["module", "stop", &m]).code(2);
    assert_eq!(
        rig::running_ids(&m),
        before,
        "the other project was touched"
    );
}

#[test]
fn a_renamed_module_directory_leaves_an_orphan_that_stop_removes() {
    let Some(rig) = rig::engine() else { return };
    let m = rig.stack("old", pair());
    hal(&rig).args(["module", "start", &m]).code(0);
    std::fs::rename(rig.root.join(&m), rig.root.join(format!("{m}x"))).unwrap();

    let st = rig.status_all(&m).code(3);
    assert_eq!(st.state(), "orphaned", "{st}");
    let row = st.entry();
    assert!(
        row["reason"]
            .to_string()
            .contains(&format!("{}/{m}", path_str(&rig.root))),
        "{row}"
    );
    let doctor = hal(&rig).args(["--json", "doctor"]).run();
    let ident = doctor.json()["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "identity")
        .cloned()
        .unwrap();
    assert_eq!(ident["ok"], false, "{ident}");
    assert!(ident["detail"].to_string().contains(&m), "{ident}");

    hal(&rig).args(["stop", &m]).code(0);
    assert!(containers(&m).is_empty());
    assert!(networks(&m).is_empty());
}

#[test]
fn a_bad_context_is_a_usage_error_for_status() {
    let Some(rig) = rig::engine() else { return };
    let m = rig.stack("ctx", pair());
    let run = hal(&rig)
        .env("DOCKER_CONTEXT", "nope")
        .env_remove("DOCKER_HOST")
        .args(["status", &m])
        .code(2);
    assert!(run.stderr.contains("nope"), "{run}");
    hal(&rig)
        .env("DOCKER_CONTEXT", "nope")
        .env_remove("DOCKER_HOST")
        .status(&[])
        .code(2);
}

#[test]
fn a_project_named_only_by_compose_file_in_dotenv_is_a_stack() {
    let Some(rig) = rig::engine() else { return };
    let m = rig.stack_dir("envfile");
    let sub = rig.root.join(&m).join("sub");
    std::fs::create_dir_all(&sub).unwrap();
    std::fs::write(sub.join("compose.yaml"), pair()).unwrap();
    rig.write(&m, ".env", "COMPOSE_FILE=sub/compose.yaml\n");

    let list = hal(&rig).args(["module", "list"]).code(0);
    assert!(list.stdout.contains(&m), "{list}");
    hal(&rig).args(["module", "start", &m]).code(0);
    assert_eq!(rig.state_of(&m), "active");
    hal(&rig).args(["module", "stop", &m]).code(0);
    assert!(containers(&m).is_empty());

    // One that names a file that is not there is listed, invalid, with the reason.
    let bad = rig.stack_dir("envbad");
    rig.write(&bad, ".env", "COMPOSE_FILE=nothere.yaml\n");
    assert_eq!(rig.status(&bad).state(), "invalid");
}
