//! A stop that something undoes is not a success: after a stop, hal looks again a moment later and names who brought the module back.

use std::time::Duration;

use crate::module::Module;
use crate::module::outcome::Outcome;
use crate::module::status::{Detail, State};
use crate::run::node::Node;

/// How long after a stop hal looks for the module coming back. A watch
/// reacts to a container's death within a fraction of a second and its start
/// is under way well before this.
pub(super) const WINDOW: Duration = Duration::from_secs(3);

/// What could bring a module back, seen as the stop begins.
pub(super) struct Watchers {
    /// Every live `hal watch` on the node but this process: pid and user.
    watches: Vec<(u32, String)>,
}

impl Watchers {
    pub(super) async fn look(_node: &Node, _m: &Module) -> Watchers {
        Watchers {
            watches: live_watches(),
        }
    }
}

/// The stop's outcome, or an error naming who started the module again
/// within [`WINDOW`]. Looks only when a watch runs: nothing else on a node
/// undoes a `compose down` or a unit's stop job by itself.
pub(super) async fn held(
    node: &Node,
    m: &Module,
    service: Option<&str>,
    before: Watchers,
    outcome: Outcome,
) -> anyhow::Result<Outcome> {
    if service.is_some() || before.watches.is_empty() || outcome.state != State::Inactive {
        return Ok(outcome);
    }
    tokio::time::sleep(WINDOW).await;
    let now =
        crate::run::status::collect_status(node, std::slice::from_ref(m), Detail::Settled).await;
    let Some(s) = now.modules.first() else {
        return Ok(outcome);
    };
    if matches!(s.state, State::Inactive | State::Unknown) {
        return Ok(outcome);
    }
    anyhow::bail!(
        "{} is {} again within {}s of the stop: {}",
        m.name,
        s.state.as_str(),
        WINDOW.as_secs(),
        culprit(node, &before.watches)
    )
}

/// Who restarted it: a watch that keeps its desired state elsewhere than
/// this hal (this hal recorded the stop, so a watch sharing its state leaves
/// the module down), or something outside hal.
fn culprit(node: &Node, watches: &[(u32, String)]) -> String {
    let dir = node.store.dir().display();
    match watches {
        [] => "something outside hal started it (not a hal watch)".to_string(),
        ws => {
            let who: Vec<String> = ws
                .iter()
                .map(|(pid, user)| format!("pid {pid}, user {user}"))
                .collect();
            format!(
                "the watch brought it back (hal watch: {}): it keeps its desired state elsewhere than {dir}, where this stop was recorded; run hal with the watch's state (HAL_STATE_DIR), or stop it as the watch's user",
                who.join("; ")
            )
        }
    }
}

/// Live `hal watch` processes, from `/proc`: a process whose program is
/// named `hal` and whose arguments hold `watch`.
fn live_watches() -> Vec<(u32, String)> {
    let me = std::process::id();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for entry in dir.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        if pid == me {
            continue;
        }
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        if is_watch(&cmdline) {
            use std::os::unix::fs::MetadataExt;
            let uid = entry.metadata().map(|m| m.uid()).unwrap_or(u32::MAX);
            out.push((pid, crate::util::sys::name_of_uid(uid)));
        }
    }
    out
}

/// `hal watch …` (argv split by NUL): the program's file name is `hal` and its
/// first argument that is not an option is `watch`.
fn is_watch(cmdline: &[u8]) -> bool {
    let mut args = cmdline.split(|b| *b == 0).filter(|a| !a.is_empty());
    let Some(prog) = args.next() else {
        return false;
    };
    let base = prog.rsplit(|b| *b == b'/').next().unwrap_or(prog);
    base == b"hal" && args.find(|a| !a.starts_with(b"-")) == Some(b"watch".as_slice())
}

#[cfg(test)]
mod tests {
    use super::is_watch;

    #[test]
    fn a_watch_is_hal_with_the_watch_argument() {
        assert!(is_watch(b"/usr/bin/hal\0watch\0"));
        assert!(is_watch(b"hal\0--json\0watch\0"));
        assert!(!is_watch(b"/usr/bin/hal\0stop\0watch\0x"));
        assert!(!is_watch(b"/usr/bin/halt\0watch\0"));
        assert!(!is_watch(b""));
    }
}
