//! The soak of issue 50 in CI: `bench/soak.sh --minutes 3` with a fixed seed, run with the
//! binary under test, must pass every check (every module back, no false alarm, no lost
//! line, no leftover, the watch alive). It fills the engine with containers, runs a registry
//! and kills containers behind hal's back, so it takes the engine alone; it runs in CI (or
//! with HAL_TEST_SOAK=1), where its six minutes are spent once.

use std::process::{Command, Stdio};
use std::time::Duration;

use crate::rig::{self, in_ci, run_with_timeout};

/// The seed CI runs; another one is a run of `bench/soak.sh --seed N` by hand.
const SEED: &str = "50";

/// Only in CI, or when asked: it holds the engine alone for about six minutes.
fn may_soak() -> Option<()> {
    let allowed = in_ci() || std::env::var("HAL_TEST_SOAK").is_ok_and(|v| v == "1");
    rig::need_that(
        allowed,
        "a soak of six minutes with the engine alone",
        "runs in CI or with HAL_TEST_SOAK=1",
    )
}

#[test]
fn three_minutes_of_faults_leave_the_node_whole() {
    let Some(()) = may_soak() else {
        return;
    };
    let Some(()) = rig::need_that(
        is_root(),
        "the soak mounts a tmpfs (needs root)",
        "run the tests as root, as .ci/run does",
    ) else {
        return;
    };
    let Some(()) = rig::need("docker-registry", "--version") else {
        return;
    };
    let Some(()) = rig::need("jq", "--version") else {
        return;
    };
    let Some(()) = rig::need_that(
        crate::history::journal_live(),
        "no journald answers systemd-cat",
        "scripts/provision.sh starts one (step journald)",
    ) else {
        return;
    };
    let Some(_rig) = rig::engine_alone() else {
        return;
    };
    let mut cmd = Command::new("bash");
    cmd.arg(concat!(env!("CARGO_MANIFEST_DIR"), "/bench/soak.sh"))
        .args(["--minutes", "3", "--seed", SEED])
        .env("HAL_BIN", env!("CARGO_BIN_EXE_hal"))
        .env_remove("HAL_CONFIG")
        .env_remove("HAL_SERVICES_DIR")
        .env_remove("HAL_STATE_DIR")
        .env_remove("HAL_YES")
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // Three minutes of faults, the start before and up to four minutes of settling after.
    let run = run_with_timeout(cmd, Duration::from_secs(15 * 60));
    eprintln!("{}", run.stderr);
    println!("{}", run.stdout);
    // Its progress, the plan and the watch's last lines are on stderr, printed above.
    assert_eq!(
        run.code,
        Some(0),
        "bench/soak.sh --minutes 3 --seed {SEED} failed:\n{}",
        run.stdout
    );
    assert!(run.stdout.contains("| the watch alive |"), "{}", run.stdout);
}

/// Whether the tests run as root (`id -u` says 0).
fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}
