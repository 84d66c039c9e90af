//! End to end: the start limit, desired state and state-file robustness, on the real engine.

use std::process::Stdio;
use std::time::Duration;

use crate::rig::{self, ComposeCalls, Rig, hal, stack, wait_child};

fn quick(rig: &Rig, short: &str) -> String {
    rig.stack(short, stack().service("app").keeps_running())
}

#[test]
fn refused_past_the_limit_until_the_window_passes_or_reset_or_force() {
    let Some(rig) = rig::engine() else { return };
    // A window longer than the test's starts take on a loaded machine; shortened
    // at the end to see it pass.
    let config = |window: &str| {
        format!(
            "[defaults]\npull = \"never\"\nrestart = {{ burst = 2, interval = \"{window}\" }}\n"
        )
    };
    rig.set_config(&config("10m"));
    let m = quick(&rig, "held");
    // Two real starts (a start of an active, unchanged module counts nothing).
    hal(&rig).args(["module", "start", &m]).code(0);
    hal(&rig).args(["module", "restart", &m]).code(0);
    let run = hal(&rig).args(["module", "start", &m]).code(5);
    assert!(
        run.stderr.contains(&format!(
            "hal: start {m}: start limit hit: 2 starts in 10m, free again at "
        )),
        "{run}"
    );
    assert!(
        run.stderr.contains(&format!("hal module reset-failed {m}")),
        "{run}"
    );
    assert!(run.stderr.contains("--force"), "{run}");
    assert_eq!(run.stderr.lines().count(), 1, "one line: {run}");

    let doc = rig.status(&m);
    let limit = &doc["limit"];
    assert_eq!(limit["used"], 2);
    assert_eq!(limit["burst"], 2);
    assert!(limit["free_at"].as_str().is_some(), "{doc}");
    let table = hal(&rig).args(["status", &m]).run();
    assert!(table.stdout.contains("2/2"), "{table}");

    // --force starts once anyway, and counts.
    hal(&rig).args(["module", "restart", "--force", &m]).code(0);
    assert_eq!(rig.status(&m)["limit"]["used"], 3);
    // restart is refused before it stops anything.
    hal(&rig).args(["module", "restart", &m]).code(5);
    assert_eq!(rig.state_of(&m), "active");

    // reset-failed clears the count.
    hal(&rig).args(["module", "reset-failed", &m]).code(0);
    assert_eq!(rig.status(&m)["limit"]["used"], 0);
    hal(&rig).args(["module", "restart", &m]).code(0);
    hal(&rig).args(["module", "restart", &m]).code(0);
    hal(&rig).args(["module", "start", &m]).code(5);

    // Free again once the window has passed.
    rig.set_config(&config("2s"));
    rig::wait_out("the restart limit's 2s window", Duration::from_secs(3));
    hal(&rig).args(["module", "start", &m]).code(0);
}

#[test]
fn concurrent_restarts_share_one_count() {
    let Some(rig) = rig::engine() else { return };
    rig.set_config("[defaults]\npull = \"never\"\nrestart = { burst = 3, interval = \"10m\" }\n");
    let m = quick(&rig, "race");
    let children: Vec<_> = (0..6)
        .map(|_| hal(&rig).args(["module", "restart", &m]).spawn())
        .collect();
    let mut codes = Vec::new();
    for mut c in children {
        let out = wait_child(&mut c, Duration::from_secs(180));
        codes.push(out.status.code());
    }
    let ok = codes.iter().filter(|c| **c == Some(0)).count();
    let refused = codes.iter().filter(|c| **c == Some(5)).count();
    assert_eq!((ok, refused), (3, 3), "{codes:?}");
    assert_eq!(rig.state_of(&m), "active");
}

#[test]
fn desired_state_is_recorded() {
    let Some(rig) = rig::engine() else { return };
    let m = quick(&rig, "want");
    let desired = |rig: &Rig| rig.status(&m)["desired"].clone();
    assert_eq!(desired(&rig), serde_json::Value::Null);
    hal(&rig).args(["module", "start", &m]).code(0);
    assert_eq!(desired(&rig), "up");
    hal(&rig).args(["module", "stop", &m]).code(0);
    assert_eq!(desired(&rig), "down");
}

#[test]
fn corrupt_state_file_is_rebuilt_with_a_warning() {
    let Some(rig) = rig::engine() else { return };
    let m = quick(&rig, "c");
    std::fs::create_dir_all(&rig.state).unwrap();
    std::fs::write(
        rig.state.join("state.json"),
        b"{\"schema\":1,\"modules\":{\"x\":{\"starts\":[\"oops\"",
    )
    .unwrap();
    let st = hal(&rig).args(["status", &m]).code(3);
    assert!(
        st.stderr.contains("hal: warning: state file") && st.stderr.contains("corrupt"),
        "{st}"
    );
    hal(&rig).args(["module", "start", &m]).code(0);
    let text = std::fs::read_to_string(rig.state.join("state.json")).unwrap();
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(doc["modules"][&m]["desired"], "up");
    let st = hal(&rig).args(["status", &m]).code(0);
    assert!(!st.stderr.contains("corrupt"), "{st}");
}

#[test]
fn sigkill_mid_start_leaves_no_stuck_lock() {
    let Some(mut rig) = rig::engine() else { return };
    let calls = ComposeCalls::install(&mut rig);
    let m = rig.stack(
        "slow",
        stack().service("app").healthy_after(5).keeps_running(),
    );
    let mut child = rig
        .cmd(&["module", "start", &m])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Killed while it waits for health (its `compose up` returned), holding the lock.
    calls.await_up(1);
    child.kill().unwrap();
    child.wait().unwrap();
    // The next call takes the module lock at once and completes.
    hal(&rig)
        .args(["module", "restart", &m])
        .within(Duration::from_secs(60))
        .code(0);
    let text = std::fs::read_to_string(rig.state.join("state.json")).unwrap();
    serde_json::from_str::<serde_json::Value>(&text).expect("state file intact");
}
