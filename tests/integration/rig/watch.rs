//! A running `hal watch` for the tests of the supervisor (watch.rs, repair.rs):
//! spawned through the rig, its log read line by line, waited on by content.

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::Rig;

/// The line by which watch says the engine's events reach it: from here on, a
/// container event (a kill, a stop) is seen.
pub(crate) const SUBSCRIBED: &str = "docker: subscribed to container events";

/// A running `hal watch`, its stdout read line by line; killed when dropped.
pub(crate) struct Watch {
    child: Child,
    lines: Receiver<String>,
    /// Every line read so far.
    pub seen: Vec<String>,
    stderr: Arc<Mutex<String>>,
}

impl Watch {
    pub(crate) fn spawn(rig: &Rig, args: &[&str]) -> Watch {
        Watch::spawn_every(rig, args, "2s")
    }

    /// `hal [ARGS] watch --interval EVERY --resync EVERY`: with a long one, only engine events can start a repair.
    pub(crate) fn spawn_every(rig: &Rig, args: &[&str], every: &str) -> Watch {
        Watch::spawn_with(rig, args, &["--interval", every, "--resync", every])
    }

    /// `hal watch --interval 2s` writing Prometheus metrics to a textfile
    /// (node_exporter's collector folder), and that file's path.
    pub(crate) fn with_metrics(rig: &Rig) -> (Watch, std::path::PathBuf) {
        let path = rig.dir.join("textfile").join("hal.prom");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let w = Watch::spawn_with(
            rig,
            &[],
            &["--interval", "2s", "--metrics", path.to_str().unwrap()],
        );
        (w, path)
    }

    /// `hal [ARGS] watch [WATCH_ARGS]`, once it says it is watching.
    pub(crate) fn spawn_with(rig: &Rig, args: &[&str], watch_args: &[&str]) -> Watch {
        let mut all = args.to_vec();
        all.push("watch");
        all.extend_from_slice(watch_args);
        let mut w = Watch::start(rig.cmd(&all));
        w.expect(Duration::from_secs(20), |l| {
            l.starts_with("watch: watching")
        });
        w
    }

    /// `hal --json watch --interval 2s --grace GRACE`, once it says it started.
    pub(crate) fn spawn_json(rig: &Rig, grace: &str) -> Watch {
        Watch::spawn_json_with(rig, &["--interval", "2s", "--grace", grace])
    }

    /// `hal --json watch [WATCH_ARGS]`, once it says it started.
    pub(crate) fn spawn_json_with(rig: &Rig, watch_args: &[&str]) -> Watch {
        let mut all = vec!["--json", "watch"];
        all.extend_from_slice(watch_args);
        let mut w = Watch::start(rig.cmd(&all));
        w.expect_json(Duration::from_secs(20), |d| d["event"] == "started");
        w
    }

    /// Spawns `cmd` (stdout and stderr piped) and reads both as they come.
    fn start(mut cmd: Command) -> Watch {
        let mut child = cmd.spawn().expect("spawn hal watch");
        let stdout = child.stdout.take().unwrap();
        let mut stderr = child.stderr.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let err = Arc::new(Mutex::new(String::new()));
        let sink = Arc::clone(&err);
        std::thread::spawn(move || {
            let mut b = String::new();
            let _ = stderr.read_to_string(&mut b);
            sink.lock().unwrap().push_str(&b);
        });
        Watch {
            child,
            lines,
            seen: Vec::new(),
            stderr: err,
        }
    }

    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Waits for a line matching `pred`; fails the test with the whole log if none comes.
    #[track_caller]
    pub(crate) fn expect(&mut self, limit: Duration, pred: impl Fn(&str) -> bool) -> String {
        match self.wait_for(limit, pred) {
            Some(l) => l,
            None => panic!(
                "no such line from hal watch within {limit:?}\n{}",
                self.dump()
            ),
        }
    }

    pub(crate) fn wait_for(
        &mut self,
        limit: Duration,
        pred: impl Fn(&str) -> bool,
    ) -> Option<String> {
        let deadline = Instant::now() + limit;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(l) => {
                    self.seen.push(l.clone());
                    if pred(&l) {
                        return Some(l);
                    }
                }
                Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => return None,
            }
        }
    }

    /// Kills the one container of `canary` (a stack started by hal, which the
    /// watch must repair) and waits until the watch has it back; returns every
    /// line read since the last wait. The watch acts on the engine's events in
    /// order, so by then it has decided on every event from before the kill:
    /// the positive line a test waits for before asserting that something
    /// else was left alone.
    #[track_caller]
    pub(crate) fn canary(&mut self, canary: &str) -> Vec<String> {
        let before = self.seen.len();
        let names = super::containers(canary);
        assert_eq!(names.len(), 1, "canary {canary}: {names:?}");
        super::docker(&["kill", &names[0]]);
        let back = format!("{canary}: restarted, active (");
        self.expect(Duration::from_secs(60), |l| l.starts_with(&back));
        self.seen[before..].to_vec()
    }

    /// Every line that arrives within `d`.
    pub(crate) fn collect_for(&mut self, d: Duration) -> Vec<String> {
        let before = self.seen.len();
        let _ = self.wait_for(d, |_| false);
        self.seen[before..].to_vec()
    }

    pub(crate) fn dump(&self) -> String {
        format!(
            "--- stdout ---\n{}\n--- stderr ---\n{}",
            self.seen.join("\n"),
            self.stderr.lock().unwrap()
        )
    }

    /// Sends `sig` and returns the exit code and how long it took to end.
    pub(crate) fn signal(&mut self, sig: &str) -> (Option<i32>, Duration) {
        let began = Instant::now();
        Command::new("kill")
            .args([&format!("-{sig}"), &self.pid().to_string()])
            .status()
            .unwrap();
        loop {
            if let Some(st) = self.child.try_wait().unwrap() {
                return (st.code(), began.elapsed());
            }
            if began.elapsed() > Duration::from_secs(10) {
                panic!("hal watch did not end on {sig}\n{}", self.dump());
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Waits for a JSON line matching `pred`; every line must be one JSON object.
    #[track_caller]
    pub(crate) fn expect_json(
        &mut self,
        limit: Duration,
        pred: impl Fn(&serde_json::Value) -> bool,
    ) -> serde_json::Value {
        let line = self.expect(limit, |l| {
            let d: serde_json::Value =
                serde_json::from_str(l).unwrap_or_else(|e| panic!("not a JSON line ({e}): {l}"));
            for key in ["time", "module", "event", "action", "reason"] {
                assert!(d.get(key).is_some(), "{key} missing: {l}");
            }
            pred(&d)
        });
        serde_json::from_str(&line).unwrap()
    }

    /// utime + stime of the process, in clock ticks.
    pub(crate) fn cpu_ticks(&self) -> u64 {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.pid())).unwrap();
        // Fields after the `(comm)`; utime and stime are fields 14 and 15.
        let rest = &stat[stat.rfind(')').unwrap() + 2..];
        let f: Vec<&str> = rest.split_whitespace().collect();
        f[11].parse::<u64>().unwrap() + f[12].parse::<u64>().unwrap()
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The lines of `lines` that start with `MODULE: WHAT`.
pub(crate) fn lines_about<'a>(lines: &'a [String], module: &str, what: &str) -> Vec<&'a String> {
    let prefix = format!("{module}: {what}");
    lines.iter().filter(|l| l.starts_with(&prefix)).collect()
}
