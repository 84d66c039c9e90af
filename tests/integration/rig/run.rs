//! Running hal (or anything) to completion, bounded in time, and reading what it left.

use std::ffi::OsStr;
use std::io::{BufRead, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output};
use std::time::{Duration, Instant};

use super::Rig;

/// How long a hal run may take unless a test says otherwise.
pub(crate) const LIMIT: Duration = Duration::from_secs(180);

/// `hal` with this rig's services root, state and config: add arguments,
/// then `.code(N)` runs it and asserts its exit code, or `.run()` just runs it.
///
/// ```text
/// hal(&rig).args(["module", "start", &web]).code(0);
/// ```
pub(crate) fn hal(rig: &Rig) -> Hal {
    Hal {
        cmd: rig.cmd(&[]),
        shown: vec!["hal".to_string()],
        limit: LIMIT,
    }
}

/// One hal command line being put together.
#[derive(Debug)]
pub(crate) struct Hal {
    cmd: Command,
    shown: Vec<String>,
    limit: Duration,
}

impl Hal {
    pub(crate) fn args<const N: usize>(mut self, args: [&str; N]) -> Hal {
        for a in args {
            self = self.arg(a);
        }
        self
    }

    pub(crate) fn arg(mut self, arg: impl AsRef<OsStr>) -> Hal {
        self.shown.push(arg.as_ref().to_string_lossy().into_owned());
        self.cmd.arg(arg);
        self
    }

    pub(crate) fn env(mut self, key: &str, value: impl AsRef<OsStr>) -> Hal {
        self.cmd.env(key, value);
        self
    }

    pub(crate) fn env_remove(mut self, key: &str) -> Hal {
        self.cmd.env_remove(key);
        self
    }

    /// Fails the test if hal has not finished within `limit` (default 180 s).
    pub(crate) fn within(mut self, limit: Duration) -> Hal {
        self.limit = limit;
        self
    }

    /// Runs hal to completion, whatever its exit code.
    pub(crate) fn run(self) -> Run {
        let mut run = run_with_timeout(self.cmd, self.limit);
        run.line = self.shown.join(" ");
        run
    }

    /// Runs hal and asserts its exit code, printing its output if it differs.
    #[track_caller]
    pub(crate) fn code(self, want: i32) -> Run {
        let run = self.run();
        run.expect(want);
        run
    }

    /// Starts hal in the background, its stdout and stderr piped.
    pub(crate) fn spawn(mut self) -> Child {
        self.cmd.spawn().expect("spawn hal")
    }
}

/// What a finished run left.
#[derive(Debug)]
pub(crate) struct Run {
    /// The command line, for messages.
    pub line: String,
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub took: Duration,
}

impl Run {
    pub(crate) fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not one JSON document ({e}): {self}"))
    }

    #[track_caller]
    pub(crate) fn expect(&self, code: i32) -> &Run {
        assert_eq!(
            self.code,
            Some(code),
            "exit code {:?}, wanted {code}: {self}",
            self.code
        );
        self
    }

    /// The state of module `name` in a status document.
    pub(crate) fn state_of(&self, name: &str) -> String {
        let doc = self.json();
        doc["modules"]
            .as_array()
            .unwrap_or_else(|| panic!("no modules array: {self}"))
            .iter()
            .find(|m| m["name"] == name)
            .unwrap_or_else(|| panic!("{name} not in {doc}"))["state"]
            .as_str()
            .unwrap()
            .to_string()
    }
}

impl std::fmt::Display for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "`{}` exited {:?} after {:?}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.line, self.code, self.took, self.stdout, self.stderr
        )
    }
}

/// Runs `cmd` to completion (failing the test past `limit`).
pub(crate) fn run_with_timeout(mut cmd: Command, limit: Duration) -> Run {
    let line = format!("{cmd:?}");
    let began = Instant::now();
    let mut child = cmd.spawn().expect("spawn");
    let out = wait_child(&mut child, limit);
    Run {
        line,
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        took: began.elapsed(),
    }
}

