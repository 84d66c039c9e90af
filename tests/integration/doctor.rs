//! `hal doctor` against the real engine: all ✓ on a healthy node, ✗ with a hint for each thing that is wrong.

use std::os::unix::fs::PermissionsExt;

use serde_json::Value;

use crate::rig::{self, Rig, Run, check, hal, path_str, stack};

/// An endpoint where no engine answers.
const NO_ENGINE: &str = "unix:///nonexistent/docker.sock";

/// A rig with an empty config and permissions that do not depend on the umask.
fn plain(rig: Rig) -> Rig {
    rig.set_config("");
    chmod(&rig.root, 0o755);
    rig
}

fn chmod(path: &std::path::Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// A stack running the fixture image, with owner-only write permissions.
fn healthy_stack(rig: &Rig, short: &str) -> String {
    let name = rig.stack(short, stack().service("app"));
    chmod(&rig.root.join(&name), 0o755);
    chmod(&rig.root.join(&name).join("compose.yaml"), 0o644);
    name
}

#[track_caller]
fn assert_failed_with_hint(run: &Run, name: &str) -> Value {
    let doc = run.json();
    let c = check(&doc, name).clone();
    assert_eq!(c["ok"], false, "{name} should fail: {c:#}");
    let hint = c["hint"].as_str().unwrap_or_default();
    assert!(!hint.is_empty(), "{name} fails without a hint: {c:#}");
    c
}

#[test]
fn healthy_node_passes_every_check() {
    let Some(rig) = rig::engine().map(plain) else {
        return;
    };
    healthy_stack(&rig, "web");
    // The shared engine keeps logs per container (json-file): the history
    // check fails there, and history.rs tests it; every other check passes.
    let kept = crate::history::engine_logs_to_journal();
    let code = if kept { 0 } else { 1 };

    let run = hal(&rig).args(["doctor"]).code(code);
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert!(lines.len() >= 7, "{run}");
    // A check doctor could not make here (systemd is not this container's
    // init) says "not checked", never ✓.
    let mut in_history = false;
    for line in lines {
        if !line.starts_with(' ') {
            in_history = line.contains(" history ");
        }
        assert!(
            in_history
                || line.starts_with("✓ ")
                || line.starts_with("- ") && line.contains("not checked: "),
            "not a passing check: {line:?}\n{run}"
        );
    }

    let run = hal(&rig).args(["--json", "doctor"]).code(code);
    let doc = run.json();
    assert_eq!(doc["schema"], 1);
    for name in [
        "docker",
        "compose",
        "services-root",
        "modules",
        "address-pools",
        "systemd",
        "state-dir",
        "permissions",
    ] {
        let c = check(&doc, name);
        assert_eq!(c["ok"], true, "{c:#}");
        assert!(c["detail"].as_str().is_some_and(|d| !d.is_empty()), "{c:#}");
        assert_eq!(c["hint"], Value::Null, "{c:#}");
    }
    assert!(
        check(&doc, "docker")["detail"]
            .as_str()
            .unwrap()
            .contains("API 1."),
        "{doc:#}"
    );
    let compose = check(&doc, "compose")["detail"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        compose.contains("(v2)") || compose.contains("(v1)"),
        "{compose}"
    );
}

#[test]
fn broken_module_is_named_with_compose_message() {
    let Some(rig) = rig::engine().map(plain) else {
        return;
    };
    let good = healthy_stack(&rig, "good");
    let bad = rig.stack("bad", "services:\n  app: [unclosed\n");

    let run = hal(&rig).args(["--json", "doctor"]).code(1);
    let c = assert_failed_with_hint(&run, &format!("module:{bad}"));
    let detail = c["detail"].as_str().unwrap();
    assert!(detail.contains("compose.yaml"), "{detail}");
    assert!(detail.contains("yaml"), "compose's own message: {detail}");
    let summary = assert_failed_with_hint(&run, "modules");
    assert!(
        summary["detail"].as_str().unwrap().contains(&bad),
        "{summary:#}"
    );
    let doc = run.json();
    assert!(
        doc["checks"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["name"] != format!("module:{good}")),
        "a valid module reported: {doc:#}"
    );

    let human = hal(&rig).args(["doctor"]).code(1);
    assert!(human.stdout.contains(&format!("✗ module:{bad}")), "{human}");
    assert!(human.stdout.contains("hint: "), "{human}");
}

#[test]
fn missing_services_dir_fails_with_hint() {
    let rig = plain(Rig::new());
    let missing = rig.dir.join("no-such-dir");
    let run = hal(&rig)
        .args([
            "--json",
            "--services-dir",
            path_str(&missing),
            "-H",
            NO_ENGINE,
            "doctor",
        ])
        .code(1);
    let c = assert_failed_with_hint(&run, "services-root");
    assert!(
        c["detail"].as_str().unwrap().contains(path_str(&missing)),
        "{c:#}"
    );
    assert!(c["hint"].as_str().unwrap().contains("mkdir -p"), "{c:#}");
}

#[test]
fn unreachable_socket_fails_with_hint() {
    let rig = plain(Rig::new());
    let run = hal(&rig)
        .args(["--json", "-H", NO_ENGINE, "doctor"])
        .code(1);
    let c = assert_failed_with_hint(&run, "docker");
    assert!(c["detail"].as_str().unwrap().contains(NO_ENGINE), "{c:#}");
    assert!(c["hint"].as_str().unwrap().contains("DOCKER_HOST"), "{c:#}");
    // What needs the engine was not checked, and says so: neither ✓ nor ✗.
    let doc = run.json();
    for name in ["events", "address-pools", "history"] {
        let c = check(&doc, name);
        assert_eq!(c["checked"], false, "{c:#}");
        assert_eq!(c["hint"], Value::Null, "{c:#}");
        assert!(
            c["detail"].as_str().unwrap().starts_with("not checked: "),
            "{c:#}"
        );
    }
    for c in doc["checks"].as_array().unwrap() {
        let said = c["detail"].as_str().unwrap().starts_with("not checked");
        assert_eq!(
            c["checked"], !said,
            "a row that says one thing and is another: {c:#}"
        );
    }

    let human = hal(&rig).args(["-H", NO_ENGINE, "doctor"]).code(1);
    assert!(human.stdout.contains("✗ docker"), "{human}");
    for name in ["events", "address-pools", "history"] {
        assert!(
            human
                .stdout
                .lines()
                .any(|l| l.starts_with("- ") && l.contains(name)),
            "{name} is not shown as not checked: {human}"
        );
    }
    assert!(human.stdout.contains("✓ state-dir"), "{human}");
    assert!(!human.stdout.contains('\x1b'), "colour on a pipe: {human}");
    let colour = hal(&rig)
        .args(["--color", "always", "-H", NO_ENGINE, "doctor"])
        .run();
    assert!(colour.stdout.contains("\x1b[31m✗\x1b[0m"), "{colour}");
    assert!(colour.stdout.contains("\x1b[32m✓\x1b[0m"), "{colour}");
}

#[test]
fn world_writable_stack_is_a_warning() {
    let rig = plain(Rig::new());
    let name = rig.stack("open", "services: {}\n");
    chmod(&rig.root.join(&name), 0o777);
    let run = hal(&rig)
        .args(["--json", "-H", NO_ENGINE, "doctor"])
        .code(1);
    let c = assert_failed_with_hint(&run, "permissions");
    assert!(c["detail"].as_str().unwrap().contains(&name), "{c:#}");
    assert!(c["hint"].as_str().unwrap().contains("chmod"), "{c:#}");
}

#[test]
fn user_scope_without_runtime_dir_fails_with_hint() {
    let mut rig = plain(Rig::new());
    rig.set_config("[module.notifier]\nunit = \"notifier.service\"\nscope = \"user\"\n");
    rig.env.push(("XDG_RUNTIME_DIR".into(), String::new()));
    let run = hal(&rig)
        .args(["--json", "-H", NO_ENGINE, "doctor"])
        .code(1);
    let c = assert_failed_with_hint(&run, "systemd-user");
    assert!(
        c["detail"].as_str().unwrap().contains("XDG_RUNTIME_DIR"),
        "{c:#}"
    );
}

#[test]
fn unwritable_state_dir_fails_with_hint() {
    let mut rig = plain(Rig::new());
    // A file where the state directory should be: no user can write into it.
    let file = rig.dir.join("state-is-a-file");
    std::fs::write(&file, "").unwrap();
    rig.env
        .push(("HAL_STATE_DIR".into(), path_str(&file).to_string()));
    let run = hal(&rig)
        .args(["--json", "-H", NO_ENGINE, "doctor"])
        .code(1);
    let c = assert_failed_with_hint(&run, "state-dir");
    assert!(
        c["hint"].as_str().unwrap().contains("HAL_STATE_DIR"),
        "{c:#}"
    );
}
