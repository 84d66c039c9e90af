//! hal's durable state on the node: start counts, desired state, pull warnings — shared by every hal process through a lock.

mod cache;
mod changes;
pub(crate) mod kept;
pub(crate) mod last_run;
pub(crate) mod ledger;
pub(crate) mod records;
pub(crate) mod shared;

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::Read;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use crate::module::update_tally::UpdateTally;
use crate::state::records::{SCHEMA, StateFile, parse_state};
use crate::util::atomic;
use anyhow::Context;

const STATE_FILE: &str = "state.json";
const LOCK_FILE: &str = "state.lock";

/// Where a state lives, and so who shares it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Place {
    /// The node's: every hal that drives the system engine. Group-shared:
    /// a setgid directory, group-writable files.
    Node,
    /// One user's own (a rootless engine on that user's socket).
    User,
    /// `HAL_STATE_DIR`: whoever set it says who shares it; kept private.
    Given,
}

/// The state directory and its files.
#[derive(Clone, Debug)]
pub(crate) struct Store {
    dir: PathBuf,
    place: Place,
    /// What could not be written yet, kept in memory (the watch's store: `kept.rs`).
    kept: Option<Shared>,
}

/// A change to hal's state that can be applied again, with the same result (`kept.rs`).
pub(crate) type Step = std::sync::Arc<dyn Fn(&mut StateFile) + Send + Sync>;

/// What the watch's store could not write yet, and why the last write failed (`kept.rs`).
#[derive(Default)]
pub(crate) struct Kept {
    steps: Vec<Step>,
    /// `None`: the last write worked.
    why: Option<String>,
}

impl std::fmt::Debug for Kept {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Kept")
            .field("steps", &self.steps.len())
            .field("why", &self.why)
            .finish()
    }
}

/// Shared by every clone of the watch's store.
type Shared = std::sync::Arc<std::sync::Mutex<Kept>>;

/// An exclusive hold on one module: operations on it never interleave. The
/// kernel releases it when the process dies, so a SIGKILL leaves nothing stuck.
pub(crate) struct ModuleLock {
    _file: File,
}

impl Store {
    /// A private state in `dir` (`HAL_STATE_DIR`, tests).
    pub(crate) fn new(dir: PathBuf) -> Store {
        Store::at(dir, Place::Given)
    }

    /// The state in `dir`, shared as `place` says ([`shared::locate`]).
    pub(crate) fn at(dir: PathBuf, place: Place) -> Store {
        Store {
            dir,
            place,
            kept: None,
        }
    }

    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    fn ensure_dir(&self) -> anyhow::Result<()> {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(self.dir_mode())
            .create(&self.dir)
            .with_context(|| format!("create state directory {}", self.dir.display()))?;
        let meta = std::fs::symlink_metadata(&self.dir)
            .with_context(|| format!("state directory {}", self.dir.display()))?;
        if meta.file_type().is_symlink() {
            anyhow::bail!(
                "state directory {} is a symlink; refusing to use it",
                self.dir.display()
            );
        }
        // A directory others can write to would let them plant files where
        // hal's state and locks live; the node's is shared with the engine's group alone.
        self.share_dir(&self.dir)
            .with_context(|| format!("state directory {}", self.dir.display()))
    }

