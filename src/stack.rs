//! The stack backend's face: verbs on stack modules (compose creates and removes containers, the Engine API watches them), and all that the layers above may name of it. Its children (in `stack/`) are private and use each other, never this file (ARCHITECTURE.md, `stack/`).

mod bound;
mod compose_cli;
mod down;
mod env;
mod evidence;
mod forecast;
mod logs;
mod look;
mod one_stack;
mod project;
mod repair;
mod session;
mod start;
mod started;
mod swap;
mod update;

// The verbs.
pub(crate) use down::stop;
pub(crate) use repair::repair;
pub(crate) use start::baseline::{Baseline, record_baseline};
pub(crate) use start::{Launch, Pending, Waited, launch, wait, wait_holding};
pub(crate) use swap::checkpoint;
pub(crate) use swap::rollback::RolledBack;
pub(crate) use update::{check_update, pull_update, recreate_update, transaction};

// What the next start would do, per service (`hal plan`).
pub(crate) use forecast::{Forecast, forecast};

// What a verb works with.
pub(crate) use env::{Env, Stacks};
pub(crate) use one_stack::Stack;
// The deadline a wait and the update's gate share.
pub(crate) use bound::Bound;

// What the containers say, and whether a project is the module.
pub(crate) use look::identity::Snapshot;
pub(crate) use look::seen::{seen_by_module, seen_in_event};
pub(crate) use look::services::check_service;
pub(crate) use started::engine_started;

#[cfg(test)]
pub(crate) use look::assess::{ContainerFacts, LOOP_RESTARTS};

/// Is a project the module (its containers' `working_dir`): the runner's
/// refusal, `status`'s reason and doctor's `identity` check.
pub(crate) mod identity {
    pub(crate) use crate::stack::look::identity::{
        conflict_reason, orphan_reason, other_dir, refuse_start,
    };
}

/// Do a stack's lines outlive its containers: doctor's and adopt's words.
pub(crate) mod history {
    pub(crate) use crate::stack::logs::history::unlabelled_advice;
}

// A stack's status, as `status` reads it (a host's is `host::node_status`).
pub(crate) use look::status::{StackStatuses, read_status, read_status_listed};

// What compose reads, and doctor's questions to the compose CLI (`Stacks::compose_found`,
// `check_compose_config`): the handle that runs it stays below this face (the COMPOSE rule).
pub(crate) use compose_cli::{ComposeFound, ConfigVerdict};
pub(crate) use project::inputs::ties::{kept_ties_of, ties_of};
pub(crate) use project::known::Models;
pub(crate) use project::project_name::{name_mismatch, name_mismatches};

// Logs and history.
pub(crate) use logs::log_plan::LogPlan;

// The engine as the layers above ask it: a connected session (`Stacks::session`)
// whose methods are the probe, the events, the log plan and lines, history,
// identity and the running projects. The adapter's handle, its errors and its
// streams stay below this face (the architecture test's ENGINE rule).
pub(crate) use session::{Events, Missed, Session};

// The Docker adapter's plain data as the layers above see it, re-exported, not
// wrapped: the watch's events and the labels' identity, the pools and networks
// `doctor` weighs. Each is fields and pure functions, no handle (nothing in them
// reaches the engine or runs a program), so a face-level copy would only repeat
// them; nothing outside stack/ and state/ names `docker::` (ARCHITECTURE.md).
pub(crate) use crate::docker::engine::{AddressPool, EngineEvent, EventAction, NetworkFacts};
pub(crate) use crate::docker::labels::Identity;
