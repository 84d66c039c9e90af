//! The node's state for `status` and the metrics: its modules' statuses, when the node last came up (boot or engine start), and each module's start timeout.

use crate::module::node_state::{NodeSummary, Wanted, judge};
use crate::module::status::ModuleStatus;
use crate::run::node::Node;
use crate::util::timefmt::Stamp;

/// The node's state from the statuses of all its modules.
pub(crate) fn node_summary(node: &Node, statuses: &[ModuleStatus]) -> NodeSummary {
    let wanted: Vec<Wanted<'_>> = statuses
        .iter()
        .map(|status| Wanted {
            status,
            timeout: node.config.settings(&status.name).timeout,
        })
        .collect();
    judge(&wanted, up_since(node), Stamp::now())
}

/// When the node last came up: the host's boot, or the engine's start when it is later.
pub(crate) fn up_since(node: &Node) -> Option<Stamp> {
    let engine = node
        .inventory
        .modules
        .iter()
        .any(crate::module::Module::is_stack)
        .then(|| node.stacks.endpoint().ok())
        .flatten()
        .and_then(crate::stack::engine_started);
    crate::util::boot::boot_time().max(engine)
}