    /// Opens (creating 0600, or 0664 in the node's) a file in the state
    /// directory, never through a symlink.
    fn open_private(&self, name: &str, write: bool) -> anyhow::Result<File> {
        let path = self.dir.join(name);
        let file = OpenOptions::new()
            .read(true)
            .write(write)
            .create(write)
            .mode(self.file_mode())
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&path)
            .with_context(|| format!("open {} (a symlink there is refused)", path.display()))?;
        self.fix_mode(&file);
        Ok(file)
    }

    /// Takes the per-module operation lock, waiting for another hal that holds it.
    pub(crate) async fn lock_module(&self, name: &str) -> anyhow::Result<ModuleLock> {
        self.ensure_dir()?;
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(self.dir_mode())
            .create(self.dir.join("locks"))
            .context("create lock directory")?;
        self.share_dir(&self.dir.join("locks"))
            .context("lock directory")?;
        let file = self.open_lock(&format!("locks/{name}.lock"))?;
        let file = tokio::task::spawn_blocking(move || file.lock().map(|()| file))
            .await
            .context("lock task")?
            .with_context(|| format!("lock module {name}"))?;
        Ok(ModuleLock { _file: file })
    }

    /// Whether some operation holds the module's lock right now (a start, stop
    /// or restart in progress, in this process or another). Creates nothing.
    pub(crate) fn busy(&self, name: &str) -> bool {
        let path = self.dir.join("locks").join(format!("{name}.lock"));
        let Ok(file) = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&path)
        else {
            return false;
        };
        matches!(
            file.try_lock_shared(),
            Err(std::fs::TryLockError::WouldBlock)
        )
    }

    /// Reads the state without locking (writes are atomic renames). A missing
    /// file is empty state; a corrupt one is reported and treated as empty.
    /// What the store keeps in memory, not written yet, is part of it.
    pub(crate) fn read(&self) -> (StateFile, Option<String>) {
        let (mut state, warning) = self.read_file();
        self.overlay(&mut state);
        (state, warning)
    }

    /// The state file as it is.
    fn read_file(&self) -> (StateFile, Option<String>) {
        let path = self.dir.join(STATE_FILE);
        let mut text = String::new();
        let file = match OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&path)
        {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return (StateFile::default(), None);
            }
            Err(e) => {
                return (
                    StateFile::default(),
                    Some(format!(
                        "state file {}: {e}; starting from empty state",
                        path.display()
                    )),
                );
            }
        };
        if let Err(e) = (&file).take(64 << 20).read_to_string(&mut text) {
            return (
                StateFile::default(),
                Some(format!(
                    "state file {}: {e}; starting from empty state",
                    path.display()
                )),
            );
        }
        parse_state(&text).map_or_else(
            |why| {
                (
                    StateFile::default(),
                    Some(format!(
                        "state file {} is corrupt ({why}); it will be rebuilt",
                        path.display()
                    )),
                )
            },
            |s| (s, None),
        )
    }

    /// What updates left of each module (the last check's answer, the
    /// rollbacks), for the metrics: read without locking, as [`Store::read`].
    pub(crate) fn update_tallies(&self) -> BTreeMap<String, UpdateTally> {
        self.read()
            .0
            .modules
            .into_iter()
            .map(|(name, r)| {
                let available = match r.update_check {
                    Some(c) if !c.available.is_empty() => Some(true),
                    Some(c) if c.error.is_none() => Some(false),
                    _ => None,
                };
                let tally = UpdateTally {
                    available,
                    rollbacks: r.rollbacks,
                };
                (name, tally)
            })
            .collect()
    }

    /// Read, change and atomically rewrite the state under the state lock.
    /// Returns the closure's result and a warning if the old file was unusable.
    /// The lock wait and the fsync run off the async thread: other modules'
    /// work goes on meanwhile.
    pub(crate) async fn update<R: Send + 'static>(
        &self,
        change: impl FnOnce(&mut StateFile) -> R + Send + 'static,
    ) -> anyhow::Result<(R, Option<String>)> {
        let store = self.clone();
        tokio::task::spawn_blocking(move || store.update_blocking(change))
            .await
            .context("state update task")?
    }

    /// [`Store::update`] on the calling thread: it blocks on the lock and on fsync.
    /// What is kept in memory is written with the change, and then forgotten.
    fn update_blocking<R>(
        &self,
        change: impl FnOnce(&mut StateFile) -> R,
    ) -> anyhow::Result<(R, Option<String>)> {
        let done = self.update_locked(change);
        if let Err(e) = &done {
            self.not_written(e);
        }
        done
    }

    fn update_locked<R>(
        &self,
        change: impl FnOnce(&mut StateFile) -> R,
    ) -> anyhow::Result<(R, Option<String>)> {
        self.ensure_dir()?;
        let lock = self.open_lock(LOCK_FILE)?;
        lock.lock().context("lock the state file")?;
        let (mut state, warning) = self.read_file();
        if warning.is_some() {
            // Keep the unusable file for a post-mortem, then rebuild.
            let _ = std::fs::rename(
                self.dir.join(STATE_FILE),
                self.dir.join(format!("{STATE_FILE}.corrupt")),
            );
        }
        let kept = self.overlay(&mut state);
        let result = change(&mut state);
        state.schema = SCHEMA;
        self.write(&state)?;
        self.wrote(kept);
        drop(lock);
        Ok((result, warning))
    }

    /// Opens a lock file for writing (creating it), or only to read where
    /// the state cannot be written: a lock needs no write.
    fn open_lock(&self, name: &str) -> anyhow::Result<File> {
        self.open_private(name, true).or_else(|e| {
            let path = self.dir.join(name);
            OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
                .open(&path)
                .map_err(|_| e)
        })
    }

    fn write(&self, state: &StateFile) -> anyhow::Result<()> {
        let text = serde_json::to_vec_pretty(state).context("encode state")?;
        self.replace(STATE_FILE, &text)
            .context("replace state file")
    }

    /// Replaces `name` (relative to the state directory) with `text` whole: a
    /// new file in the state's mode, written and synced, renamed over the old,
    /// so a crash leaves the old file or the new one, never half of either.
    /// Every file hal keeps in its state directory is written here
    /// (`util::atomic`, which a symlink cannot redirect); a cache through
    /// [`Store::keep_cache`], the same way but unsynced.
    pub(crate) fn replace(&self, name: &str, text: &[u8]) -> anyhow::Result<()> {
        self.replace_as(name, text, atomic::Sync::Durable)
    }

    /// [`Store::replace`], waiting for the disk as `sync` says.
    fn replace_as(&self, name: &str, text: &[u8], sync: atomic::Sync) -> anyhow::Result<()> {
        let target = self.dir.join(name);
        let mode = atomic::Mode::Exact(self.file_mode());
        atomic::replace(&target, text, mode, sync)
            .with_context(|| format!("replace {}", target.display()))
    }

    /// The folder `name` of the state directory, made (in the state's mode,
    /// group-shared on a node) when it is not there yet.
    pub(crate) fn folder(&self, name: &str) -> anyhow::Result<PathBuf> {
        self.ensure_dir()?;
        let dir = self.dir.join(name);
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(self.dir_mode())
            .create(&dir)
            .with_context(|| format!("create {}", dir.display()))?;
        self.share_dir(&dir)
            .with_context(|| format!("state directory {}", dir.display()))?;
        Ok(dir)
    }
}

