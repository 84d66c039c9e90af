//! hal under strace: the file system calls a verb makes, for the tests that count them (what `status` opens and stats).

use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};

use super::Rig;

/// Whether strace runs here.
pub(crate) fn has_strace() -> bool {
    Command::new("strace")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success())
}

impl Rig {
    /// `hal ARGS` under `strace -f -e trace=CALLS`, in the rig's environment:
    /// what hal printed, and strace's lines.
    pub(crate) fn strace(&self, calls: &str, args: &[&str]) -> (Output, String) {
        static RUNS: AtomicUsize = AtomicUsize::new(0);
        let n = RUNS.fetch_add(1, Ordering::Relaxed);
        let log = self.dir.join(format!("strace.{n}.log"));
        let mut c = Command::new("strace");
        c.args(["-f", "-qq", "-e", &format!("trace={calls}"), "-o"])
            .arg(&log)
            .arg(env!("CARGO_BIN_EXE_hal"))
            .args(args);
        for (k, v) in self.cmd(&[]).get_envs() {
            match v {
                Some(v) => c.env(k, v),
                None => c.env_remove(k),
            };
        }
        let out = c.output().unwrap();
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        (out, text)
    }
}
