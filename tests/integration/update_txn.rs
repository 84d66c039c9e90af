//! End to end: an update is a transaction of image and data (issue 48): the data checkpointed before the recreate and put back byte for byte by a rollback, `checkpoint_max`, `--no-checkpoint`, bad `checkpoint` entries, a full checkpoint store, and an update killed at each step ended by the next hal.

use std::io::Read;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

use sha2::{Digest, Sha256};

use crate::rig::registry::{Repo, digest_of, local_id, running, with_registry};
use crate::rig::{Rig, docker, eventually, hal, stack};

/// What the fixture's `app` does, by its image's `BEHAVE`: `good` (v1)
/// refuses data of schema 2, writes schema 1 on a first start and turns
/// healthy; `migrate` writes schema 2, changes files in the volume and the
/// bind mount, then exits 1 (a failed migration); `migrate-ok` migrates and
/// turns healthy.
const APP: &str = "if [ ! -f /data/schema ]; then echo 1 > /data/schema; fi; \
case \"$BEHAVE\" in migrate*) echo 2 > /data/schema; echo migrated > /data/table; \
rm -f /files/a; echo new > /files/b; chmod 600 /data/table;; esac; \
if [ \"$BEHAVE\" = migrate ]; then echo migration failed; exit 1; fi; \
if [ \"$(cat /data/schema)\" = 2 ] && [ \"$BEHAVE\" = good ]; then echo cannot read schema 2; exit 1; fi; \
touch /tmp/ok; sleep 100000";

/// A module whose `app` runs `repo`'s image with a named volume `data` and
/// a bind mount `./files`, its data seeded; with the repository's v1 running.
struct Db {
    rig: Rig,
    repo: Repo,
    m: String,
    v1: String,
}

impl Db {
    fn new(short: &str) -> Option<Db> {
        let rig = with_registry()?;
        let mut repo = Repo::new(&rig, short);
        let v1 = repo.publish("good");
        let s = stack()
            .top("volumes:\n  data: {}")
            .service("app")
            .image(&repo.image)
            .runs(APP)
            .volume("data:/data")
            .volume("./files:/files")
            .healthcheck("/tmp/ok", "interval: 1s\ntimeout: 2s\nretries: 2");
        let m = rig.stack(short, s);
        repo.modules.push(m.clone());
        let files = rig.root.join(&m).join("files");
        std::fs::create_dir_all(&files).unwrap();
        hal(&rig).args(["start", "--pull", "always", &m]).code(0);
        let db = Db { rig, repo, m, v1 };
        db.seed();
        Some(db)
    }

    fn volume(&self) -> PathBuf {
        let out = docker(&[
            "volume",
            "inspect",
            "-f",
            "{{.Mountpoint}}",
            &format!("{}_data", self.m),
        ]);
        PathBuf::from(out.trim())
    }

    fn files(&self) -> PathBuf {
        self.rig.root.join(&self.m).join("files")
    }

    /// Files of every kind a database leaves: owners, modes, a symlink, a
    /// hard link, a sparse file.
    fn seed(&self) {
        for dir in [self.volume(), self.files()] {
            std::fs::write(dir.join("a"), "row 1\n").unwrap();
            std::fs::create_dir_all(dir.join("sub")).unwrap();
            std::fs::write(dir.join("sub/table"), vec![7u8; 70_000]).unwrap();
            std::os::unix::fs::chown(dir.join("sub/table"), Some(1234), Some(5678)).unwrap();
            std::fs::set_permissions(dir.join("sub/table"), PermissionsExt::from_mode(0o640))
                .unwrap();
            std::os::unix::fs::symlink("sub/table", dir.join("link")).unwrap();
            std::fs::hard_link(dir.join("a"), dir.join("a.hard")).unwrap();
            let f = std::fs::File::create(dir.join("sparse")).unwrap();
            f.set_len(8 << 20).unwrap();
        }
    }

    /// Path, kind, mode, owner, link target and sha256 of everything in the data.
    fn manifest(&self) -> String {
        let mut out = Vec::new();
        for dir in [self.volume(), self.files()] {
            walk(&dir, &dir, &mut out);
        }
        out.sort();
        out.join("\n")
    }

