//! End to end: `hal rescue` recovers crashed and looping stacks, plans without acting, and asks first.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use common::{FIXTURE, Rig, engine_or_skip};

/// A stack whose service fails until the file `ok` exists in its module directory.
fn fragile(rig: &Rig, short: &str, restart: &str) -> String {
    rig.stack(
        short,
        &format!(
            "services:\n  app:\n    image: {FIXTURE}\n    command: [\"sh\", \"-c\", \"test -f /m/ok || {{ echo no ok file; exit 3; }}; sleep 100000\"]\n    restart: \"{restart}\"\n    stop_signal: SIGKILL\n    volumes:\n      - ./:/m:ro\n"
        ),
    )
}

#[test]
fn rescue_recovers_a_crashed_stack_and_a_restart_loop() {
    if !engine_or_skip("rescue_recovers") {
        return;
    }
    let rig = Rig::new("rescue");
    let crashed = fragile(&rig, "crashed", "no");
    let looping = fragile(&rig, "looping", "always");
    let healthy = rig.stack(
        "fine",
        &common::compose(&[common::svc(
            "app",
            "sleep 100000",
            "    restart: unless-stopped\n",
        )]),
    );
    rig.run(&["module", "start", &healthy]).expect(0);
    rig.run(&["module", "start", &crashed]).expect(1);
    rig.run(&["module", "start", "--timeout", "30s", &looping])
        .expect(1);
    assert!(common::eventually(Duration::from_secs(20), || {
        let st = rig.run(&["--json", "status"]);
        st.state_of(&crashed) == "failed" && st.state_of(&looping) == "failed"
    }));

    // --dry-run: the plan, and nothing changes.
    let before = (
        common::ids(&crashed),
        common::ids(&looping),
        common::ids(&healthy),
    );
    let plan = rig.run(&["rescue", "--dry-run"]);
    plan.expect(0);
    assert!(
        plan.stdout.contains(&crashed) && plan.stdout.contains(&looping),
        "{plan:?}"
    );
    assert!(
        !plan.stdout.contains(&healthy),
        "a healthy module is not in the plan: {plan:?}"
    );
    assert!(plan.stdout.contains("recreate"), "{plan:?}");
    let json = rig.run(&["--json", "rescue", "--dry-run"]).json();
    assert_eq!(json["modules"].as_array().unwrap().len(), 2, "{json}");
    assert_eq!(json["modules"][0]["was"], "failed");
    assert_eq!(
        (
            common::ids(&crashed),
            common::ids(&looping),
            common::ids(&healthy)
        ),
        before,
        "--dry-run changed something"
    );

    // No terminal and no --yes: exit 2, nothing done.
    let run = rig.run(&["rescue"]);
    run.expect(2);
    assert!(run.stderr.contains("--yes"), "{run:?}");
    assert_eq!(common::ids(&crashed), before.0);

    // Fix the cause, then rescue: both come back, the healthy one is untouched.
    rig.write(&crashed, "ok", "");
    rig.write(&looping, "ok", "");
    let run = rig.run(&["--yes", "rescue"]);
    run.expect(0);
    for m in [&crashed, &looping] {
        let row = run
            .stdout
            .lines()
            .find(|l| l.contains(m.as_str()))
            .unwrap_or_else(|| panic!("{m} not in report: {run:?}"));
        assert!(
            row.contains("failed") && row.contains("recreate") && row.contains("active"),
            "{row}"
        );
    }
    assert!(run.stdout.contains("TOOK"), "{run:?}");
    assert_eq!(
        common::ids(&healthy),
        before.2,
        "rescue touched a healthy module"
    );
    let st = rig.run(&["--json", "status"]);
    st.expect(0);
}

#[test]
fn rescue_of_a_module_that_stays_broken_exits_1() {
    if !engine_or_skip("rescue_stays_broken") {
        return;
    }
    let rig = Rig::new("broken");
    let m = fragile(&rig, "broken", "no");
    rig.run(&["module", "start", &m]).expect(1);
    let run = rig.run(&["--json", "--yes", "module", "rescue", &m]);
    run.expect(1);
    let doc = run.json();
    assert_eq!(doc["modules"][0]["ok"], false, "{doc}");
    assert!(
        doc["modules"][0]["error"]
            .as_str()
            .unwrap()
            .contains("exited with code 3"),
        "{doc}"
    );
}

#[test]
fn rescue_waits_a_bounded_time_for_docker_and_exits_6() {
    let rig = Rig::new("nodocker");
    let m = fragile(&rig, "x", "no");
    let run = rig.run_for(
        &[
            "-H",
            "unix:///nonexistent",
            "--yes",
            "module",
            "rescue",
            "--timeout",
            "3s",
            &m,
        ],
        Duration::from_secs(30),
    );
    run.expect(6);
    assert!(run.stderr.contains("waiting up to 3s"), "{run:?}");
    assert!(
        run.stderr
            .contains("Docker not reachable at unix:///nonexistent"),
        "{run:?}"
    );
    assert!(run.took >= Duration::from_secs(3), "{run:?}");
}
