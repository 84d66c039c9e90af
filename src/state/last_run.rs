//! A crash's evidence kept before hal removes or recreates the container: per module, each service's last failed run (exit code, time, last lines) in a small file of the state directory.

use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::{Deserialize, Serialize};

use crate::state::Store;

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
/// written whole through [`Store::replace`] (the state's mode, no symlink followed).
pub(crate) fn keep(store: &Store, module: &str, runs: Vec<Run>) -> anyhow::Result<()> {
    if runs.is_empty() {
        return Ok(());
    }
    let mut all = read(store.dir(), module);
    for r in runs {
        all.runs.retain(|k| k.service != r.service);
        all.runs.push(r);
    }
    all.runs.sort_by(|a, b| a.service.cmp(&b.service));
    store.folder(DIR)?;
    let text = serde_json::to_vec_pretty(&all).context("encode the last run")?;
    store.replace(&format!("{DIR}/{module}.json"), &text)
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
            at: crate::util::timefmt::parse("2026-01-01T03:12:00Z").unwrap(),
            lines: vec![KeptLine {
                time: crate::util::timefmt::parse("2026-01-01T03:11:59Z").unwrap(),
                stderr: false,
                message: "bye".into(),
            }],
        }
    }

    #[test]
    fn a_service_keeps_its_last_failed_run() {
        let dir = std::env::temp_dir().join(format!("hal-last-run-{}", std::process::id()));
        let store = Store::new(dir.clone());
        keep(&store, "m", vec![run("db", 1), run("web", 2)]).unwrap();
        keep(&store, "m", vec![run("db", 137)]).unwrap();
        let all = read(&dir, "m");
        assert_eq!(all.runs.len(), 2);
        assert_eq!(all.runs[0].how(), "exit 137 (OOM)");
        assert_eq!(all.runs[1].how(), "exit 2");
        assert!(read(&dir, "other").runs.is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn kept_runs_are_written_in_the_states_mode_and_never_through_a_symlink() {
        use std::os::unix::fs::MetadataExt;
        let dir = std::env::temp_dir().join(format!("hal-last-run-mode-{}", std::process::id()));
        let store = Store::new(dir.clone());
        // A private state (HAL_STATE_DIR): 0600, whatever the umask.
        keep(&store, "m", vec![run("db", 1)]).unwrap();
        let file = path(&dir, "m");
        assert_eq!(std::fs::metadata(&file).unwrap().mode() & 0o777, 0o600);
        let victim = dir.join("victim");
        std::fs::write(&victim, "mine").unwrap();
        std::fs::remove_file(&file).unwrap();
        std::os::unix::fs::symlink(&victim, &file).unwrap();
        keep(&store, "m", vec![run("web", 2)]).unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "mine");
        assert!(!std::fs::symlink_metadata(&file).unwrap().is_symlink());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_file_kept_before_reads_and_is_written_back_the_same() {
        let text = r#"{"runs":[{"service":"db","container":"m-db-1","container_id":"abc","exit_code":137,"oom_killed":true,"unhealthy":false,"at":"2026-01-01T03:12:00.25Z","lines":[{"time":"2026-01-01T03:11:59.500000000Z","stderr":true,"message":"bye"}]}]}"#;
        let kept: LastRuns = serde_json::from_str(text).unwrap();
        assert_eq!(kept.runs[0].at.rfc3339(), "2026-01-01T03:12:00Z");
        assert_eq!(serde_json::to_string(&kept).unwrap(), text);
    }
}
