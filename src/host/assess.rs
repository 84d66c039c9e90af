//! A unit's state in the spec's words: `active`, `failed` and the rest, with the one-line reason, and the unit as a row of the status document.

use crate::host::init::{Activity, Load, MainExit, UnitStatus};
use crate::module::run_state::ServiceState;
use crate::module::status::{ServiceStatus, State};
use crate::util::timefmt::Stamp;

/// A unit as one "service" of the status document.
pub(crate) fn service_status(s: &UnitStatus) -> ServiceStatus {
    ServiceStatus {
        name: s.unit.clone(),
        container: None,
        unit: Some(s.unit.clone()),
        state: ServiceState::Unit {
            activity: s.activity.clone(),
            words: s.words.clone(),
        },
        health: None,
        exit_code: s.main_exit.map(|e| match e {
            MainExit::Exited(n) => n,
            // As a shell (and Docker) reports a process killed by a signal.
            MainExit::Signal(n) => 128 + n,
        }),
        restart_count: s.restarts,
        started_at: s.active_since.map(Stamp::whole_second),
        verdict: None,
        why: None,
        stale: None,
        netns_of: None,
    }
}

/// The spec's state of a unit, and why it is not `active`.
pub(crate) fn assess(s: &UnitStatus) -> (State, Option<String>) {
    let u = &s.unit;
    match &s.load {
        Load::NotFound => return (State::Invalid, Some(format!("unit {u} not found"))),
        Load::Masked => return (State::Invalid, Some(format!("unit {u} is masked"))),
        Load::Error(why) => {
            return (
                State::Invalid,
                Some(format!("unit {u} cannot be loaded: {why}")),
            );
        }
        Load::Loaded => {}
    }
    match &s.activity {
        Activity::Active => (State::Active, None),
        Activity::Activating if s.auto_restart => (
            State::Starting,
            Some(format!(
                "{u} restarting after a failure{}{}",
                failure_words(s)
                    .map(|w| format!(" ({w})"))
                    .unwrap_or_default(),
                s.restarts
                    .map(|n| format!(", {n} restarts so far"))
                    .unwrap_or_default()
            )),
        ),
        Activity::Activating | Activity::Reloading => {
            (State::Starting, Some(format!("{u} is {}", s.phrase())))
        }
        Activity::Deactivating | Activity::Inactive => {
            (State::Inactive, Some(format!("{u} is {}", s.phrase())))
        }
        Activity::Failed => (
            State::Failed,
            Some(format!(
                "{u} failed: {}",
                failure_words(s).unwrap_or_else(|| "failed".into())
            )),
        ),
        Activity::Other(_) => (State::Unknown, Some(format!("{u} is {}", s.phrase()))),
    }
}

/// `exit-code, status 3` or `signal, signal 9`: the result and how the main process ended.
fn failure_words(s: &UnitStatus) -> Option<String> {
    let exit = s.main_exit.and_then(|e| match e {
        MainExit::Exited(0) => None,
        MainExit::Exited(n) => Some(format!("status {n}")),
        MainExit::Signal(n) => Some(format!("signal {n}")),
    });
    match (s.result.as_deref(), exit) {
        (Some(r), Some(e)) => Some(format!("{r}, {e}")),
        (Some(r), None) => Some(r.to_string()),
        (None, Some(e)) => Some(e),
        (None, None) => None,
    }
}
