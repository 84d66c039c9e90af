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
