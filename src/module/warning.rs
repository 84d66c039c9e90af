//! What a verb says beside its outcome: typed warnings, made where they happen and worded only by the printer (`output/warnings.rs`).

use std::path::PathBuf;

use crate::module::status::State;

/// One thing a verb says beside its outcome, in the order it happened. A
/// cause is the error's one line, as it was said.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Warning {
    /// hal's state file could not be used and is begun again: the store's
    /// words (which file, why, what it does about it).
    State(String),
    /// How the verb ended could not be written to hal's state.
    OutcomeNotRecorded(String),
    /// An update passed its gate, and that could not be written to hal's state.
    UpdateNotRecorded(String),
    /// The containers a stop or a wait saw could not be recorded for `hal logs`.
    LedgerNotRecorded(String),
    /// A pull failed while the image was present: the cached one runs.
    PullFailed { image: String, cause: String },
    /// The stack's directory is gone: its containers were removed through the engine.
    DirectoryGone(PathBuf),
    /// `compose down` failed (the last line it said): the project was removed
    /// through the engine, its volumes kept.
    DownFellBack(String),
    /// A repair's fix of a container failed (`fix`: what it was, in words):
    /// the service is recreated instead.
    RepairFellBack {
        fix: String,
        cause: String,
        service: String,
    },
    /// An update another hal left unfinished was ended before the verb: how.
    Unfinished(String),
    /// Restarted after these modules: it shares their network namespace or volumes.
    RestartedAfter(Vec<String>),
    /// A namespace dependent restarted with the module: its state, or why it failed.
    RestartedWith {
        module: String,
        // The failure stays a String: like every cause above, it is the error's
        // one line as it was said (`Warning::cause`), and a warning is plain
        // data (Clone, PartialEq) that an `anyhow::Error` cannot be.
        result: Result<State, String>,
    },
    /// A pull brought a digest hal rolled back before: not applied, the
    /// service keeps the image it runs.
    Quarantined {
        service: String,
        digest: String,
        at: crate::util::timefmt::Stamp,
        reason: crate::module::recorded_causes::RollbackCause,
    },
    /// `pin = true`: `update --all` and the watch's rounds leave the module.
    Pinned,
}

impl Warning {
    /// The state store's warning, if it had one.
    pub(crate) fn of_state(w: Option<String>) -> Option<Warning> {
        w.map(Warning::State)
    }

    /// An error's one line, as a warning's cause.
    pub(crate) fn cause(e: &anyhow::Error) -> String {
        crate::error::OneLine(e).to_string()
    }
}
