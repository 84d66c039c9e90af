//! End to end: hal's state directory on a full disk (a 2 MiB tmpfs, filled): `hal watch` goes on repairing and counting in memory, says so in its log, `hal status` and its metrics, and writes what it kept once there is room; a person's verbs are refused whole and leave no lock behind (issue 50).

use std::io::Write;
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use crate::rig::registry::{BEHAVES, Previous, Repo, with_registry};
use crate::rig::watch::Watch;
use crate::rig::{self, ComposeCalls, Rig, containers, docker, eventually, hal, stack};
use crate::watch::container_of;

/// A 2 MiB tmpfs under the rig, holding its state directory; unmounted when dropped.
struct SmallDisk {
    mount: PathBuf,
}

impl SmallDisk {
    /// Mounts it and points the rig's `HAL_STATE_DIR` into it.
    fn under(rig: &mut Rig) -> SmallDisk {
        let mount = rig.dir.join("disk");
        std::fs::create_dir_all(&mount).unwrap();
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=2m,mode=700", "tmpfs"])
            .arg(&mount)
            .status()
            .is_ok_and(|s| s.success());
        assert!(
            ok,
            "mount a tmpfs on {} (the tests run as root)",
            mount.display()
        );
        rig.state = mount.join("state");
        SmallDisk { mount }
    }

    /// Fills it: no write of a byte more works.
    fn fill(&self) {
        let mut f = std::fs::File::create(self.mount.join("fill")).unwrap();
        let chunk = vec![0u8; 4096];
        while f.write_all(&chunk).is_ok() {}
        let _ = f.sync_all();
    }

    /// Gives the room back.
    fn free(&self) {
        std::fs::remove_file(self.mount.join("fill")).unwrap();
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.mount).status();
    }
}

/// hal's state file as it is on disk, parsed (it must parse).
fn state_file(rig: &Rig) -> serde_json::Value {
    let text = std::fs::read_to_string(rig.state.join("state.json")).unwrap();
    serde_json::from_str(&text).expect("the state file parses")
}

/// The starts the state file holds for `m`.
fn starts_on_disk(rig: &Rig, m: &str) -> usize {
    state_file(rig)["modules"][m]["starts"]
        .as_array()
        .map_or(0, Vec::len)
}

/// Issue 50: every container of eight stacks killed while the state
/// directory is full, a new watch started, the disk freed once the watch
/// met it. Before, each repair was refused ("replace state file: no space
/// left on device") within a moment of the others, and some were never tried
/// again (their pause ended while the loop looked at the others). Now none is
/// refused: each is repaired, its start counted in memory, and once there is
/// room again every count is written, once.
#[test]
fn every_module_killed_while_the_state_dir_is_full_is_back_and_counted_once() {
    let Some(mut rig) = rig::engine() else { return };
    let disk = SmallDisk::under(&mut rig);
    let mods: Vec<String> = (0..8).map(|i| rig.idle(&format!("m{i}"))).collect();
    let mut start = hal(&rig).args(["module", "start"]);
    for m in &mods {
        start = start.arg(m);
    }
    start.within(Duration::from_secs(180)).code(0);
    disk.fill();
    for m in &mods {
        docker(&["kill", &container_of(m)]);
    }
    let mut w = Watch::spawn_with(&rig, &[], &["--interval", "1h", "--resync", "1h"]);
    // The watch met the full disk: it says so (before: every repair was refused).
    let refused = |seen: &[String]| {
        mods.iter()
            .filter(|m| {
                seen.iter()
                    .any(|l| l.starts_with(&format!("{m}: restart failed: ")))
            })
            .count()
    };
    w.expect(Duration::from_secs(60), |l| {
        l.starts_with("watch: hal's state cannot be written (") || l.contains(": restart failed: ")
    });
    while refused(&w.seen) > 0 && refused(&w.seen) < mods.len() {
        w.expect(Duration::from_secs(30), |l| {
            l.contains(": restart failed: ")
        });
    }
    disk.free();
    // Every one is back within the schedule (2s, doubling: its second try).
    let back = |seen: &[String]| {
        mods.iter()
            .filter(|m| {
                seen.iter()
                    .any(|l| l.starts_with(&format!("{m}: restarted, active (")))
            })
            .count()
    };
    while back(&w.seen) < mods.len() {
        w.expect(Duration::from_secs(30), |l| {
            l.contains(": restarted, active (")
        });
    }
    let said = |what: &str| w.seen.iter().filter(|l| l.starts_with(what)).count();
    assert_eq!(
        said("watch: hal's state cannot be written ("),
        1,
        "{}",
        w.dump()
    );
    if said("watch: hal's state can be written again") == 0 {
        w.expect(Duration::from_secs(10), |l| {
            l == "watch: hal's state can be written again; what was kept in memory is written"
        });
    }
    // The start, and the repair kept in memory: each counted once.
    for m in &mods {
        assert_eq!(starts_on_disk(&rig, m), 2, "{m}: {}", state_file(&rig));
        assert_eq!(rig.state_of(m), "active");
    }
}

