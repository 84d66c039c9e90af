//! End to end: the start limit, desired state and state-file robustness, on the real engine.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::process::Stdio;
use std::time::Duration;

use common::{Rig, compose, engine_or_skip, svc};

fn quick(rig: &Rig, short: &str) -> String {
    rig.stack(
        short,
        &compose(&[svc("app", "sleep 100000", "    restart: unless-stopped\n")]),
    )
}

#[test]
fn refused_past_the_limit_until_the_window_passes_or_reset_or_force() {
    if !engine_or_skip("refused_past_the_limit") {
        return;
    }
    let rig = Rig::new("limit");
    rig.set_config("[defaults]\npull = \"never\"\nrestart = { burst = 2, interval = \"6s\" }\n");
    let m = quick(&rig, "held");
    rig.run(&["module", "start", &m]).expect(0);
    rig.run(&["module", "start", &m]).expect(0);
    let run = rig.run(&["module", "start", &m]);
    run.expect(5);
    assert!(
        run.stderr.contains(&format!(
            "hal: start {m}: start limit hit: 2 starts in 6s, free again at "
        )),
        "{run:?}"
    );
    assert!(
        run.stderr.contains(&format!("hal module reset-failed {m}")),
        "{run:?}"
    );
    assert!(run.stderr.contains("--force"), "{run:?}");
    assert_eq!(run.stderr.lines().count(), 1, "one line: {run:?}");

    let st = rig.run(&["--json", "status", &m]);
    let doc = st.json();
    let limit = &doc["modules"][0]["limit"];
    assert_eq!(limit["used"], 2);
    assert_eq!(limit["burst"], 2);
    assert!(limit["free_at"].as_str().is_some(), "{doc}");
    let table = rig.run(&["status", &m]);
    assert!(table.stdout.contains("2/2"), "{table:?}");

    // --force starts once anyway, and counts.
    rig.run(&["module", "start", "--force", &m]).expect(0);
    assert_eq!(
        rig.run(&["--json", "status", &m]).json()["modules"][0]["limit"]["used"],
        3
    );
    // restart is refused before it stops anything.
    rig.run(&["module", "restart", &m]).expect(5);
    assert_eq!(rig.run(&["--json", "status", &m]).state_of(&m), "active");

    // reset-failed clears the count.
    rig.run(&["module", "reset-failed", &m]).expect(0);
    assert_eq!(
        rig.run(&["--json", "status", &m]).json()["modules"][0]["limit"]["used"],
        0
    );
    rig.run(&["module", "start", &m]).expect(0);
    rig.run(&["module", "start", &m]).expect(0);
    rig.run(&["module", "start", &m]).expect(5);

    // Free again once the window has passed.
    std::thread::sleep(Duration::from_secs(7));
    rig.run(&["module", "start", &m]).expect(0);
}

#[test]
fn concurrent_restarts_share_one_count() {
    if !engine_or_skip("concurrent_restarts_share_one_count") {
        return;
    }
    let rig = Rig::new("race");
    rig.set_config("[defaults]\npull = \"never\"\nrestart = { burst = 3, interval = \"10m\" }\n");
    let m = quick(&rig, "race");
    let children: Vec<_> = (0..6)
        .map(|_| rig.cmd(&["module", "restart", &m]).spawn().unwrap())
        .collect();
    let mut codes = Vec::new();
    for mut c in children {
        let out = common::wait_child(&mut c, Duration::from_secs(180));
        codes.push(out.status.code());
    }
    let ok = codes.iter().filter(|c| **c == Some(0)).count();
    let refused = codes.iter().filter(|c| **c == Some(5)).count();
    assert_eq!((ok, refused), (3, 3), "{codes:?}");
    assert_eq!(rig.run(&["--json", "status", &m]).state_of(&m), "active");
}

#[test]
fn desired_state_is_recorded() {
    if !engine_or_skip("desired_state_is_recorded") {
        return;
    }
    let rig = Rig::new("desired");
    let m = quick(&rig, "want");
    let desired =
        |rig: &Rig| rig.run(&["--json", "status", &m]).json()["modules"][0]["desired"].clone();
    assert_eq!(desired(&rig), serde_json::Value::Null);
    rig.run(&["module", "start", &m]).expect(0);
    assert_eq!(desired(&rig), "up");
    rig.run(&["module", "stop", &m]).expect(0);
    assert_eq!(desired(&rig), "down");
}

#[test]
fn corrupt_state_file_is_rebuilt_with_a_warning() {
    if !engine_or_skip("corrupt_state_file") {
        return;
    }
    let rig = Rig::new("corrupt");
    let m = quick(&rig, "c");
    std::fs::create_dir_all(&rig.state).unwrap();
    std::fs::write(
        rig.state.join("state.json"),
        b"{\"schema\":1,\"modules\":{\"x\":{\"starts\":[\"oops\"",
    )
    .unwrap();
    let st = rig.run(&["status", &m]);
    st.expect(3);
    assert!(
        st.stderr.contains("hal: warning: state file") && st.stderr.contains("corrupt"),
        "{st:?}"
    );
    rig.run(&["module", "start", &m]).expect(0);
    let text = std::fs::read_to_string(rig.state.join("state.json")).unwrap();
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(doc["modules"][&m]["desired"], "up");
    let st = rig.run(&["status", &m]);
    st.expect(0);
    assert!(!st.stderr.contains("corrupt"), "{st:?}");
}

#[test]
fn sigkill_mid_start_leaves_no_stuck_lock() {
    if !engine_or_skip("sigkill_mid_start") {
        return;
    }
    let rig = Rig::new("kill");
    let m = rig.stack(
        "slow",
        &compose(&[svc(
            "app",
            "sleep 5; touch /tmp/ready; sleep 100000",
            "    restart: unless-stopped\n    healthcheck:\n      test: [\"CMD\", \"test\", \"-f\", \"/tmp/ready\"]\n      interval: 1s\n",
        )]),
    );
    let mut child = rig
        .cmd(&["module", "start", &m])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Wait until it is waiting for health (the container exists), then kill it.
    assert!(common::eventually(Duration::from_secs(30), || {
        !common::containers(&m).is_empty()
    }));
    std::thread::sleep(Duration::from_millis(500));
    child.kill().unwrap();
    child.wait().unwrap();
    // The next call takes the module lock at once and completes.
    let run = rig.run_for(&["module", "restart", &m], Duration::from_secs(60));
    run.expect(0);
    let text = std::fs::read_to_string(rig.state.join("state.json")).unwrap();
    serde_json::from_str::<serde_json::Value>(&text).expect("state file intact");
}
