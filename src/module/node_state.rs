//! The node as a whole, in `systemctl is-system-running`'s words (`starting`, `running`, `degraded`): a pure rule over the modules' statuses.
//!
//! hal has no daemon that could remember "I am booting": it reads when the node
//! last came up (the host's boot, or its engine's start, whichever is later) and
//! gives each module wanted up that long plus its start timeout to come up. So:
//!
//! - `running`: every module wanted up is `active` (also when none is wanted up);
//! - `starting`: some module wanted up is not active yet, and each such module is
//!   still inside its window (the node came up less than its start timeout ago)
//!   and not `failed` (the contract's "until every module wanted up is active,
//!   failed or past its timeout": a failure, held by `hal watch` or not, ends
//!   the wait; the watch may still bring it back, and the node reads `running` then);
//! - `degraded`: otherwise.
//!
//! Modules nobody asked hal to run (no desired state, or `down`) count for nothing,
//! as a disabled unit counts for nothing in systemd's answer.

use std::time::Duration;

use serde::Serialize;

use crate::module::status::{ModuleStatus, State};
use crate::util::timefmt::Stamp;

/// `systemctl is-system-running`'s three answers that fit a node of modules.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum NodeState {
    Starting,
    Running,
    Degraded,
}

impl NodeState {
    pub(crate) const ALL: [NodeState; 3] =
        [NodeState::Starting, NodeState::Running, NodeState::Degraded];

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            NodeState::Starting => "starting",
            NodeState::Running => crate::module::run_state::RUNNING_WORD,
            NodeState::Degraded => "degraded",
        }
    }
}

/// The node's state and what it rests on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct NodeSummary {
    pub state: NodeState,
    /// When the node last came up (boot or engine start), when hal could tell.
    pub up_since: Option<Stamp>,
    /// While `starting`: when the last window ends (the node is `degraded` after, unless all are active).
    pub until: Option<Stamp>,
    /// Modules wanted up.
    pub wanted: usize,
    /// Of them, those not active.
    pub not_active: Vec<String>,
    /// Why hal's state cannot be written, when it cannot (`hal watch` keeps its counts in memory).
    pub unwritable: Option<String>,
}

/// How long a module may take to come up after the node did: its start timeout.
pub(crate) struct Wanted<'a> {
    pub status: &'a ModuleStatus,
    pub timeout: Duration,
}

/// The node's state from its modules' statuses (each once, whole modules),
/// when it last came up, and the clock.
pub(crate) fn judge(modules: &[Wanted<'_>], up_since: Option<Stamp>, now: Stamp) -> NodeSummary {
    let wanted: Vec<&Wanted<'_>> = modules
        .iter()
        .filter(|w| w.status.wanted_up() && w.status.service.is_none())
        .collect();
    let down: Vec<&Wanted<'_>> = wanted
        .iter()
        .copied()
        .filter(|w| w.status.state != State::Active)
        .collect();
    let window_end = |w: &Wanted<'_>| up_since.map(|t| t.plus(w.timeout));
    let coming = down.iter().filter(|w| {
        w.status.held.is_none()
            && !matches!(
                w.status.state,
                State::Failed | State::Invalid | State::Conflict
            )
            && window_end(w).is_some_and(|end| now < end)
    });
    let until = coming.clone().filter_map(|w| window_end(w)).max();
    let state = if down.is_empty() {
        NodeState::Running
    } else if coming.count() == down.len() {
        NodeState::Starting
    } else {
        NodeState::Degraded
    };
    NodeSummary {
        state,
        up_since,
        until: until.filter(|_| state == NodeState::Starting),
        wanted: wanted.len(),
        not_active: down.iter().map(|w| w.status.name.clone()).collect(),
        unwritable: None,
    }
}

impl NodeSummary {
    /// The footer line of the status table: `node: running (3 of 3 modules wanted up are active)`.
    pub(crate) fn line(&self) -> String {
        let active = self.wanted - self.not_active.len();
        let tail = match self.state {
            NodeState::Running => {
                format!("{active} of {} modules wanted up are active", self.wanted)
            }
            NodeState::Starting => format!(
                "up since {}, {active} of {} modules wanted up are active; waiting for {} until {} UTC",
                self.up_since
                    .map_or_else(String::new, |t| format!("{} UTC", t.clock())),
                self.wanted,
                self.not_active.join(", "),
                self.until.map_or_else(String::new, Stamp::clock),
            ),
            NodeState::Degraded => format!(
                "{active} of {} modules wanted up are active; not active: {}",
                self.wanted,
                self.not_active.join(", ")
            ),
        };
        let state = self
            .unwritable
            .as_ref()
            .map(|why| format!("; hal's state cannot be written: {why}"))
            .unwrap_or_default();
        format!("node: {} ({tail}){state}", self.state.as_str())
    }
}

#[cfg(test)]
mod tests;
