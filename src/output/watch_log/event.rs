//! What the supervisor's log says: one variant per event, in the enum of its group (one group, one table in the view: `view.rs`, `updates.rs`), with its typed fields.

use crate::module::fix::Fix;
use crate::module::reason::{Reason, Reasons};
use crate::module::run_state::ServiceState;
use crate::module::state::State;
use crate::module::warning::Warning;
use std::time::Duration;

use crate::util::timefmt::Stamp;
use crate::util::tz::Zone;

/// One event of `hal watch`, as the watch knows it: a group of events, each
/// with its own table in the view (`view.rs`, `updates.rs`), or one of its own.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum WatchEvent {
    /// The watch's own events and the engine's.
    Watch(WatchOwn),
    /// A repair: the trouble it mends, how it went; waiting instead of repairing.
    Repair(RepairEvent),
    /// A hold: begun, taken up again, ended.
    Hold(HoldEvent),
    /// What a hold's `on_failure` did.
    Hook(HookEvent),
    /// `auto_update`'s schedule, its slots, a round begun or stopped.
    Round(RoundEvent),
    /// One module's scheduled update, and the round's end.
    Update(UpdateEvent),
    /// The config file changed and was read again: every key counts from now on.
    ConfigRead,
    /// The dependencies between modules were read again and differ: how many edges now.
    DependenciesChanged { edges: usize },
    /// hal's state cannot be written (why): repairs go on, counted in memory.
    StateUnwritable { why: String },
    /// hal's state can be written again: what was kept in memory is written.
    StateWritable,
}

/// The watch's own events and the engine's.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum WatchOwn {
    /// The watch began: what it watches and how often it looks.
    Started {
        modules: usize,
        stacks: usize,
        hosts: usize,
        grace: Duration,
        interval: Duration,
        resync: Duration,
    },
    /// Modules were added or went away (names sorted).
    ModulesChanged {
        added: Vec<String>,
        gone: Vec<String>,
    },
    /// Something the watch cannot do or read (of a module, or of the watch).
    Problem { module: Option<String>, why: String },
    /// The watch ends.
    Stopped { why: String },
    /// The engine answers (`again`: after it was lost); every stack is looked at.
    EngineUp {
        engine: String,
        endpoint: String,
        again: bool,
    },
    /// The event subscription is sent: no event after this line is missed.
    Subscribed { engine: String },
    /// The engine went away (`what`: `not reachable`, `lost connection`); tried again in `retry_in`.
    EngineLost {
        engine: String,
        what: String,
        why: String,
        retry_in: Duration,
    },
    /// An event could not be read (the engine is still there).
    EventUnreadable { engine: String, why: String },
}

impl From<WatchOwn> for WatchEvent {
    fn from(e: WatchOwn) -> WatchEvent {
        WatchEvent::Watch(e)
    }
}

/// A repair: the trouble it mends, how it went; waiting instead of repairing.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum RepairEvent {
    /// A repair begins.
    Trouble {
        module: String,
        reason: Cause,
        /// After a hold.
        retry: bool,
        plan: Plan,
    },
    /// A repair made the module active.
    Restarted {
        module: String,
        /// What was repaired: containers, or the whole module.
        containers: bool,
        took: Duration,
        /// What was done: the containers' fixes, or the whole module.
        what: Repaired,
        warnings: Vec<Warning>,
    },
    /// A repair did not make the module active.
    RepairFailed {
        module: String,
        how: Failure,
        error: Cause,
        took: Duration,
        /// While a hold goes on: when the next try may come.
        next_try: Option<Stamp>,
    },
    /// Waiting on a requirement that is not active.
    Waiting { module: String, reason: Cause },
}

impl From<RepairEvent> for WatchEvent {
    fn from(e: RepairEvent) -> WatchEvent {
        WatchEvent::Repair(e)
    }
}

/// A hold: begun, taken up again, ended.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum HoldEvent {
    /// A hold began.
    Held {
        module: String,
        refusal: Cause,
        on_failure: OnFailure,
    },
    /// A hold kept in hal's state, taken up again.
    StillHeld {
        module: String,
        since: Stamp,
        until: Stamp,
        reason: Cause,
        /// `on_failure` already ran for it.
        notified: bool,
    },
    /// A hold ended.
    Released { module: String, why: Release },
}

impl From<HoldEvent> for WatchEvent {
    fn from(e: HoldEvent) -> WatchEvent {
        WatchEvent::Hold(e)
    }
}

/// What a hold's `on_failure` did.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum HookEvent {
    /// `on_failure` is not run (the config may not be trusted).
    Refused { module: String, why: String },
    /// A line `on_failure` printed.
    Output { module: String, line: String },
    /// `on_failure` ended (`how`: `exited 0`, `was killed`…).
    Ran {
        module: String,
        how: String,
        ok: bool,
        took: Duration,
    },
    /// `on_failure` could not be run.
    Failed { module: String, why: String },
}

impl From<HookEvent> for WatchEvent {
    fn from(e: HookEvent) -> WatchEvent {
        WatchEvent::Hook(e)
    }
}

