//! Who is running (the test's own name), whether it may skip, and its lease on the engine.
//!
//! Every test of this crate runs in one process, two at a time. A test that
//! disturbs the whole engine (it restarts dockerd) takes the engine [`Lease`]
//! alone; every other engine test shares it, so none runs while the engine is
//! away. The lease is a lock in this process and a file lock
//! (`$TMPDIR/hal-tests-engine.lock`) shared by every test process on the
//! machine, so a second checkout's suite waits for a restart too.

use std::cell::Cell;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// True when the tests must not skip (`CI=true` or `CI=1`).
pub(crate) fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
}

/// The running test's path, e.g. `stacks::one_service_start_status_stop`:
/// libtest names each test's thread after it.
pub(crate) fn test_name() -> String {
    std::thread::current()
        .name()
        .filter(|n| *n != "main")
        .unwrap_or("<a test off its own thread>")
        .to_string()
}

/// The test's own name without its area, e.g. `one_service_start_status_stop`.
pub(crate) fn short_test_name() -> String {
    let name = test_name();
    name.rsplit("::").next().unwrap_or(&name).to_string()
}

/// Prints `SKIP <test>: <why>` where the harness does not swallow it (it
/// captures `eprintln!` of passing tests, not direct writes to the stream).
pub(crate) fn skip(why: &str) {
    let _ = writeln!(std::io::stderr(), "SKIP {}: {why}", test_name());
}

/// Outside CI, skips the test with a visible notice and returns `None`; with
/// `CI=true` fails it, saying what is missing and how to get it.
#[track_caller]
pub(crate) fn missing<T>(why: &str, fix: &str) -> Option<T> {
    assert!(
        !in_ci(),
        "{}: {why}, and CI=true forbids skipping ({fix})",
        test_name()
    );
    skip(&format!("{why} ({fix})"));
    None
}

/// `Some(())` when `ok`; otherwise the test skips (fails in CI) as [`missing`]
/// says. Every skip reads `let Some(..) = rig::…(..) else { return };`:
///
/// ```text
/// let Some(()) = rig::need_that(is_root(), "needs root", "run as root") else { return };
/// ```
#[track_caller]
pub(crate) fn need_that(ok: bool, why: &str, fix: &str) -> Option<()> {
    if ok { Some(()) } else { missing(why, fix) }
}

/// `Some(())` when `program FLAG` runs here (e.g. `need("socat", "-V")`);
/// otherwise the test skips (fails in CI), naming the program.
#[track_caller]
pub(crate) fn need(program: &str, flag: &str) -> Option<()> {
    need_that(
        have(program, flag),
        &format!("{program} is not installed"),
        "scripts/provision.sh installs it",
    )
}

/// Whether `program --version` (or `flag`) runs here.
pub(crate) fn have(program: &str, flag: &str) -> bool {
    std::process::Command::new(program)
        .arg(flag)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

static ENGINE: RwLock<()> = RwLock::new(());
/// Bumped each time a test restarts the engine (containers started before are gone).
static GENERATION: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// How many leases this thread holds: a second one is taken without the lock
    /// (a shared lock taken twice by one thread deadlocks once a writer waits).
    static HELD: Cell<u32> = const { Cell::new(0) };
}

/// A test's hold on the engine, released when dropped.
#[derive(Debug)]
pub(crate) struct Lease {
    /// Locked (shared or alone) while held; `None` where the file cannot be opened.
    _machine_wide: Option<File>,
    _shared: Option<RwLockReadGuard<'static, ()>>,
    alone: Option<RwLockWriteGuard<'static, ()>>,
}

/// The lock file of every hal test process on this machine.
fn machine_wide() -> Option<File> {
    let path = std::env::temp_dir().join("hal-tests-engine.lock");
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        // Made by another user: a read-only descriptor locks as well.
        .or_else(|_| File::open(&path))
        .ok()
}

impl Lease {
    /// The engine, shared with the other tests that use it as it is.
    pub(crate) fn shared() -> Lease {
        let first = HELD.get() == 0;
        let shared = first.then(|| ENGINE.read().unwrap_or_else(PoisonError::into_inner));
        let file = if first { machine_wide() } else { None };
        if let Some(f) = &file {
            f.lock_shared().expect("lock the engine lock file (shared)");
        }
        HELD.set(HELD.get() + 1);
        Lease {
            _machine_wide: file,
            _shared: shared,
            alone: None,
        }
    }

    /// The engine alone: waits until no other test uses it, and keeps every
    /// other engine test waiting until dropped.
    pub(crate) fn alone() -> Lease {
        assert_eq!(
            HELD.get(),
            0,
            "{}: takes the engine alone while already holding it",
            test_name()
        );
        let alone = ENGINE.write().unwrap_or_else(PoisonError::into_inner);
        let file = machine_wide();
        if let Some(f) = &file {
            f.lock().expect("lock the engine lock file (alone)");
        }
        HELD.set(1);
        Lease {
            _machine_wide: file,
            _shared: None,
            alone: Some(alone),
        }
    }

    /// Records that the engine restarted under this lease: what ran on it
    /// before (the systemd machine) is gone and must be made anew.
    pub(crate) fn engine_restarted(&self) {
        assert!(
            self.alone.is_some(),
            "restarted the engine without holding it alone"
        );
        GENERATION.fetch_add(1, Ordering::SeqCst);
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        HELD.set(HELD.get().saturating_sub(1));
    }
}

/// How many times a test has restarted the engine in this process.
pub(crate) fn engine_generation() -> u64 {
    GENERATION.load(Ordering::SeqCst)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_test_knows_its_own_name() {
        assert_eq!(test_name(), "rig::guard::tests::a_test_knows_its_own_name");
        assert_eq!(short_test_name(), "a_test_knows_its_own_name");
    }
}