#[cfg(test)]
mod tests {
    use crate::module::config::RestartLimit;
    use crate::module::status::Desired;
    use crate::util::timefmt::Stamp;
    use std::os::unix::fs::PermissionsExt;
    use std::time::Duration;

    use super::*;

    fn store(tag: &str) -> Store {
        let dir = std::env::temp_dir().join(format!("hal-store-{}-{tag}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        Store::new(dir)
    }

    fn limit(burst: u32, secs: u64) -> RestartLimit {
        RestartLimit {
            burst,
            interval: Duration::from_secs(secs),
        }
    }

    #[tokio::test]
    async fn counts_until_burst_then_refuses_until_window_passes() {
        let s = store("limit");
        let t0 = Stamp::from_secs(1000);
        for i in 0..3 {
            let (u, _) = s
                .count_start("web", limit(3, 60), false, t0.plus(Duration::from_secs(i)))
                .await
                .unwrap();
            assert_eq!(u.used, i as u32 + 1);
        }
        let err = s
            .count_start("web", limit(3, 60), false, t0.plus(Duration::from_secs(10)))
            .await
            .unwrap_err();
        let text = err.to_string();
        assert!(text.contains("start limit hit: 3 starts in 1m"), "{text}");
        assert!(text.contains("free again at 00:17:40 UTC"), "{text}");
        assert!(
            s.count_start("web", limit(3, 60), true, t0.plus(Duration::from_secs(10)))
                .await
                .is_ok()
        );
        // Four starts counted (one forced): still held until two leave the window.
        assert!(
            s.count_start("web", limit(3, 60), false, t0.plus(Duration::from_secs(59)))
                .await
                .is_err()
        );
        assert!(
            s.count_start("web", limit(3, 60), false, t0.plus(Duration::from_secs(62)))
                .await
                .is_ok()
        );
        s.reset("web").await.unwrap();
        let (st, _) = s.read();
        assert!(st.modules["web"].starts.is_empty());
        std::fs::remove_dir_all(s.dir()).unwrap();
    }

    #[tokio::test]
    async fn corrupt_file_is_reported_and_rebuilt() {
        let s = store("corrupt");
        s.ensure_dir().unwrap();
        std::fs::write(s.dir().join(STATE_FILE), b"{not json").unwrap();
        let (st, w) = s.read();
        assert_eq!(st, StateFile::default());
        assert!(w.unwrap().contains("corrupt"));
        let w = s.set_desired("web", Desired::Up).await.unwrap();
        assert!(w.is_some());
        let (st, w) = s.read();
        assert!(w.is_none());
        assert_eq!(st.modules["web"].desired, Some(Desired::Up));
        let mode = std::fs::metadata(s.dir().join(STATE_FILE))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        std::fs::remove_dir_all(s.dir()).unwrap();
    }

    #[tokio::test]
    async fn planted_symlink_is_not_followed() {
        let s = store("symlink");
        s.ensure_dir().unwrap();
        let target = s.dir().join("elsewhere");
        std::fs::write(&target, b"precious").unwrap();
        std::os::unix::fs::symlink(&target, s.dir().join(LOCK_FILE)).unwrap();
        assert!(s.set_desired("web", Desired::Up).await.is_err());
        assert_eq!(std::fs::read(&target).unwrap(), b"precious");
        std::fs::remove_dir_all(s.dir()).unwrap();
    }

    #[tokio::test]
    async fn update_tallies_say_the_last_check_and_the_rollbacks() {
        use crate::state::records::CheckRecord;
        let s = store("tallies");
        let check = |available: &[&str], error: Option<&str>| CheckRecord {
            at: Stamp::EPOCH,
            available: available.iter().map(ToString::to_string).collect(),
            error: error.map(str::to_string),
        };
        let checks = [
            ("new", Some(check(&["app"], None)), 2),
            ("same", Some(check(&[], None)), 0),
            (
                "unreachable",
                Some(check(&[], Some("connection refused"))),
                0,
            ),
            ("never", None, 0),
        ];
        s.update(move |st| {
            for (name, c, rollbacks) in checks {
                let r = st.modules.entry(name.to_string()).or_default();
                r.update_check = c;
                r.rollbacks = rollbacks;
            }
        })
        .await
        .unwrap();
        let t = s.update_tallies();
        let said = |n: &str| (t[n].available, t[n].rollbacks);
        assert_eq!(said("new"), (Some(true), 2));
        assert_eq!(said("same"), (Some(false), 0));
        assert_eq!(said("unreachable"), (None, 0));
        assert_eq!(said("never"), (None, 0));
        std::fs::remove_dir_all(s.dir()).unwrap();
    }

    #[test]
    fn parse_state_never_panics_on_odd_shapes() {
        for t in [
            "",
            "null",
            "{\"modules\": 3}",
            "{\"schema\": 99}",
            "{\"modules\":{\"a\":{\"starts\":[\"x\"]}}}",
        ] {
            assert!(parse_state(t).is_err(), "{t}");
        }
        assert!(parse_state("{}").is_ok());
    }
}
