//! The spec's module states, in their published words.

use serde::Serialize;

/// The spec's module states.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum State {
    Active,
    Starting,
    Degraded,
    Inactive,
    Failed,
    /// A project with the module's name runs from another directory: not this module.
    Conflict,
    /// Containers of a module hal ran whose directory is gone or renamed.
    Orphaned,
    Invalid,
    Unknown,
}

impl State {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            State::Active => "active",
            State::Starting => "starting",
            State::Degraded => "degraded",
            State::Inactive => "inactive",
            State::Failed => "failed",
            State::Conflict => "conflict",
            State::Orphaned => "orphaned",
            State::Invalid => "invalid",
            State::Unknown => "unknown",
        }
    }
}
