//! End to end (issue 39, point 5): a requirement broken under the watch is the one whose
//! episode alarms. It is held at its start limit and its `on_failure` runs; the module that
//! waits on it, though it fails all the while, is neither held nor alarmed.

use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

use crate::needs::{break_under_watch, broken_requirement};
use crate::rig::watch::lines_about;
use crate::rig::{self, eventually, hal};

#[test]
fn the_broken_requirement_alarms_and_its_waiting_dependent_does_not() {
    let Some(rig) = rig::engine() else { return };
    let (db, app, shared) = broken_requirement(&rig);
    let marker = rig.dir.join("on_failure.txt");
    let hook = format!(
        "on_failure = [\"/bin/sh\", \"-c\", \"echo \\\"$HAL_MODULE\\\" >> {}\"]\n",
        marker.display()
    );
    rig.set_config(&format!(
        "[defaults]\npull = \"never\"\n\n[module.{db}]\nrestart = {{ burst = 2, interval = \"10m\" }}\n{hook}\n[module.{app}]\nrequires = [\"{db}\"]\nrestart = {{ burst = 2, interval = \"10m\" }}\n{hook}"
    ));
    std::fs::set_permissions(&rig.config, std::fs::Permissions::from_mode(0o600)).unwrap();
    std::fs::set_permissions(&rig.dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    hal(&rig).args(["start", &db]).code(0);
    hal(&rig).args(["start", &app]).code(0);

    let (mut w, _) = break_under_watch(&rig, &db, &app, &shared);
    w.expect(Duration::from_secs(90), |l| {
        l.starts_with(&format!("{db}: held"))
    });
    w.expect(Duration::from_secs(30), |l| {
        l.starts_with(&format!("{db}: on_failure exited with 0"))
    });
    // app keeps failing while db is held: long enough for its burst of 2.
    w.collect_for(Duration::from_secs(8));
    assert!(
        lines_about(&w.seen, &app, "held").is_empty(),
        "{}",
        w.dump()
    );
    let ran = std::fs::read_to_string(&marker).unwrap_or_default();
    assert_eq!(
        ran.lines().collect::<Vec<_>>(),
        vec![db.as_str()],
        "{}",
        w.dump()
    );
    assert!(
        eventually(Duration::from_secs(5), || rig.state_of(&db) == "failed"),
        "{}",
        w.dump()
    );
}
