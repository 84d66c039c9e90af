//! The init behind host modules: what any init must answer, and the child-process plumbing they share.
//!
//! Everything hal does with units goes through [`Init`]: starting and stopping
//! them, their status and journal, the unit-name rule the config is checked
//! against, and what `doctor` asks. Adding an init (OpenRC, s6) takes one file
//! in this folder implementing [`Init`] (with its own children, as `systemd/`
//! has, if it grows), plus its line in [`crate::host::pick::for_scope`], the
//! one place that says which init runs this node. `memory.rs`, the scripted
//! init the unit tests drive the host backend with, is such a second init.
//! Handing template units over to hal (`hal adopt`) is a capability an init
//! may have ([`Init::adoption`], `adoption.rs`); systemd has it.

pub(crate) mod adoption;
#[cfg(test)]
pub(crate) mod memory;
pub(crate) mod systemd;

use std::process::{Output, Stdio};
use std::time::Duration;

use futures_util::future::BoxFuture;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncReadExt};
use tokio::process::Command;

use crate::error::HalError;
use crate::logs::stream::Lines;
use crate::util::timefmt::Stamp;

pub(crate) use self::adoption::{Adopt, Instance, template_problem};
pub(crate) use crate::module::run_state::Activity;

/// `init`'s adoption, or the error saying it has none.
pub(crate) fn adoption_of(init: &dyn Init) -> anyhow::Result<&dyn Adopt> {
    init.adoption()
        .ok_or_else(|| anyhow::anyhow!("{} has no template units to hand over", init.name()))
}

/// Whether the init could load the unit's definition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Load {
    Loaded,
    NotFound,
    Masked,
    /// Loading failed (bad setting, bad unit file); the init's reason.
    Error(String),
}

/// How the unit's main process last ended.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum MainExit {
    Exited(i64),
    Signal(i64),
}

/// One unit as the init sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct UnitStatus {
    /// The unit name as asked for.
    pub unit: String,
    pub load: Load,
    pub activity: Activity,
    /// The init's own words, `ACTIVITY/SUB` (e.g. `active/running`,
    /// `failed/failed`), or the activity alone for an init without sub-states.
    pub words: String,
    /// The init is restarting it on its own after a failure (systemd's
    /// `activating/auto-restart`).
    pub auto_restart: bool,
    /// Why it last stopped or failed, e.g. `exit-code`; `None` when it succeeded.
    pub result: Option<String>,
    pub main_exit: Option<MainExit>,
    /// The main process of the last run (still running or not).
    pub main_pid: Option<u32>,
    /// Restarts the init made on its own.
    pub restarts: Option<i64>,
    /// When it last became active.
    pub active_since: Option<Stamp>,
    /// When its state last changed.
    pub changed: Option<Stamp>,
    /// When its main process last ended.
    pub exited_at: Option<Stamp>,
    /// The units it starts: a timer's job (`Triggers=`).
    pub triggers: Vec<String>,
    /// A timer's next elapse on the wall clock, when it has one.
    pub next_run: Option<Stamp>,
    /// When a timer last elapsed.
    pub last_trigger: Option<Stamp>,
}

/// Whether `unit` names a timer: a unit that starts another (its job, in
/// [`UnitStatus::triggers`]) on a schedule.
pub(crate) fn is_timer(unit: &str) -> bool {
    unit.ends_with(".timer")
}

impl UnitStatus {
    /// The words as a phrase for people: `inactive/dead` → `inactive (dead)`.
    pub(crate) fn phrase(&self) -> String {
        match self.words.split_once('/') {
            Some((state, sub)) if !sub.is_empty() && sub != state => format!("{state} ({sub})"),
            Some((state, _)) => state.to_string(),
            None => self.words.clone(),
        }
    }
}

/// Which journal lines to read.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct JournalQuery {
    pub follow: bool,
    /// The last N lines; all when `None`.
    pub tail: Option<u64>,
    /// To the second.
    pub since: Option<Stamp>,
    /// To the second: only lines before this.
    pub until: Option<Stamp>,
    /// Also this process's lines, whatever unit the journal filed them under
    /// (see `systemd::journal::user_unit_matches`).
    pub pid: Option<u32>,
}

/// What hal needs from an init. Every call is bounded in time; nothing prints.
/// Errors are `anyhow` errors carrying [`HalError::InitUnreachable`] (exit 6)
/// when the init cannot be reached, or an [`InitError`] otherwise.
pub(crate) trait Init: Send + Sync {
    /// The init's name, for messages and `doctor`'s check names: `systemd`.
    fn name(&self) -> &'static str;

    /// Why `unit` cannot name a unit of this init, or `None`: the config's
    /// `unit = ` is checked against this before anything runs.
    fn unit_problem(&self, unit: &str) -> Option<String>;

    /// Cheap checks (no child process) that the init can be reached at all.
    fn reachable(&self) -> Result<(), HalError>;