    fn state(&self) -> serde_json::Value {
        let text = std::fs::read_to_string(self.rig.state.join("state.json")).unwrap();
        let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
        doc["modules"][&self.m].clone()
    }

    fn running(&self) -> String {
        let project = format!("label=com.docker.compose.project={}", self.m);
        let ids = docker(&["ps", "-q", "--filter", &project]);
        let Some(id) = ids.lines().next() else {
            return String::new();
        };
        docker(&["inspect", "-f", "{{.Image}}", id])
            .trim()
            .to_string()
    }
}

impl Drop for Db {
    fn drop(&mut self) {
        crate::rig::docker::purge_project(&self.m);
        docker(&["volume", "rm", "-f", &format!("{}_data", self.m)]);
    }
}

fn walk(root: &Path, p: &Path, out: &mut Vec<String>) {
    let meta = std::fs::symlink_metadata(p).unwrap();
    let rel = p.strip_prefix(root).unwrap().display().to_string();
    let what = if meta.file_type().is_symlink() {
        format!("-> {}", std::fs::read_link(p).unwrap().display())
    } else if meta.is_file() {
        let mut h = Sha256::new();
        let mut f = std::fs::File::open(p).unwrap();
        let mut buf = Vec::new();
        f.read_to_end(&mut buf).unwrap();
        h.update(&buf);
        format!("{:x} links={}", h.finalize(), meta.nlink())
    } else {
        "dir".to_string()
    };
    out.push(format!(
        "{rel} {:o} {}:{} {what}",
        meta.mode(),
        meta.uid(),
        meta.gid()
    ));
    if meta.is_dir() {
        for e in std::fs::read_dir(p).unwrap() {
            walk(root, &e.unwrap().path(), out);
        }
    }
}

#[test]
fn a_migration_that_crashes_is_rolled_back_with_its_data() {
    let Some(db) = Db::new("migr") else { return };
    let before = db.manifest();
    db.repo.publish("migrate");
    let run = hal(&db.rig)
        .args(["update", "--timeout", "30s", &db.m])
        .within(Duration::from_secs(120))
        .code(1);
    assert!(
        run.stderr.contains(&format!(
            "rolled back: {}/app (new image did not start",
            db.m
        )),
        "{run}"
    );
    assert!(
        run.stderr.contains("what the new image wrote is discarded"),
        "{run}"
    );
    assert_eq!(db.manifest(), before, "the data is not what it was: {run}");
    assert_eq!(db.running(), db.v1, "{run}");
    assert_eq!(db.rig.status(&db.m).state(), "active");
    // The checkpoint is hal's, under the state directory, its size in status JSON.
    assert!(
        db.rig
            .state
            .join("checkpoints")
            .join(&db.m)
            .join("0")
            .is_dir()
    );
    assert!(db.state()["txn"].is_null(), "{}", db.state());
    let st = db.rig.status(&db.m).code(0);
    let cp = &st["checkpoint"];
    assert!(cp["bytes"].as_u64().unwrap() > 8_000_000 / 100, "{st}");
    assert!(cp["at"].is_string(), "{st}");
}

#[test]
fn no_checkpoint_goes_ahead_without_one() {
    let Some(db) = Db::new("nockp") else { return };
    db.repo.publish("migrate-ok");
    let run = hal(&db.rig)
        .args(["update", "--no-checkpoint", &db.m])
        .within(Duration::from_secs(120))
        .code(0);
    assert!(
        !db.rig.state.join("checkpoints").join(&db.m).exists(),
        "{run}"
    );
    assert_eq!(
        std::fs::read_to_string(db.volume().join("schema")).unwrap(),
        "2\n"
    );
}

#[test]
fn a_checkpoint_over_checkpoint_max_is_refused_before_anything_is_pulled() {
    let Some(db) = Db::new("cmax") else { return };
    db.rig
        .set_config(&format!("[module.{}]\ncheckpoint_max = \"64KiB\"\n", db.m));
    let before = docker(&[
        "inspect",
        "-f",
        "{{.Id}} {{.State.StartedAt}}",
        &first(&db.m),
    ]);
    let v2 = db.repo.publish("migrate-ok");
    let run = hal(&db.rig).args(["update", &db.m]).code(1);
    assert!(run.stderr.contains("checkpoint_max"), "{run}");
    assert!(run.stderr.contains("64.0 KiB"), "{run}");
    assert!(local_id(&v2).is_none(), "pulled: {run}");
    let after = docker(&[
        "inspect",
        "-f",
        "{{.Id}} {{.State.StartedAt}}",
        &first(&db.m),
    ]);
    assert_eq!(before, after, "stopped or recreated: {run}");
}

