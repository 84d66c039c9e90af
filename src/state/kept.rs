//! What `hal watch` keeps in memory while hal's state cannot be written (a full disk, a read-only mount, lost permissions): its repairs go on, their start counts, holds and outcomes still count, and are written once the state can be (issue 50).
//!
//! Each change is kept as a step that can be applied again: every read of
//! the watch's store applies the kept steps over the file, and the next write
//! that works writes them with it and forgets them. A step applied to a file
//! that already has it changes nothing (a start is one instant, counted once),
//! so nothing is counted twice.

use std::sync::{Arc, MutexGuard, PoisonError};

use crate::error::OneLine;
use crate::module::config::RestartLimit;
use crate::state::records::{LimitUse, StateFile, refusal};
use crate::state::{Kept, Shared, StateChange, Store};
use crate::util::timefmt::Stamp;

/// Less room than this on the state's file system: a state file may not fit.
const FULL: u64 = 64 * 1024;

impl Store {
    /// This store, keeping in memory what it cannot write (the watch's).
    pub(crate) fn keeping(mut self) -> Store {
        self.kept = Some(Shared::default());
        self
    }

    fn kept(&self) -> Option<MutexGuard<'_, Kept>> {
        self.kept
            .as_ref()
            .map(|k| k.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// Why hal's state could not be written the last time it was tried, if it could not.
    pub(crate) fn unwritable(&self) -> Option<String> {
        self.kept().and_then(|k| k.why.clone())
    }

    /// Whether something kept in memory waits to be written (or the last write failed).
    pub(crate) fn owed(&self) -> bool {
        self.kept()
            .is_some_and(|k| k.why.is_some() || !k.steps.is_empty())
    }

    /// Why hal's state could not be written now, as far as a look without
    /// writing tells (`hal status`): its file system read-only or (nearly) full.
    pub(crate) fn cannot_write(&self) -> Option<String> {
        use std::os::unix::ffi::OsStrExt;
        let dir = self.dir.ancestors().find(|d| d.exists())?;
        let c = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
        let (free, read_only) = crate::util::sys::room(&c)?;
        if read_only {
            return Some(format!(
                "{} is on a read-only file system",
                self.dir.display()
            ));
        }
        (free < FULL).then(|| {
            format!(
                "{}: no space left on device ({} KiB free)",
                self.dir.display(),
                free / 1024
            )
        })
    }

    /// Applies the kept steps to `state` as read from the file; how many.
    pub(super) fn overlay(&self, state: &mut StateFile) -> usize {
        let Some(k) = self.kept() else { return 0 };
        for step in &k.steps {
            step(state);
        }
        k.steps.len()
    }

    /// A write worked, with the first `n` kept steps in it.
    pub(super) fn wrote(&self, n: usize) {
        if let Some(mut k) = self.kept() {
            let n = n.min(k.steps.len());
            k.steps.drain(..n);
            k.why = None;
        }
    }

    /// A write failed: why, for the watch to say.
    pub(super) fn not_written(&self, e: &anyhow::Error) {
        if let Some(mut k) = self.kept() {
            k.why = Some(OneLine(e).to_string());
        }
    }

    /// Applies `step` to the state and writes it; when the state cannot be
    /// written and this store keeps what it cannot write, the step is kept
    /// in memory (every read sees it) until a write works.
    pub(crate) async fn apply(&self, step: StateChange) -> anyhow::Result<Option<String>> {
        let s = Arc::clone(&step);
        match self.update(move |state| s(state)).await {
            Ok(((), w)) => Ok(w),
            Err(_) if self.kept.is_some() => {
                if let Some(mut k) = self.kept() {
                    k.steps.push(step);
                }
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }

    /// Writes what is kept in memory, if the state can be written now; true when it was.
    pub(crate) async fn write_kept(&self) -> bool {
        self.update(|_| ()).await.is_ok()
    }

    /// [`Store::count_start`] when the state could not be written: checked
    /// against what the file and memory hold, and counted in memory.
    pub(super) fn count_kept(
        &self,
        name: &str,
        limit: RestartLimit,
        force: bool,
        now: Stamp,
    ) -> anyhow::Result<(LimitUse, Option<String>)> {
        let (mut state, warning) = self.read();
        let rec = state.modules.entry(name.to_string()).or_default();
        rec.prune(limit, now);
        let before = rec.limit_use(limit, now);
        if before.used >= limit.burst && !force {
            return Err(refusal(name, &before, now).into());
        }
        let at = now.whole_milli();
        rec.starts.push(at);
        let used = rec.limit_use(limit, now);
        let key = name.to_string();
        if let Some(mut k) = self.kept() {
            k.steps.push(Arc::new(move |s: &mut StateFile| {
                let r = s.modules.entry(key.clone()).or_default();
                if !r.starts.contains(&at) {
                    r.starts.push(at);
                }
            }));
        }
        Ok((used, warning))
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn limit() -> RestartLimit {
        RestartLimit {
            burst: 2,
            interval: Duration::from_secs(600),
        }
    }

    /// A state directory that cannot be written: a file where it should be.
    fn blocked(tag: &str) -> (std::path::PathBuf, Store) {
        let base = std::env::temp_dir().join(format!("hal-kept-{}-{tag}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        std::fs::create_dir_all(&base).unwrap();
        let dir = base.join("state");
        std::fs::write(&dir, b"in the way").unwrap();
        (base, Store::new(dir).keeping())
    }

    #[tokio::test]
    async fn counts_kept_in_memory_hold_the_limit_and_are_written_once() {
        let (base, s) = blocked("count");
        let t0 = Stamp::from_secs(1000);
        assert!(s.unwritable().is_none());
        for i in 0..2 {
            let (u, _) = s
                .count_start("web", limit(), false, t0.plus(Duration::from_secs(i)))
                .await
                .unwrap();
            assert_eq!(u.used, i as u32 + 1);
        }
        assert!(s.unwritable().is_some());
        // The limit holds, in memory.
        assert!(
            s.count_start("web", limit(), false, t0.plus(Duration::from_secs(3)))
                .await
                .is_err()
        );
        assert_eq!(s.read().0.modules["web"].starts.len(), 2);
        // Writable again: written once, then nothing is kept.
        std::fs::remove_file(s.dir()).unwrap();
        assert!(s.write_kept().await);
        assert!(s.unwritable().is_none());
        assert!(!s.owed());
        let (state, _) = s.read();
        assert_eq!(state.modules["web"].starts.len(), 2);
        let text = std::fs::read_to_string(s.dir().join("state.json")).unwrap();
        let on_disk = crate::state::records::parse_state(&text).unwrap();
        assert_eq!(on_disk.modules["web"].starts.len(), 2);
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[tokio::test]
    async fn a_store_that_keeps_nothing_fails_as_before() {
        let (base, s) = blocked("plain");
        let plain = Store::new(s.dir().to_path_buf());
        assert!(
            plain
                .count_start("web", limit(), false, Stamp::from_secs(1000))
                .await
                .is_err()
        );
        assert!(plain.unwritable().is_none());
        std::fs::remove_dir_all(&base).unwrap();
    }
}
