//! A crash's evidence as data: the exit, time and last lines of a container run hal kept before it removed or recreated the container (`state::last_run` keeps them on disk; `status MODULE` shows them).

use serde::{Deserialize, Serialize};

use crate::module::run_state::Health;
use crate::util::stored;
use crate::util::timefmt::Stamp;

/// One line of a failed run, as the engine gave it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct KeptLine {
    /// Written in RFC 3339 with nanoseconds.
    #[serde(with = "stored::rfc3339_nanos")]
    pub time: Stamp,
    #[serde(default)]
    pub stderr: bool,
    pub message: String,
}

/// A failed run of one container.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Run {
    /// `service`, or `service-N` for a later replica.
    pub service: String,
    pub container: String,
    pub container_id: String,
    pub exit_code: Option<i64>,
    #[serde(default)]
    pub oom_killed: bool,
    #[serde(default)]
    pub unhealthy: bool,
    /// When it ended (the engine's `FinishedAt`), or when hal kept it (to
    /// the second); written as Go prints a time.
    #[serde(with = "stored::rfc3339_trimmed")]
    pub at: Stamp,
    pub lines: Vec<KeptLine>,
}

impl Run {
    /// `exit 137 (OOM)`, `exit 1`, `unhealthy`.
    pub(crate) fn how(&self) -> String {
        let mut words = Vec::new();
        if let Some(c) = self.exit_code.filter(|c| *c != 0 || !self.unhealthy) {
            words.push(format!("exit {c}"));
        }
        if self.oom_killed {
            words.push("(OOM)".into());
        }
        if self.unhealthy {
            words.push(Health::Unhealthy.as_str().into());
        }
        words.join(" ")
    }
}
