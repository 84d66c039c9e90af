//! What compose reads is what hal reads (issue 15): override files,
//! `COMPOSE_FILE`, every input in the change check, a job Docker gave up on,
//! and the engine compose and hal share.

use std::time::Duration;

use crate::rig::{self, compose, docker, eventually, hal, svc};

/// A job under `restart: on-failure:3` that always fails: once Docker has
/// given up (exited 1, RestartCount 3) it is `failed`, not `degraded`.
#[test]
fn on_failure_retries_exhausted_is_failed() {
    let Some(rig) = rig::engine() else { return };
    let m = rig.stack(
        "gaveup",
        compose(&[
            svc("web", "sleep 100000", "    restart: unless-stopped\n"),
            svc("migrate", "exit 1", "    restart: on-failure:3\n"),
        ]),
    );
    hal(&rig).args(["module", "start", "--no-wait", &m]).run();
    let job = format!("{m}-migrate-1");
    let gave_up = eventually(Duration::from_secs(60), || {
        docker(&["inspect", "-f", "{{.State.Status}} {{.RestartCount}}", &job]).trim() == "exited 3"
    });
    assert!(gave_up, "docker did not give up on {job}");
    let st = hal(&rig).args(["--json", "module", "status", &m]).run();
    assert_eq!(st.state_of(&m), "failed", "{st}");
    let reason = st.json()["modules"][0]["reason"].clone();
    assert!(
        reason
            .as_str()
            .unwrap_or_default()
            .contains("migrate exited with code 1"),
        "{reason}"
    );
}
