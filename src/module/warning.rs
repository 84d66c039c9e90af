//! What a verb says beside its outcome: typed warnings, made where they happen and worded only by the printer (`output/warnings.rs`).

use crate::module::status::State;

/// One thing a verb says beside its outcome, in the order it happened.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Warning {
    /// hal's state file could not be used and is begun again: the store's
    /// words (which file, why, what it does about it).
    State(String),
    /// How the verb ended could not be written to hal's state (the cause, one line).
    NotRecorded(String),
    /// Restarted after these modules: it shares their network namespace or volumes.
    RestartedAfter(Vec<String>),
    /// A namespace dependent restarted with the module: its state, or why
    /// it failed (one line).
    RestartedWith {
        module: String,
        result: Result<State, String>,
    },
    /// Said by the backend in its own words: a pull that failed over a
    /// present image, a stop or a repair that fell back, a ledger write that
    /// failed.
    Said(String),
}

impl Warning {
    /// The state store's warning, if it had one.
    pub(crate) fn of_state(w: Option<String>) -> Option<Warning> {
        w.map(Warning::State)
    }

    /// The backend's words, each a [`Warning::Said`].
    pub(crate) fn said(words: Vec<String>) -> Vec<Warning> {
        words.into_iter().map(Warning::Said).collect()
    }
}
