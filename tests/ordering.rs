//! End to end: `after = [...]` orders starts (and reverses stops); a cycle is refused, naming it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{Rig, compose, engine_or_skip, svc};

fn created(project: &str) -> hal::util::timefmt::Stamp {
    let out = common::docker(&[
        "ps",
        "-a",
        "--format",
        "{{.ID}}",
        "--filter",
        &format!("label=com.docker.compose.project={project}"),
    ]);
    let id = out.split_whitespace().next().unwrap().to_string();
    let t = common::docker(&["inspect", "--format", "{{.Created}}", &id]);
    hal::util::timefmt::parse(t.trim()).unwrap()
}

#[test]
fn after_orders_starts_and_cycles_are_refused() {
    if !engine_or_skip("after_orders_starts") {
        return;
    }
    let rig = Rig::new("order");
    let health = "    restart: unless-stopped\n    healthcheck:\n      test: [\"CMD\", \"test\", \"-f\", \"/tmp/ready\"]\n      interval: 1s\n";
    let base = rig.stack(
        "meshware",
        &compose(&[svc(
            "mesh",
            "sleep 3; touch /tmp/ready; sleep 100000",
            health,
        )]),
    );
    let app = rig.stack(
        "app",
        &compose(&[svc("app", "sleep 100000", "    restart: unless-stopped\n")]),
    );
    rig.set_config(&format!(
        "[defaults]\npull = \"never\"\n[module.{app}]\nafter = [\"{base}\"]\n"
    ));
    // Named app first: it still starts only once meshware is active.
    let run = rig.run(&["--json", "module", "start", &app, &base]);
    run.expect(0);
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
    let run = rig.run(&["status"]);
    run.expect(2);
    assert!(
        run.stderr
            .contains(&format!("a cycle: {app} → {base} → {app}")),
        "{run:?}"
    );
}
