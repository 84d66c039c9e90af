//! An update another hal left unfinished (killed, power lost: issue 48), found by the next verb that touches the module (all but stop: `update`, `start`, `rescue`, the watch's), ended before the verb acts, and said in one line.

use crate::error::OneLine;
use crate::module::Module;
use crate::module::progress::Progress;
use crate::module::warning::Warning;
use crate::run::node::Node;
use crate::run::verb::Verb;
use crate::stack::transaction::Unfinished;

/// Ends an unfinished update of `m` (back, or forward past its gate): the
/// line that says so, or the error when the rollback failed.
pub(super) async fn recover(
    node: &Node,
    progress: &dyn Progress,
    m: &Module,
    verb: &Verb,
) -> anyhow::Result<Option<Warning>> {
    if matches!(verb, Verb::Stop { .. }) {
        return Ok(None);
    }
    let Some(stack) = crate::stack::Stack::of(m, None) else {
        return Ok(None);
    };
    let env = node.stack_env(progress);
    Ok(
        match crate::stack::transaction::recover(env, &stack).await? {
            None => None,
            Some(Unfinished::Finished(step)) => Some(Warning::Unfinished(format!(
                "an update hal did not finish (stopped after step {}) had passed its gate: finished it",
                step.as_str()
            ))),
            Some(Unfinished::RolledBack(step, rolled)) => {
                if !rolled.restored {
                    return Err(rolled.error.context(format!(
                        "an update hal did not finish (stopped after step {})",
                        step.as_str()
                    )));
                }
                Some(Warning::Unfinished(format!(
                    "an update hal did not finish (stopped after step {}): {}",
                    step.as_str(),
                    OneLine(&rolled.error)
                )))
            }
        },
    )
}