/// Waits for a child, killing it (and failing the test) past `limit`.
pub(crate) fn wait_child(child: &mut Child, limit: Duration) -> Output {
    let mut stdout = child.stdout.take();
    let mut stderr = child.stderr.take();
    let t_out = std::thread::spawn(move || {
        let mut b = Vec::new();
        if let Some(s) = stdout.as_mut() {
            let _ = s.read_to_end(&mut b);
        }
        b
    });
    let t_err = std::thread::spawn(move || {
        let mut b = Vec::new();
        if let Some(s) = stderr.as_mut() {
            let _ = s.read_to_end(&mut b);
        }
        b
    });
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("did not finish within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Output {
        status,
        stdout: t_out.join().unwrap(),
        stderr: t_err.join().unwrap(),
    }
}

/// Reads `child`'s stdout until a line matching `pred` comes, and returns it
/// (failing the test if none comes within `limit`); the rest of its stdout is
/// read and dropped, so a later [`wait_child`] sees none of it.
#[track_caller]
pub(crate) fn await_line(
    child: &mut Child,
    limit: Duration,
    pred: impl Fn(&str) -> bool,
) -> String {
    Lines::of(child).expect(limit, pred)
}

/// A child's stdout read line by line on a thread of its own, for a test
/// that waits for several lines in turn ([`await_line`] waits for one). What
/// comes after the `Lines` is dropped is read and dropped.
pub(crate) struct Lines {
    rx: std::sync::mpsc::Receiver<String>,
    reader: Option<std::thread::JoinHandle<()>>,
    /// Every line taken so far, for a failure's message.
    seen: Vec<String>,
}

impl Lines {
    /// Takes `child`'s stdout (piped) and starts reading it.
    pub(crate) fn of(child: &mut Child) -> Lines {
        let stdout = child.stdout.take().expect("a piped stdout");
        let (tx, rx) = std::sync::mpsc::channel();
        let reader = std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout)
                .lines()
                .map_while(Result::ok)
            {
                // Once the `Lines` is dropped, what follows is read and
                // dropped: closing the pipe would end a follower that ends
                // when its reader goes (`logs -f`), not as the test meant.
                let _ = tx.send(line);
            }
        });
        Lines {
            rx,
            reader: Some(reader),
            seen: Vec::new(),
        }
    }

    /// The next line within `limit`; `None` when none comes in time or the
    /// stream has ended.
    pub(crate) fn next(&mut self, limit: Duration) -> Option<String> {
        let line = self.rx.recv_timeout(limit).ok()?;
        self.seen.push(line.clone());
        Some(line)
    }

    /// The next line matching `pred` within `limit` (the lines before it are
    /// passed over); `None` when none comes.
    pub(crate) fn find(&mut self, limit: Duration, pred: impl Fn(&str) -> bool) -> Option<String> {
        let deadline = Instant::now() + limit;
        while let Some(line) = self.next(deadline.saturating_duration_since(Instant::now())) {
            if pred(&line) {
                return Some(line);
            }
        }
        None
    }

    /// [`Lines::find`], failing the test with the lines seen when none comes.
    #[track_caller]
    pub(crate) fn expect(&mut self, limit: Duration, pred: impl Fn(&str) -> bool) -> String {
        match self.find(limit, pred) {
            Some(line) => line,
            None => panic!(
                "no such line within {limit:?}; stdout so far:\n{}",
                self.seen.join("\n")
            ),
        }
    }

    /// Every line still to come, once the child has ended (its stdout closed).
    pub(crate) fn rest(mut self) -> Vec<String> {
        if let Some(reader) = self.reader.take() {
            reader.join().unwrap();
        }
        self.rx.try_iter().collect()
    }
}

/// Polls `f` until it returns true or `limit` passes.
pub(crate) fn eventually(limit: Duration, mut f: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if f() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    f()
}

/// Waits out a clock the test is about (a restart window, an uptime), never
/// an event: `what` names the clock, for the reader.
pub(crate) fn wait_out(what: &str, d: Duration) {
    eprintln!("waiting out {what} ({}s)", d.as_secs_f64());
    std::thread::sleep(d);
}

/// Writes an executable script `name` into `dir`.
pub(crate) fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, body).unwrap();
    std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    path
}

pub(crate) fn path_str(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// `hal ARGS` in the rig, from a slice (for argument lists built at run time).
pub(crate) fn run(rig: &Rig, args: &[&str]) -> Run {
    args.iter().fold(hal(rig), |h, a| h.arg(a)).run()
}
