//! End to end: `after = [...]` orders starts (and reverses stops); a cycle is refused, naming it.

use crate::lib_paths::timefmt;
use crate::rig::{self, docker, hal, stack};

/// When the engine created the project's (first) container.
fn created(project: &str) -> timefmt::Stamp {
    let out = docker(&[
        "ps",
        "-a",
        "--format",
        "{{.ID}}",
        "--filter",
        &format!("label=com.docker.compose.project={project}"),
    ]);
    let id = out.split_whitespace().next().unwrap().to_string();
    let t = docker(&["inspect", "--format", "{{.Created}}", &id]);
    timefmt::parse(t.trim()).unwrap()
}

#[test]
fn after_orders_starts_and_cycles_are_refused() {
    let Some(rig) = rig::engine() else { return };
    let base = rig.stack(
        "meshware",
        stack().service("mesh").healthy_after(3).keeps_running(),
    );
    let app = rig.stack("app", stack().service("app").keeps_running());
    rig.set_config(&format!(
        "[defaults]\npull = \"never\"\n[module.{app}]\nafter = [\"{base}\"]\n"
    ));
    // Named app first: it still starts only once meshware is active.
    let run = hal(&rig)
        .args(["--json", "module", "start", &app, &base])
        .code(0);
    let doc = run.json();
    assert_eq!(
        doc["modules"][0]["name"],
        app.as_str(),
        "reports keep the order given"
    );
    let gap = created(&app).since(created(&base));
    assert!(
        gap >= std::time::Duration::from_secs(3),
        "app was created {gap:?} after meshware"
    );

    rig.set_config(&format!(
        "[module.{app}]\nafter = [\"{base}\"]\n[module.{base}]\nafter = [\"{app}\"]\n"
    ));
    let run = hal(&rig).args(["status"]).code(2);
    assert!(
        run.stderr
            .contains(&format!("a cycle: {app} → {base} → {app}")),
        "{run}"
    );
}
