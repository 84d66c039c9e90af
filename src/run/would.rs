//! Whether a verb changed a module, and what a start or stop would do without doing it (`--dry-run`).

use std::time::Instant;

use crate::module::outcome::{Outcome, Would};
use crate::module::reason::Reasons;
use crate::module::status::State;
use crate::module::target::Target;
use crate::run::node::Node;
use crate::run::report::Report;
use crate::run::verb::Verb;

/// What a start of `t`, found in `state`, would do.
async fn start_would(node: &Node, t: &Target, state: Option<State>) -> Would {
    if state != Some(State::Active) {
        return Would::Start;
    }
    let Some(dir) = t.module.stack_dir() else {
        return Would::None;
    };
    // Files changed since hal last started the stack: compose recreates what they change.
    let now = crate::stack::digest_of_module(dir)
        .await
        .ok()
        .and_then(Result::ok)
        .and_then(|d| d.key);
    let (file, _) = node.store.read();
    let was = file
        .modules
        .get(&t.module.name)
        .and_then(|r| r.digest.clone());
    match (now, was) {
        (Some(now), Some(was)) if now != was => Would::Recreate,
        _ => Would::None,
    }
}

/// What a stop of `t`, found in `state`, would do.
fn stop_would(state: Option<State>) -> Would {
    if state == Some(State::Inactive) {
        Would::None
    } else {
        Would::Stop
    }
}

/// `--dry-run`: a report per target saying what `verb` would do, its state
/// now as the outcome; nothing is touched and nothing is counted.
pub(crate) async fn plan(node: &Node, targets: Vec<Target>, verb: &Verb) -> Vec<Report> {
    let mut out = Vec::with_capacity(targets.len());
    // Their states read at once: one list call for all their stacks.
    // Each report's time counts that read.
    let began = Instant::now();
    let states = crate::run::status::states_now(node, &targets).await;
    let read = began.elapsed();
    for (t, state) in targets.into_iter().zip(states) {
        let began = Instant::now();
        let would = match verb {
            Verb::Stop { .. } => stop_would(Some(state)),
            Verb::Start { .. } => start_would(node, &t, Some(state)).await,
            // Each of these restarts (or recreates) whatever it finds; a new
            // verb must say here what its dry run answers.
            Verb::Restart { .. }
            | Verb::Rescue { .. }
            | Verb::AutoRestart { .. }
            | Verb::Repair { .. } => Would::Restart,
            // `update` has no dry run (`--check` asks the registries): at most it recreates.
            Verb::Update { .. } => Would::Recreate,
        };
        out.push(Report {
            module: t.module,
            service: t.service,
            result: Ok(Outcome {
                state,
                reason: Reasons::none(),
                warnings: Vec::new(),
            }),
            took: read + began.elapsed(),
            changed: false,
            would: Some(would),
            update: None,
            followed: Vec::new(),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stop_of_a_stopped_module_would_do_nothing() {
        assert_eq!(stop_would(Some(State::Inactive)), Would::None);
        assert_eq!(stop_would(Some(State::Failed)), Would::Stop);
        assert_eq!(stop_would(None), Would::Stop);
    }
}
