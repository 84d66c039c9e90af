//! Running a module's `on_failure` command: an argv (never a shell), bounded in time and output, only from a config nobody else could write.

use std::process::Stdio;
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncReadExt};

use crate::run::Node;

/// How long `on_failure` may run before it is killed.
pub(super) const TIMEOUT: Duration = Duration::from_secs(60);
/// How much of its output is read, and how many of its lines are logged.
const OUTPUT_BYTES: u64 = 64 * 1024;
const OUTPUT_LINES: usize = 20;
const LINE_CHARS: usize = 300;

/// How a run ended.
pub(super) struct Finished {
    /// `exited with 0`, `killed by signal 9`, `timed out after 1m`.
    pub how: String,
    pub ok: bool,
    pub took: Duration,
    pub output: Vec<String>,
}

/// Why the command could not start.
#[derive(Debug, thiserror::Error)]
pub(super) enum HookError {
    #[error("empty command")]
    Empty,
    #[error("{program}: {why}")]
    Spawn {
        program: String,
        why: std::io::Error,
    },
}

/// The module's `on_failure` argv, if one is configured.
pub(super) fn command_of(node: &Node, module: &str) -> Option<Vec<String>> {
    node.config
        .modules
        .get(module)
        .map(|m| m.on_failure.clone())
        .filter(|argv| !argv.is_empty())
}

/// Why the command must not run, if it must not: the config could have been
/// written by someone other than root or the user running hal.
pub(super) fn refusal(node: &Node) -> Option<String> {
    match &node.config.path {
        Some(p) => crate::util::trust::config_trusted(p)
            .err()
            .map(|e| e.to_string()),
        None => Some("no config file".into()),
    }
}

/// Runs `argv` with `HAL_MODULE` and `HAL_REASON` set; an error means it could not start.
pub(super) async fn run(
    argv: &[String],
    module: &str,
    reason: &str,
) -> Result<Finished, HookError> {
    let Some((program, args)) = argv.split_first() else {
        return Err(HookError::Empty);
    };
    let began = Instant::now();
    let mut child = tokio::process::Command::new(program)
        .args(args)
        .env("HAL_MODULE", module)
        .env("HAL_REASON", reason)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|why| HookError::Spawn {
            program: program.clone(),
            why,
        })?;
    let out = read_capped(child.stdout.take());
    let err = read_capped(child.stderr.take());
    let waited = tokio::time::timeout(TIMEOUT, async {
        let (o, e, status) = tokio::join!(out, err, child.wait());
        (o, e, status)
    })
    .await;
    let took = began.elapsed();
    let Ok((o, e, status)) = waited else {
        // Dropping the wait kills the child (kill_on_drop); reap it.
        let _ = child.kill().await;
        return Ok(Finished {
            how: format!("timed out after {}", crate::util::duration::format(TIMEOUT)),
            ok: false,
            took,
            output: Vec::new(),
        });
    };
    let (how, ok) = match status {
        Ok(st) => match (
            st.code(),
            std::os::unix::process::ExitStatusExt::signal(&st),
        ) {
            (Some(c), _) => (format!("exited with {c}"), c == 0),
            (None, Some(s)) => (format!("killed by signal {s}"), false),
            (None, None) => ("ended".to_string(), false),
        },
        Err(e) => (format!("could not be waited for: {e}"), false),
    };
    let mut output: Vec<String> = [o, e]
        .iter()
        .flat_map(|b| {
            String::from_utf8_lossy(b)
                .lines()
                .map(clip)
                .collect::<Vec<_>>()
        })
        .filter(|l| !l.trim().is_empty())
        .collect();
    if output.len() > OUTPUT_LINES {
        let more = output.len() - OUTPUT_LINES;
        output.truncate(OUTPUT_LINES);
        output.push(format!("({more} more lines not shown)"));
    }
    Ok(Finished {
        how,
        ok,
        took,
        output,
    })
}

async fn read_capped<R: AsyncRead + Unpin>(r: Option<R>) -> Vec<u8> {
    let mut buf = Vec::new();
    if let Some(mut r) = r {
        let _ = (&mut r).take(OUTPUT_BYTES).read_to_end(&mut buf).await;
        // Keep the pipe flowing so a chatty command is not blocked on it.
        let _ = tokio::io::copy(&mut r, &mut tokio::io::sink()).await;
    }
    buf
}

fn clip(line: &str) -> String {
    match line.char_indices().nth(LINE_CHARS) {
        Some((i, _)) => format!("{}…", &line[..i]),
        None => line.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn why_a_command_could_not_start_reads_as_it_did() {
        assert_eq!(HookError::Empty.to_string(), "empty command");
        let spawn = HookError::Spawn {
            program: "/opt/notify".into(),
            why: std::io::Error::from_raw_os_error(2),
        };
        assert_eq!(
            spawn.to_string(),
            "/opt/notify: No such file or directory (os error 2)"
        );
    }
}