/// `auto_update`'s schedule, its slots, a round begun or stopped.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum RoundEvent {
    /// The schedule of `auto_update`, and its next slot.
    UpdateSchedule { schedule: String, next: LocalAt },
    /// A slot came while the round before still runs; the next slot, if any.
    SlotSkipped {
        slot: LocalAt,
        next: Option<LocalAt>,
    },
    /// A slot found too late (the machine slept).
    SlotMissed {
        slot: LocalAt,
        /// How late it was found, to the second.
        late: Duration,
        next: Option<LocalAt>,
    },
    /// A round begins: the modules it updates, in order.
    UpdateDue { modules: Vec<String> },
    /// A round stops after too many failures: the modules left.
    UpdateStopped { failed: usize, left: Vec<String> },
}

impl From<RoundEvent> for WatchEvent {
    fn from(e: RoundEvent) -> WatchEvent {
        WatchEvent::Round(e)
    }
}

/// One module's scheduled update, and the round's end.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum UpdateEvent {
    /// A module of the round is passed over before its update.
    UpdatePassed { module: String, why: String },
    /// A module's scheduled update begins.
    Updating { module: String },
    /// A module's scheduled update ended.
    Updated {
        module: String,
        took: Duration,
        rolled_back: bool,
        end: UpdateEnd,
    },
    /// A round ended; the next slot, if any.
    UpdateDone {
        updated: usize,
        up_to_date: usize,
        failed: usize,
        skipped: usize,
        next: Option<LocalAt>,
    },
}

impl From<UpdateEvent> for WatchEvent {
    fn from(e: UpdateEvent) -> WatchEvent {
        WatchEvent::Update(e)
    }
}

/// A slot of the update schedule, and the schedule's zone it is said in.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct LocalAt {
    pub at: Stamp,
    pub zone: Zone,
}

/// What a repair does.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Plan {
    /// Restart the whole module.
    Module,
    /// Recreate the whole module, and why.
    Recreate { why: Escalation },
    /// Repair these containers, each with its fix (the first one's is the log's `action`).
    Containers { fixes: Vec<Fix> },
}

/// Why a repair takes the whole module although containers failed: their repair did not hold.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Escalation {
    /// The repair of its containers failed.
    RepairFailed,
    /// A service failed again `after` its repair (`whole`: after the module was recreated).
    FailedAgain {
        service: String,
        after: Duration,
        whole: bool,
    },
}

/// How a repair failed.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Failure {
    /// The runner refused it (start limit, lock).
    Refused,
    /// A retry after a hold failed.
    Retry,
    Restart,
}

/// Whether a hold's `on_failure` runs.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum OnFailure {
    /// The module has none.
    None,
    Runs,
    /// It has one, and it is not run.
    Refused,
}

/// Why a hold ended.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Release {
    /// The module waits on a requirement, is active again or no longer wanted up (why).
    Waiting(Cause),
    /// Its start count was reset.
    CountReset,
}

/// How a module's scheduled update ended.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum UpdateEnd {
    /// New images run: each changed service's.
    Updated(Vec<Moved>),
    UpToDate,
    /// Refused (start limit, no longer wanted up): not updated.
    Skipped(String),
    /// Failed, and put back on the images before.
    RolledBack(String),
    Failed(String),
}

/// A service whose image changed: the image ids or digests before and after.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Moved {
    pub service: String,
    pub from: Option<String>,
    pub to: Option<String>,
}

/// Why the watch repairs, holds, waits on or lets go of a module: typed until
/// the log says it (its words: `causes.rs`).
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Cause {
    /// A cause a module's status gives: no containers, services missing, a
    /// stale network namespace, the start limit.
    Status(Reason),
    /// A module's own reasons (it waits on a requirement).
    Reasons(Reasons),
    /// What one container's status says of it (`service web exited with code 1`).
    Container(String),
    /// A service not up, when its status says no more.
    NotUp {
        service: String,
        state: ServiceState,
    },
    /// A unit that failed or is inactive.
    Unit {
        name: String,
        state: ServiceState,
    },
    /// A service unhealthy for longer than the grace (`for_`, to the second).
    Unhealthy {
        service: String,
        for_: Duration,
    },
    /// The first of `of` containers in the same trouble.
    AndMore {
        first: Box<Cause>,
        of: usize,
    },
    /// Its requirement is back, and a container is still in the engine's back-off.
    RequirementBack(Box<Cause>),
    /// A start failed, and the containers run again since.
    RunAgain(Reason),
    /// The trouble, then what stops its repair (the start limit, a refusal).
    Then(Box<Cause>, Box<Cause>),
    /// Waiting on these requirements (when its status gives no reason).
    WaitingOn(Vec<String>),
    /// A restart that left the module in another state than `active`.
    RestartedBut {
        state: State,
        reason: Reasons,
    },
    StoppedByRequest,
    NoLongerWanted,
    ActiveAgain,
    /// Words said elsewhere: a refusal's or an error's text, a hold's reason
    /// kept in hal's state.
    Said(String),
}

/// What a repair that made the module active did.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Repaired {
    /// Its containers: each fix (`started container web-1 again`).
    Containers(Vec<Fix>),
    /// The whole module, recreated: its containers' repair did not hold.
    Recreated,
    /// The whole module, restarted.
    Restarted,
}