    /// Whether the manager answers, and how it is doing, for `doctor`.
    fn health(&self) -> BoxFuture<'_, ManagerHealth>;

    /// Why the init cannot load `unit`, for `doctor`; `None` when it is
    /// loaded, or when the init cannot tell.
    fn load_problem<'a>(&'a self, unit: &'a str) -> BoxFuture<'a, Option<LoadProblem>>;

    /// The status of every unit, in the order asked, from one call.
    fn show<'a>(&'a self, units: &'a [String]) -> BoxFuture<'a, anyhow::Result<Vec<UnitStatus>>>;

    /// Starts a unit; with `wait`, returns once the init finished the start job
    /// (a failed job is an error), giving up after `timeout`.
    fn start<'a>(
        &'a self,
        unit: &'a str,
        wait: bool,
        timeout: Duration,
    ) -> BoxFuture<'a, anyhow::Result<()>>;

    /// Stops a unit and waits for the stop job, giving up after `timeout`.
    fn stop<'a>(&'a self, unit: &'a str, timeout: Duration) -> BoxFuture<'a, anyhow::Result<()>>;

    /// Forgets a unit's failed state (and the init's own start-rate count).
    fn reset_failed<'a>(&'a self, unit: &'a str) -> BoxFuture<'a, anyhow::Result<()>>;

    /// The unit's log lines, oldest first; with `follow`, until dropped.
    fn journal(&self, unit: &str, q: JournalQuery) -> Lines;

    /// Asks the log store to take in what it has been sent but not stored yet
    /// (best effort: it may need privileges), so that a failure's last lines are there.
    fn settle_logs(&self) -> BoxFuture<'_, ()>;

    /// What the init can do to hand its template units over to hal
    /// (`hal adopt`), if it can: an init without template units has none.
    fn adoption(&self) -> Option<&dyn Adopt> {
        None
    }

    /// The command a person runs to have `units` started now and at every
    /// boot (or login), for `doctor`'s hints.
    fn enable_hint(&self, units: &[&str]) -> String;
}

/// The status of one unit.
pub(crate) async fn show_one(init: &dyn Init, unit: &str) -> anyhow::Result<UnitStatus> {
    let units = [unit.to_string()];
    init.show(&units)
        .await?
        .pop()
        .ok_or_else(|| anyhow::anyhow!("{} said nothing about {unit}", init.name()))
}

/// What `doctor` learns from asking a manager how it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum ManagerHealth {
    /// The manager answers: its word for its state (`running`, `degraded`),
    /// and what to look at when not all is well.
    Up { state: String, note: Option<String> },
    /// It cannot be reached: what is wrong, and what to do about it.
    Down { why: String, hint: String },
}

/// A unit the init could not load, in the init's words, for `doctor`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct LoadProblem {
    /// What the init says, e.g. `LoadState=not-found`.
    pub words: String,
    /// How to see what the init sees, e.g. `systemctl cat x.service shows what systemd sees`.
    pub look: String,
}

/// A failure the init reported about a unit.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum InitError {
    #[error("unit {0} not found")]
    NotFound(String),
    #[error("needs root: run with sudo ({0})")]
    Permission(String),
    /// The init ran the job and it failed.
    #[error("{0}")]
    JobFailed(String),
    #[error("did not finish within {}", crate::util::duration::format(*.0))]
    Timeout(Duration),
    #[error("{0}")]
    Other(String),
}

/// The bytes of one stderr kept for messages.
const STDERR_KEEP: usize = 8 * 1024;

/// A child process command with the settings every init call shares: no
/// stdin, piped output, killed when dropped, C locale, no colour (an init's
/// own switches, such as systemd's pager, are its own to add).
pub(crate) fn command(program: &str, args: &[String]) -> Command {
    let mut cmd = Command::new(program);
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .env("LC_ALL", "C")
        .env("NO_COLOR", "1");
    cmd
}

/// Runs `cmd` to the end, or kills it after `timeout` (`Ok(None)`).
pub(crate) async fn run(mut cmd: Command, timeout: Duration) -> std::io::Result<Option<Output>> {
    let child = cmd.spawn()?;
    match tokio::time::timeout(timeout, child.wait_with_output()).await {
        Ok(out) => out.map(Some),
        // Dropping the future drops the child, which kills it.
        Err(_) => Ok(None),
    }
}

