//! `hal status` of the whole node: the modules' rows, and the node's state (`systemctl is-system-running`'s words) under them.

use std::collections::BTreeMap;

use serde::{Serialize, Serializer};

use crate::module::node_state::{NodeState, NodeSummary};
use crate::module::status::ModuleStatus;
use crate::module::update_tally::UpdateTally;
use crate::output::view::{Modules, Rows, SCHEMA, Style, View};
use crate::util::timefmt::Stamp;

/// The answer of `hal status`: the modules' rows, with the node's state when
/// it is about the whole node; in Prometheus text, with what updates left in
/// hal's state too (`updates`: asked only for that format).
pub(crate) struct StatusView<'a> {
    modules: &'a [ModuleStatus],
    node: Option<&'a NodeSummary>,
    updates: &'a dyn Fn() -> BTreeMap<String, UpdateTally>,
}

impl<'a> StatusView<'a> {
    pub(crate) fn new(
        modules: &'a [ModuleStatus],
        node: Option<&'a NodeSummary>,
        updates: &'a dyn Fn() -> BTreeMap<String, UpdateTally>,
    ) -> StatusView<'a> {
        StatusView {
            modules,
            node,
            updates,
        }
    }
}

impl Serialize for StatusView<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.node {
            Some(n) => NodeStatusView::new(self.modules, n).serialize(s),
            None => Modules::new(self.modules).serialize(s),
        }
    }
}

impl View for StatusView<'_> {
    fn human(&self, style: &Style) -> String {
        match self.node {
            Some(n) => NodeStatusView::new(self.modules, n).human(style),
            None => Modules::new(self.modules).human(style),
        }
    }

    fn prometheus(&self) -> Option<String> {
        let updates = (self.updates)();
        Some(crate::output::prometheus::render(
            self.modules,
            &updates,
            None,
            self.node,
        ))
    }
}

/// `{"schema", "node", "node_detail", "modules"}`: the status document with the node's state added.
#[derive(Serialize)]
struct NodeStatusView<'a> {
    schema: u32,
    /// `starting`, `running` or `degraded`.
    node: NodeState,
    node_detail: NodeDetail<'a>,
    modules: &'a [ModuleStatus],
    #[serde(skip)]
    summary: &'a NodeSummary,
}

/// What the node's state rests on.
#[derive(Serialize)]
struct NodeDetail<'a> {
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
    /// Why hal's state cannot be written (a full disk, a read-only mount), or null.
    state_unwritable: Option<&'a str>,
}

impl<'a> NodeStatusView<'a> {
    fn new(modules: &'a [ModuleStatus], node: &'a NodeSummary) -> NodeStatusView<'a> {
        NodeStatusView {
            schema: SCHEMA,
            node: node.state,
            node_detail: NodeDetail {
                up_since: node.up_since,
                until: node.until,
                wanted_up: node.wanted,
                not_active: &node.not_active,
                state_unwritable: node.unwritable.as_deref(),
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