/// `checkpoint_max` measures what the update would checkpoint: the data of
/// the services it can recreate (an image by tag), not that of a service
/// pinned by digest, which no update moves.
#[test]
fn checkpoint_max_measures_only_the_data_of_services_an_update_recreates() {
    let Some(rig) = with_registry() else { return };
    let mut repo = Repo::new(&rig, "cscope");
    let v1 = repo.publish("good");
    let m = repo.module(&rig, "cscope");
    let app = || {
        repo.compose()
            .volume("data:/data")
            .top("volumes:\n  data: {}\n  cold: {}")
    };
    rig.write(&m, "compose.yaml", &app().to_string());
    hal(&rig).args(["start", "--pull", "always", &m]).code(0);
    // `cold` runs v1 pinned by its digest, and holds 1 MiB.
    let (name, _) = repo.image.rsplit_once(':').unwrap();
    let pinned = format!("{name}@{}", digest_of(&v1));
    let s = app().service("cold").image(&pinned).volume("cold:/cold");
    rig.write(&m, "compose.yaml", &s.to_string());
    hal(&rig).args(["start", &m]).code(0);
    let cold = docker(&[
        "volume",
        "inspect",
        "-f",
        "{{.Mountpoint}}",
        &format!("{m}_cold"),
    ]);
    std::fs::write(Path::new(cold.trim()).join("big"), vec![1u8; 1 << 20]).unwrap();
    rig.set_config(&format!("[module.{m}]\ncheckpoint_max = \"256KiB\"\n"));
    let v2 = repo.publish("good");
    let run = hal(&rig)
        .args(["update", "--timeout", "30s", &m])
        .within(Duration::from_secs(90))
        .code(0);
    assert_eq!(running(&m, "app").0, v2, "{run}");
    assert_eq!(running(&m, "cold").0, v1, "{run}");
    docker(&[
        "volume",
        "rm",
        "-f",
        &format!("{m}_cold"),
        &format!("{m}_data"),
    ]);
}

#[test]
fn a_checkpoint_entry_that_names_nothing_is_exit_2() {
    let Some(db) = Db::new("cbad") else { return };
    db.rig.set_config(&format!(
        "[module.{}]\ncheckpoint = [\"data\", \"nowhere\"]\n",
        db.m
    ));
    db.repo.publish("migrate-ok");
    let run = hal(&db.rig).args(["update", &db.m]).code(2);
    assert!(run.stderr.contains("checkpoint"), "{run}");
    assert!(run.stderr.contains("\"nowhere\""), "{run}");
    assert_eq!(db.running(), db.v1, "{run}");
}

#[test]
fn a_full_checkpoint_store_refuses_the_update_and_leaves_the_module() {
    let Some(db) = Db::new("cfull") else { return };
    let store = db.rig.state.join("checkpoints");
    std::fs::create_dir_all(&store).unwrap();
    let mount = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=2m", "tmpfs", &path(&store)])
        .status()
        .unwrap();
    assert!(mount.success(), "mount a tmpfs on {}", path(&store));
    let _unmount = Unmount(store.clone());
    // More than 2 MiB of data that is not sparse.
    std::fs::write(db.volume().join("big"), vec![1u8; 3 << 20]).unwrap();
    let before = db.manifest();
    let starts = || db.state()["starts"].as_array().map(Vec::len);
    let counted = starts();
    db.repo.publish("migrate-ok");
    let run = hal(&db.rig)
        .args(["update", &db.m])
        .within(Duration::from_secs(120))
        .code(1);
    assert!(run.stderr.contains("No space left on device"), "{run}");
    // Nothing was recreated: no start counts toward the limit.
    assert_eq!(starts(), counted, "{run}\n{}", db.state());
    assert!(run.stderr.contains("the partial copy removed"), "{run}");
    assert_eq!(std::fs::read_dir(&store).unwrap().count(), 0, "{run}");
    assert_eq!(db.manifest(), before, "{run}");
    assert!(
        eventually(Duration::from_secs(30), || db.rig.status(&db.m).state()
            == "active"),
        "{run}"
    );
    assert_eq!(db.running(), db.v1, "{run}");
    assert!(db.state()["txn"].is_null(), "{}", db.state());
}