/// A child's output, one line at a time, each line parsed by `parse` (which
/// may turn one line into none or several). The child is killed when the
/// stream is dropped; a non-zero exit ends the stream with an error naming
/// `what` and the child's last stderr words.
pub(crate) fn line_stream<T, F>(mut cmd: Command, what: String, max_line: usize, parse: F) -> Lines
where
    T: IntoIterator<Item = crate::logs::line::Line> + Send + 'static,
    F: Fn(&[u8]) -> T + Send + 'static,
    <T as IntoIterator>::IntoIter: Send,
{
    use futures_util::stream::StreamExt;
    let (tx, rx) = tokio::sync::mpsc::channel::<anyhow::Result<crate::logs::line::Line>>(256);
    tokio::spawn(async move {
        let fail = |e: String| anyhow::anyhow!("{what}: {e}");
        let mut child = match cmd.spawn() {
            Ok(c) => c,
            Err(e) => {
                let _ = tx.send(Err(fail(e.to_string()))).await;
                return;
            }
        };
        let (Some(stdout), Some(stderr)) = (child.stdout.take(), child.stderr.take()) else {
            let _ = tx.send(Err(fail("no output pipe".into()))).await;
            return;
        };
        let err_task = tokio::spawn(read_tail(stderr, STDERR_KEEP));
        let mut reader = tokio::io::BufReader::new(stdout);
        let mut buf = Vec::new();
        loop {
            tokio::select! {
                // The reader went away: stop at once (the child is killed on drop).
                () = tx.closed() => return,
                got = next_line(&mut reader, &mut buf, max_line) => match got {
                    Ok(true) => {
                        for line in parse(&buf) {
                            if tx.send(Ok(line)).await.is_err() {
                                return;
                            }
                        }
                    }
                    Ok(false) => break,
                    Err(e) => {
                        let _ = tx.send(Err(fail(e.to_string()))).await;
                        return;
                    }
                },
            }
        }
        let status = child.wait().await;
        let stderr = err_task.await.unwrap_or_default();
        match status {
            Ok(s) if s.success() => {}
            Ok(s) => {
                let words = last_words(&stderr);
                let why = if words.is_empty() {
                    format!("exited with {s}")
                } else {
                    words
                };
                let _ = tx.send(Err(fail(why))).await;
            }
            Err(e) => {
                let _ = tx.send(Err(fail(e.to_string()))).await;
            }
        }
    });
    tokio_stream_from(rx).boxed()
}

fn tokio_stream_from<T: Send + 'static>(
    rx: tokio::sync::mpsc::Receiver<T>,
) -> impl futures_util::Stream<Item = T> + Send + 'static {
    futures_util::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|x| (x, rx)) })
}

/// Reads one `\n`-terminated line into `buf` (without the newline), keeping at
/// most `max` bytes of it. `Ok(false)` at the end of input.
pub(crate) async fn next_line<R: AsyncBufRead + Unpin>(
    r: &mut R,
    buf: &mut Vec<u8>,
    max: usize,
) -> std::io::Result<bool> {
    buf.clear();
    let mut seen = false;
    loop {
        let chunk = r.fill_buf().await?;
        if chunk.is_empty() {
            return Ok(seen);
        }
        seen = true;
        let (piece, used, done) = match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => (&chunk[..i], i + 1, true),
            None => (chunk, chunk.len(), false),
        };
        let room = max.saturating_sub(buf.len());
        buf.extend_from_slice(&piece[..piece.len().min(room)]);
        r.consume(used);
        if done {
            return Ok(true);
        }
    }
}

/// The last few non-empty lines of a child's stderr, on one line.
pub(crate) fn last_words(text: &str) -> String {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    lines[lines.len().saturating_sub(3)..].join("; ")
}

/// The last `keep` bytes of a reader, as text.
async fn read_tail<R: tokio::io::AsyncRead + Unpin>(mut r: R, keep: usize) -> String {
    let mut all = Vec::new();
    let mut chunk = [0u8; 4096];
    while let Ok(n) = r.read(&mut chunk).await {
        if n == 0 {
            break;
        }
        all.extend_from_slice(&chunk[..n]);
        if all.len() > 2 * keep {
            all.drain(..all.len() - keep);
        }
    }
    let start = all.len().saturating_sub(keep);
    String::from_utf8_lossy(&all[start..]).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn next_line_splits_and_caps() {
        let data: &[u8] = b"one\ntwo-is-long\nlast";
        let mut r = tokio::io::BufReader::with_capacity(4, data);
        let mut buf = Vec::new();
        assert!(next_line(&mut r, &mut buf, 100).await.unwrap());
        assert_eq!(buf, b"one");
        assert!(next_line(&mut r, &mut buf, 3).await.unwrap());
        assert_eq!(buf, b"two");
        assert!(next_line(&mut r, &mut buf, 100).await.unwrap());
        assert_eq!(buf, b"last");
        assert!(!next_line(&mut r, &mut buf, 100).await.unwrap());
    }

    #[tokio::test]
    async fn read_tail_keeps_the_end() {
        let data = vec![b'a'; 10_000];
        let mut with_end = data.clone();
        with_end.extend_from_slice(b"END");
        let s = read_tail(with_end.as_slice(), 5).await;
        assert_eq!(s, "aaEND");
    }
}