/// The start limit holds while the state cannot be written: a module that
/// keeps dying is held after its burst (its hold and its count kept in
/// memory), and both are on disk once there is room. Meanwhile the log,
/// `hal status` (a warning and the node line) and the metrics say the state
/// cannot be written, and the log and the metrics say when it can again.
#[test]
fn a_module_that_keeps_dying_is_held_after_its_burst_while_the_state_dir_is_full() {
    let Some(mut rig) = rig::engine() else { return };
    let disk = SmallDisk::under(&mut rig);
    rig.set_config("[defaults]\npull = \"never\"\nrestart = { burst = 3, interval = \"10m\" }\n");
    let m = rig.stack("crash", stack().service("app").runs("exit 3"));
    hal(&rig).args(["module", "start", "--no-wait", &m]).code(0);
    disk.fill();
    let (mut w, metrics) = Watch::with_metrics(&rig);
    let held = w.expect(Duration::from_secs(90), |l| {
        l.starts_with(&format!("{m}: held: "))
    });
    assert!(held.contains("start limit hit: 3 starts in 10m"), "{held}");
    let tries = w
        .seen
        .iter()
        .filter(|l| {
            l.starts_with(&format!("{m}: repairing: "))
                || l.starts_with(&format!("{m}: recreating"))
        })
        .count();
    assert_eq!(tries, 2, "two repairs past the start: {}", w.dump());
    let said: Vec<&String> = w
        .seen
        .iter()
        .filter(|l| l.starts_with("watch: hal's state cannot be written ("))
        .collect();
    assert_eq!(said.len(), 1, "said once: {}", w.dump());
    assert!(said[0].contains("no space left on device"), "{}", said[0]);
    let metric = |v: &str| {
        let want = format!("\nhal_state_writable {v}\n");
        eventually(Duration::from_secs(10), || {
            std::fs::read_to_string(&metrics).is_ok_and(|t| t.contains(&want))
        })
    };
    assert!(
        metric("0"),
        "{}",
        std::fs::read_to_string(&metrics).unwrap_or_default()
    );
    let st = hal(&rig).args(["status"]).code(3);
    assert!(
        st.stderr.contains("hal's state cannot be written ("),
        "{st}"
    );
    assert!(
        st.stdout
            .lines()
            .any(|l| l.starts_with("node: ") && l.contains("; hal's state cannot be written: ")),
        "{st}"
    );
    let doc = rig.status_of(&[]).code(3).doc().clone();
    assert!(
        doc["node_detail"]["state_unwritable"]
            .as_str()
            .is_some_and(|w| w.contains("no space left")),
        "{doc}"
    );
    // Nothing written meanwhile: the start alone is on disk.
    assert_eq!(starts_on_disk(&rig, &m), 1);

    disk.free();
    w.expect(Duration::from_secs(10), |l| {
        l == "watch: hal's state can be written again; what was kept in memory is written"
    });
    assert!(
        metric("1"),
        "{}",
        std::fs::read_to_string(&metrics).unwrap_or_default()
    );
    let on_disk = state_file(&rig);
    assert_eq!(starts_on_disk(&rig, &m), 3, "{on_disk}");
    assert!(on_disk["modules"][&m]["hold"].is_object(), "{on_disk}");
    let st = hal(&rig).args(["status"]).code(3);
    assert!(!st.stderr.contains("cannot be written"), "{st}");
    // Not tried again: it stays held.
    let after = w.collect_for(Duration::from_secs(3));
    assert!(
        !after
            .iter()
            .any(|l| l.starts_with(&format!("{m}: repairing"))),
        "{after:?}"
    );
}

/// The module's lock is free and the state file parses.
#[track_caller]
fn lock_free_and_state_parses(rig: &Rig, m: &str) {
    let lock = rig.state.join("locks").join(format!("{m}.lock"));
    if lock.exists() {
        let f = std::fs::File::open(&lock).unwrap();
        assert!(f.try_lock().is_ok(), "{m}'s lock is still held");
    }
    state_file(rig);
}

/// Another module started, so that hal's state has a file and a lock to lose.
fn some_state(rig: &Rig) {
    let other = rig.idle("other");
    hal(rig).args(["module", "start", &other]).code(0);
}