struct Unmount(PathBuf);

impl Drop for Unmount {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.0).status();
    }
}

fn path(p: &Path) -> String {
    p.display().to_string()
}

fn first(m: &str) -> String {
    let project = format!("label=com.docker.compose.project={m}");
    docker(&["ps", "-aq", "--filter", &project])
        .lines()
        .next()
        .unwrap_or_default()
        .to_string()
}

/// Runs `hal update` with its test hook at `step`, kills it there (SIGKILL)
/// once its state says it is there, and hands back the module.
fn killed_at(short: &str, step: &str) -> Option<(Db, String)> {
    let db = Db::new(short)?;
    let before = db.manifest();
    db.repo.publish("migrate-ok");
    let mut child = db
        .rig
        .cmd(&["update", &db.m])
        .env("HAL_TEST_STOP_AT", step)
        .spawn()
        .unwrap();
    // hal writes the step to its state, then stops there for good.
    let stopped = eventually(Duration::from_secs(120), || {
        std::fs::read_to_string(db.rig.state.join("state.json"))
            .is_ok_and(|_| db.state()["txn"]["step"] == step)
    });
    if !stopped {
        let _ = child.kill();
        panic!("hal never stopped at {step}: {}", db.state());
    }
    assert_eq!(db.state()["txn"]["step"], step, "{}", db.state());
    if step == "recreated" {
        // The new image migrates: its writes are what the rollback must undo.
        assert!(eventually(Duration::from_secs(30), || {
            std::fs::read_to_string(db.volume().join("schema")).is_ok_and(|s| s == "2\n")
        }));
    }
    child.kill().unwrap(); // SIGKILL
    let _ = child.wait();
    Some((db, before))
}

/// Killed before the gate: the next start rolls the update back, the data as it was.
fn rolled_back_after_kill(short: &str, step: &str) {
    let Some((db, before)) = killed_at(short, step) else {
        return;
    };
    let run = hal(&db.rig)
        .args(["module", "start", "--pull", "never", &db.m])
        .within(Duration::from_secs(120))
        .code(0);
    assert!(
        run.stderr.contains(&format!(
            "an update hal did not finish (stopped after step {step})"
        )),
        "{run}"
    );
    assert_eq!(db.manifest(), before, "{run}");
    assert_eq!(db.running(), db.v1, "{run}");
    assert_eq!(db.rig.status(&db.m).state(), "active");
    assert!(db.state()["txn"].is_null(), "{}", db.state());
}

#[test]
fn killed_after_the_pull_the_next_start_rolls_back() {
    rolled_back_after_kill("kpull", "pulled");
}

#[test]
fn killed_with_the_services_stopped_the_next_start_rolls_back() {
    rolled_back_after_kill("kstop", "stopped");
}

#[test]
fn killed_after_the_checkpoint_the_next_start_rolls_back() {
    rolled_back_after_kill("kckp", "checkpointed");
}

#[test]
fn killed_while_the_new_image_migrates_the_next_start_restores_the_data() {
    rolled_back_after_kill("kmig", "recreated");
}

#[test]
fn killed_after_the_gate_passed_the_next_update_finishes_it() {
    let Some((db, _)) = killed_at("kpass", "passed") else {
        return;
    };
    let run = hal(&db.rig)
        .args(["update", &db.m])
        .within(Duration::from_secs(120))
        .code(0);
    assert!(
        run.stderr
            .contains("an update hal did not finish (stopped after step passed) had passed its gate: finished it"),
        "{run}"
    );
    assert_ne!(db.running(), db.v1, "{run}");
    assert_eq!(
        std::fs::read_to_string(db.volume().join("schema")).unwrap(),
        "2\n"
    );
    assert!(db.state()["txn"].is_null(), "{}", db.state());
}
