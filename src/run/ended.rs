//! What a verb's end leaves in the module's record, under its lock: a failed start (the module reads `failed` until a start succeeds, a stop or `reset-failed`), a start that cleared it, the services a person stopped.

use crate::error::{Exit, exit_of};
use crate::module::Module;
use crate::module::fix::Fix;
use crate::module::outcome::Outcome;
use crate::module::status::Desired;
use crate::module::target::Target;
use crate::module::warning::Warning;
use crate::run::node::Node;
use crate::state::records::Ended;

use crate::run::steps::Did;
use crate::run::verb::Verb;

/// Who started a module, for its record.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) enum Starter {
    /// A person (`start`, `restart`, `rescue`).
    Person,
    /// The supervisor's restart or repair.
    Supervisor,
}

/// What a verb's end changes in the record, if anything: a stop recorded
/// itself before it let its lock go; an update only once it recreated something.
pub(super) fn of(
    node: &Node,
    t: &Target,
    verb: &Verb,
    result: &anyhow::Result<Outcome>,
    did: &Did,
) -> Option<Ended> {
    let (m, rolled_back) = (&t.module, did.rolled_back);
    let starter = match verb {
        Verb::Stop { .. } | Verb::Plan { .. } => return None,
        Verb::Update { opts } if did.changed => {
            return of_update(node, m, opts.by_supervisor, result, rolled_back);
        }
        Verb::Update { .. } => return None,
        Verb::Start { .. } | Verb::Restart { .. } | Verb::Rescue { .. } => Starter::Person,
        Verb::AutoRestart { .. } | Verb::Repair { .. } => Starter::Supervisor,
    };
    of_start(node, t, starter, result, rolled_back)
}

/// What a start's result changes in the record, if anything (`rolled_back`:
/// new images put back on the previous ones, and whether those came back).
fn of_start(
    node: &Node,
    t: &Target,
    starter: Starter,
    result: &anyhow::Result<Outcome>,
    rolled_back: Option<bool>,
) -> Option<Ended> {
    let (m, service) = (&t.module, t.service.clone());
    let by_supervisor = starter == Starter::Supervisor;
    match result {
        Ok(_) if by_supervisor => Some(Ended::Repaired),
        Ok(_) => Some(Ended::Started(service)),
        // A pulled image that failed its start, rolled back and active again: not failed
        // (status names the rollback from its own record).
        Err(_) if rolled_back == Some(true) => Some(Ended::Repaired),
        // Refused by the start limit, or left alone: nothing was started, nothing failed.
        Err(e) if exit_of(e) == Exit::Refused => None,
        Err(e) if e.chain().any(|c| c.is::<LeftAlone>()) => None,
        // Not this user's to start: nothing was tried.
        Err(e)
            if e.chain().any(|c| {
                matches!(
                    c.downcast_ref::<crate::host::init::InitError>(),
                    Some(crate::host::init::InitError::Permission(_))
                )
            }) =>
        {
            None
        }
        Err(e) => {
            // The supervisor left alone a module a person stopped meanwhile.
            let (state, _) = node.store.read();
            let desired = state.modules.get(&m.name).and_then(|r| r.desired);
            if by_supervisor && desired != Some(Desired::Up) {
                return None;
            }
            let cause = crate::run::report::start_cause(e);
            Some(Ended::StartFailed(service, cause))
        }
    }
}

/// What an update's end leaves in the record: active again (on the new
/// images, or rolled back onto the old ones) clears a failed start; a
/// rollback that did not come back is a failed start.
fn of_update(
    node: &Node,
    m: &Module,
    by_supervisor: bool,
    result: &anyhow::Result<Outcome>,
    rolled_back: Option<bool>,
) -> Option<Ended> {
    match result {
        Ok(_) => Some(Ended::Repaired),
        Err(_) if rolled_back == Some(true) => Some(Ended::Repaired),
        // Refused for its checkpoint: the module runs as it did.
        Err(e)
            if e.chain()
                .any(|c| c.is::<crate::stack::checkpoint::CheckpointRefused>()) =>
        {
            None
        }
        Err(e) => {
            let (state, _) = node.store.read();
            let desired = state.modules.get(&m.name).and_then(|r| r.desired);
            if by_supervisor && desired != Some(Desired::Up) {
                return None;
            }
            Some(Ended::StartFailed(None, crate::run::report::start_cause(e)))
        }
    }
}

/// Records how a verb ended; a record that cannot be written is a warning,
/// never the verb's failure.
pub(super) async fn record(node: &Node, m: &Module, ended: Ended) -> Option<Warning> {
    match node.store.ended(&m.name, ended).await {
        Ok(w) => Warning::of_state(w),
        Err(e) => Some(Warning::OutcomeNotRecorded(Warning::cause(&e))),
    }
}

/// The supervisor's fixes, less those of services a person has stopped
/// since it decided on them (read under the module's lock).
pub(super) fn not_stopped(node: &Node, m: &Module, fixes: &[Fix]) -> anyhow::Result<Vec<Fix>> {
    let (state, _) = node.store.read();
    let stopped = state
        .modules
        .get(&m.name)
        .map(|r| r.stopped.clone())
        .unwrap_or_default();
    let left: Vec<Fix> = fixes
        .iter()
        .filter(|f| !stopped.contains(&f.service))
        .cloned()
        .collect();
    if left.is_empty() {
        return Err(LeftAlone("its services were stopped by request").into());
    }
    Ok(left)
}

/// The supervisor's repair found nothing left to do once it held the lock.
#[derive(Debug)]
pub(super) struct LeftAlone(&'static str);

impl std::fmt::Display for LeftAlone {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "left alone: {}", self.0)
    }
}

impl std::error::Error for LeftAlone {}
