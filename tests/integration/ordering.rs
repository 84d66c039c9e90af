//! End to end: `after = [...]` orders starts (and reverses stops); a cycle is refused, naming it.

use crate::rig::{self, hal, stack};

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
    let gap = rig::created(&app).since(rig::created(&base));
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

/// `after` reverses a stop of several modules: `app`, which takes 3 s to stop,
/// is gone before the module it comes after is stopped. Without the order,
/// with jobs to spare, `base` would be gone first.
#[test]
fn after_reverses_stops() {
    let Some(rig) = rig::engine() else { return };
    let base = rig.stack("base", stack().service("base").keeps_running());
    let app = rig.stack(
        "app",
        stack()
            .service("app")
            .runs("trap 'sleep 3; exit 0' TERM; while true; do sleep 1000 & wait; done")
            .keeps_running(),
    );
    rig.set_config(&format!(
        "[defaults]\npull = \"never\"\n[module.{app}]\nafter = [\"{base}\"]\n"
    ));
    hal(&rig).args(["module", "start", &app, &base]).code(0);
    let now = || {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs()
            .to_string()
    };
    let since = now();
    let run = hal(&rig)
        .args(["--yes", "module", "stop", "--jobs", "4", "--all"])
        .code(0);
    let until = (now().parse::<u64>().unwrap() + 1).to_string();
    let died = rig::docker(&[
        "events",
        "--since",
        &since,
        "--until",
        &until,
        "--filter",
        "type=container",
        "--filter",
        "event=die",
        "--format",
        "{{.Actor.Attributes.name}}",
    ]);
    let at = |c: String| died.lines().position(|l| l == c);
    let (app_at, base_at) = (at(format!("{app}-app-1")), at(format!("{base}-base-1")));
    assert!(
        app_at.is_some() && base_at.is_some() && app_at < base_at,
        "{died}\n{run}"
    );
}
