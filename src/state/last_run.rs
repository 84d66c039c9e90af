//! A crash's evidence kept before hal removes or recreates the container: per module, each service's last failed run (exit code, time, last lines) in a small file of the state directory.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::{Deserialize, Serialize};

pub(crate) use crate::module::last_run::{KeptLine, Run};

/// The folder of the state directory that holds one file per module.
const DIR: &str = "last-run";
/// Lines kept of a failed run.
pub(crate) const KEEP_LINES: usize = 200;

/// What is kept of a module: the last failed run of each of its services.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct LastRuns {
    pub runs: Vec<Run>,
}

fn path(state_dir: &Path, module: &str) -> PathBuf {
    state_dir.join(DIR).join(format!("{module}.json"))
}

/// What is kept of `module` (nothing when no file, or an unreadable one).
pub(crate) fn read(state_dir: &Path, module: &str) -> LastRuns {
    std::fs::read(path(state_dir, module))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default()
}

/// Keeps `runs` for `module`, each replacing the one kept for its service;
/// written whole to a new file and renamed over the old one.
pub(crate) fn keep(state_dir: &Path, module: &str, runs: Vec<Run>) -> anyhow::Result<()> {
    if runs.is_empty() {
        return Ok(());
    }
    let mut all = read(state_dir, module);
    for r in runs {
        all.runs.retain(|k| k.service != r.service);
        all.runs.push(r);
    }
    all.runs.sort_by(|a, b| a.service.cmp(&b.service));
    let dir = state_dir.join(DIR);
    std::fs::create_dir_all(&dir).with_context(|| format!("create {}", dir.display()))?;
    let target = path(state_dir, module);
    let tmp = dir.join(format!(".{module}.json.tmp.{}", std::process::id()));
    let text = serde_json::to_vec_pretty(&all).context("encode the last run")?;
    let mut f = std::fs::File::create(&tmp).with_context(|| format!("create {}", tmp.display()))?;
    f.write_all(&text)
        .and_then(|()| f.sync_all())
        .with_context(|| format!("write {}", tmp.display()))?;
    std::fs::rename(&tmp, &target).with_context(|| format!("replace {}", target.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(service: &str, code: i64) -> Run {
        Run {
            service: service.into(),
            container: format!("m-{service}-1"),
            container_id: "abc".into(),
            exit_code: Some(code),
            oom_killed: code == 137,
            unhealthy: false,
            at: "2026-01-01T03:12:00Z".into(),
            lines: vec![KeptLine {
                time: "2026-01-01T03:11:59Z".into(),
                stderr: false,
                message: "bye".into(),
            }],
        }
    }

    #[test]
    fn a_service_keeps_its_last_failed_run() {
        let dir = std::env::temp_dir().join(format!("hal-last-run-{}", std::process::id()));
        keep(&dir, "m", vec![run("db", 1), run("web", 2)]).unwrap();
        keep(&dir, "m", vec![run("db", 137)]).unwrap();
        let all = read(&dir, "m");
        assert_eq!(all.runs.len(), 2);
        assert_eq!(all.runs[0].how(), "exit 137 (OOM)");
        assert_eq!(all.runs[1].how(), "exit 2");
        assert!(read(&dir, "other").runs.is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
