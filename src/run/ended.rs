//! What a verb's end leaves in the module's record, under its lock: a failed start (the module reads `failed` until a start succeeds, a stop or `reset-failed`), a start that cleared it, the services a person stopped.

use crate::error::{Exit, exit_of};
use crate::module::Module;
use crate::module::outcome::Outcome;
use crate::module::status::Desired;
use crate::run::node::Node;
use crate::stack::Fix;
use crate::state::records::Ended;

/// Who started a module, for its record.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) enum Starter {
    /// A person (`start`, `restart`, `rescue`).
    Person,
    /// The supervisor's restart or repair.
    Supervisor,
}

/// What a start's result changes in the record, if anything.
pub(super) fn of_start(
    node: &Node,
    m: &Module,
    starter: Starter,
    service: Option<&str>,
    result: &anyhow::Result<Outcome>,
) -> Option<Ended> {
    let service = service.map(str::to_string);
    let by_supervisor = starter == Starter::Supervisor;
    match result {
        Ok(_) if by_supervisor => Some(Ended::Repaired),
        Ok(_) => Some(Ended::Started(service)),
        // A pulled image that failed its start, rolled back and active again: not failed
        // (status names the rollback from its own record).
        Err(e) if crate::stack::RolledBack::of(e).is_some_and(|r| r.restored) => {
            Some(Ended::Repaired)
        }
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
            let cause = crate::run::report::cause(e);
            Some(Ended::StartFailed(service, cause))
        }
    }
}

/// Records how a verb ended; a record that cannot be written is a warning,
/// never the verb's failure.
pub(super) async fn record(node: &Node, m: &Module, ended: Ended, warnings: &mut Vec<String>) {
    match node.store.ended(&m.name, ended).await {
        Ok(w) => warnings.extend(w),
        Err(e) => warnings.push(format!(
            "could not record the outcome in hal's state: {}",
            crate::error::OneLine(&e)
        )),
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
