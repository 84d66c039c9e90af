//! What compose said of a project is kept with the cache of what compose reads: a plan of an unchanged module runs no compose, and any change to its files (or another compose) asks compose again.

use std::time::{Duration, Instant};

use crate::rig::spy::ComposeCalls;
use crate::rig::{self, FIXTURE, hal};

fn compose(greeting: &str) -> String {
    format!(
        "services:\n  app:\n    image: {FIXTURE}\n    command: [\"sleep\", \"3600\"]\n    environment:\n      GREETING: {greeting}\n"
    )
}

/// Plans `m` until compose is not asked (a stamp is kept once it is a
/// second old), each plan exiting `code`.
fn settled(rig: &rig::Rig, calls: &ComposeCalls, m: &str, code: i32) {
    let end = Instant::now() + Duration::from_secs(30);
    loop {
        calls.forget();
        hal(rig).args(["plan", m]).code(code);
        if !calls.calls().contains("config") {
            return;
        }
        assert!(
            Instant::now() < end,
            "compose asked at every plan: {}",
            calls.calls()
        );
    }
}

#[test]
fn a_plan_of_an_unchanged_module_asks_compose_nothing_and_an_edit_asks_again() {
    let Some(mut rig) = rig::engine() else { return };
    rig.set_config("[defaults]\npull = \"never\"\n");
    let m = rig.stack("kept", compose("hello"));
    let calls = ComposeCalls::install(&mut rig);
    hal(&rig).args(["module", "start", &m]).code(0);
    settled(&rig, &calls, &m, 0);
    // Unchanged, asked again: no compose config.
    calls.forget();
    hal(&rig).args(["plan", &m]).code(0);
    assert!(!calls.calls().contains("config"), "{}", calls.calls());

    // An edit: compose is asked, and the plan says the change.
    rig.write(&m, "compose.yaml", &compose("bye"));
    calls.forget();
    let out = hal(&rig).args(["--json", "plan", &m]).run();
    assert_eq!(out.code, Some(3), "{out}");
    assert!(calls.calls().contains("config"), "{}", calls.calls());
    let doc = out.json();
    assert_eq!(
        doc["modules"][0]["services"][0]["action"], "recreate",
        "{doc}"
    );

    // Another compose (an upgrade): asked again.
    settled(&rig, &calls, &m, 3);
    calls.fake_version("2.99.0\n");
    calls.forget();
    hal(&rig).args(["plan", &m]).code(3);
    assert!(calls.calls().contains("config"), "{}", calls.calls());
}
