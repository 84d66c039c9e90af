//! hal's durable state on the node: start counts, desired state, pull warnings — shared by every hal process through a lock.

pub(crate) mod applied;
mod cache;
mod changes;
pub(crate) mod kept;
pub(crate) mod last_run;
pub(crate) mod ledger;
mod quarantined;
pub(crate) mod records;
pub(crate) mod shared;
pub(crate) mod txn;

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
pub(crate) type StateChange = std::sync::Arc<dyn Fn(&mut StateFile) + Send + Sync>;

/// What the watch's store could not write yet, and why the last write failed (`kept.rs`).
#[derive(Default)]
pub(crate) struct Kept {
    steps: Vec<StateChange>,
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
                    quarantined: r.quarantine.into_iter().map(|q| q.service).collect(),
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
        self.replace_as(name, text, self.file_mode(), atomic::Sync::Durable)
    }

    /// [`Store::replace`] for a cache: unsynced, and writable by its owner alone
    /// (a cache read by the group must be one only its owner could write).
    fn replace_cache(&self, name: &str, text: &[u8]) -> anyhow::Result<()> {
        self.replace_as(name, text, self.file_mode() & !0o022, atomic::Sync::Cache)
    }

    /// [`Store::replace`] in `mode`, waiting for the disk as `sync` says.
    fn replace_as(
        &self,
        name: &str,
        text: &[u8],
        mode: u32,
        sync: atomic::Sync,
    ) -> anyhow::Result<()> {
        let target = self.dir.join(name);
        atomic::replace(&target, text, atomic::Mode::Exact(mode), sync)
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
mod tests;
