//! `hal status` of the whole node: the modules' rows, and the node's state (`systemctl is-system-running`'s words) under them.

use serde::Serialize;

use crate::module::node_state::{NodeState, NodeSummary};
use crate::module::status::ModuleStatus;
use crate::output::view::{Rows, SCHEMA, Style, View};
use crate::util::timefmt::Stamp;

/// `{"schema", "node", "node_detail", "modules"}`: the status document with the node's state added.
#[derive(Serialize)]
pub(crate) struct NodeStatusView<'a> {
    schema: u32,
    /// `starting`, `running` or `degraded`.
    node: NodeState,
    node_detail: Detail<'a>,
    modules: &'a [ModuleStatus],
    #[serde(skip)]
    summary: &'a NodeSummary,
}

/// What the node's state rests on.
#[derive(Serialize)]
struct Detail<'a> {
    /// When the node last came up: the host's boot or the engine's start, whichever is later (RFC 3339), or null.
    #[serde(with = "crate::util::stored::rfc3339::option")]
    up_since: Option<Stamp>,
    /// While `starting`: when the last module's window ends (RFC 3339), else null.
    #[serde(with = "crate::util::stored::rfc3339::option")]
    until: Option<Stamp>,
    /// How many modules are wanted up.
    wanted_up: usize,
    /// Those of them not active.
    not_active: &'a [String],
}

impl<'a> NodeStatusView<'a> {
    pub(crate) fn new(modules: &'a [ModuleStatus], node: &'a NodeSummary) -> NodeStatusView<'a> {
        NodeStatusView {
            schema: SCHEMA,
            node: node.state,
            node_detail: Detail {
                up_since: node.up_since,
                until: node.until,
                wanted_up: node.wanted,
                not_active: &node.not_active,
            },
            modules,
            summary: node,
        }
    }
}

impl View for NodeStatusView<'_> {
    fn human(&self, style: &Style) -> String {
        if style.quiet {
            return String::new();
        }
        let mut text = ModuleStatus::table(self.modules, style);
        text.push('\n');
        text.push_str(&self.summary.line());
        text.push('\n');
        text
    }
}