/// A start refused on a full state directory starts nothing; one under way
/// when the disk fills ends with its containers up and its lock free. With
/// room again, the next start works.
#[test]
fn a_start_on_a_full_state_dir_loses_nothing_and_leaves_no_lock() {
    let Some(mut rig) = rig::engine() else { return };
    let calls = ComposeCalls::install(&mut rig);
    let disk = SmallDisk::under(&mut rig);
    let m = rig.idle("before");
    some_state(&rig);
    // Before: refused whole, nothing started.
    disk.fill();
    let run = hal(&rig).args(["module", "start", &m]).code(1);
    assert!(run.stderr.contains("no space left on device"), "{run}");
    assert!(containers(&m).is_empty(), "started: {run}");
    lock_free_and_state_parses(&rig, &m);
    disk.free();
    hal(&rig).args(["module", "start", &m]).code(0);
    assert_eq!(rig.state_of(&m), "active");

    // While: the disk fills once its `compose up` ran.
    let slow = rig.stack(
        "while",
        stack().service("app").healthy_after(3).keeps_running(),
    );
    let child = rig.cmd(&["module", "start", &slow]).spawn().unwrap();
    calls.await_up(3);
    disk.fill();
    let out = child.wait_with_output().unwrap();
    let code = out.status.code();
    assert!(
        matches!(code, Some(0 | 1)),
        "{code:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    lock_free_and_state_parses(&rig, &slow);
    disk.free();
    hal(&rig)
        .args(["module", "restart", &slow])
        .within(Duration::from_secs(60))
        .code(0);
    assert_eq!(rig.state_of(&slow), "active");
    assert_eq!(rig.status(&slow)["desired"], "up");
}

/// A stop on a full state directory is refused before anything stops (its
/// desired state could not be kept: watch would bring it back); then it works.
#[test]
fn a_stop_on_a_full_state_dir_stops_nothing_and_leaves_no_lock() {
    let Some(mut rig) = rig::engine() else { return };
    let disk = SmallDisk::under(&mut rig);
    let m = rig.idle("stop");
    hal(&rig).args(["module", "start", &m]).code(0);
    let before = docker(&[
        "inspect",
        "-f",
        "{{.Id}} {{.State.StartedAt}}",
        &container_of(&m),
    ]);
    disk.fill();
    let run = hal(&rig).args(["module", "stop", &m]).code(1);
    assert!(run.stderr.contains("no space left on device"), "{run}");
    let still = docker(&[
        "inspect",
        "-f",
        "{{.Id}} {{.State.StartedAt}}",
        &container_of(&m),
    ]);
    assert_eq!(before, still, "touched: {run}");
    assert_eq!(rig.state_of(&m), "active");
    lock_free_and_state_parses(&rig, &m);
    disk.free();
    hal(&rig).args(["module", "stop", &m]).code(0);
    assert_eq!(rig.status(&m)["desired"], "down");
    lock_free_and_state_parses(&rig, &m);
}

/// An update on a full state directory recreates nothing; with room again it
/// puts the new image in.
#[test]
fn an_update_on_a_full_state_dir_changes_nothing_and_leaves_no_lock() {
    let Some(mut rig) = with_registry() else {
        return;
    };
    let disk = SmallDisk::under(&mut rig);
    let repo = Repo::new(&rig, "full");
    let v1 = repo.publish("good");
    let m = rig.stack(
        "upd",
        stack()
            .service("app")
            .image(&repo.image)
            .runs(BEHAVES)
            .healthcheck("/tmp/ok", "interval: 1s\ntimeout: 2s\nretries: 2"),
    );
    let _previous = Previous(vec![m.clone()]);
    hal(&rig).args(["start", "--pull", "always", &m]).code(0);
    let image = |m: &str| docker(&["inspect", "-f", "{{.Image}}", &container_of(m)]);
    assert_eq!(image(&m).trim(), v1);
    let v2 = repo.publish("good");
    disk.fill();
    let run = hal(&rig)
        .args(["update", &m])
        .within(Duration::from_secs(90))
        .run();
    assert_eq!(run.code, Some(1), "{run}");
    assert_eq!(image(&m).trim(), v1, "recreated: {run}");
    assert_eq!(rig.state_of(&m), "active");
    lock_free_and_state_parses(&rig, &m);
    disk.free();
    hal(&rig)
        .args(["update", &m])
        .within(Duration::from_secs(90))
        .code(0);
    assert_eq!(image(&m).trim(), v2);
    lock_free_and_state_parses(&rig, &m);
}

/// An adoption on a full state directory is refused with no container
/// touched; with room again it takes the stack over.
#[test]
fn an_adopt_on_a_full_state_dir_touches_nothing_and_leaves_no_lock() {
    let Some(mut rig) = rig::engine() else { return };
    let disk = SmallDisk::under(&mut rig);
    let m = rig.idle("hand");
    let dir = rig.root.join(&m);
    docker(&[
        "compose",
        "--project-directory",
        dir.to_str().unwrap(),
        "-p",
        &m,
        "up",
        "-d",
    ]);
    let before = docker(&[
        "inspect",
        "-f",
        "{{.Id}} {{.State.StartedAt}}",
        &container_of(&m),
    ]);
    some_state(&rig);
    disk.fill();
    let run = hal(&rig).args(["--yes", "adopt"]).run();
    assert_eq!(run.code, Some(1), "{run}");
    assert!(run.stderr.contains("no space left on device"), "{run}");
    let still = docker(&[
        "inspect",
        "-f",
        "{{.Id}} {{.State.StartedAt}}",
        &container_of(&m),
    ]);
    assert_eq!(before, still, "touched: {run}");
    lock_free_and_state_parses(&rig, &m);
    disk.free();
    hal(&rig).args(["--yes", "adopt"]).code(0);
    assert_eq!(rig.status(&m)["desired"], "up");
    lock_free_and_state_parses(&rig, &m);
}
