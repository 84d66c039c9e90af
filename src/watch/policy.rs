//! What `hal watch` does about what it sees: statuses, remembered times and the clock in, actions out (pure, no I/O).
//!
//! The rules, which the README repeats:
//!
//! - Only a module whose desired state is `up` is ever touched: never one a
//!   person stopped (`down`), and never one hal never started (no desired
//!   state at all: hal has no business running what nobody asked it to run).
//! - A stack is repaired when it has no containers, when a container exited or
//!   is dead (Docker's restart policy is not bringing it back: the engine marks
//!   a container `restarting` before it reports the exit), when Docker has
//!   restarted a container `LOOP_RESTARTS` times and it is still crashing
//!   (all three: the container's [`Verdict`], the rule `status` uses too),
//!   or when a container stays `unhealthy` longer than the grace period
//!   (Docker never restarts an unhealthy container).
//! - The repair is the smallest that works ([`RepairScope`]): the failed containers
//!   alone (started again, restarted, or recreated when dead), the whole module
//!   only when it has no containers, or when the last small repair did not hold
//!   (it failed, or the same container failed again within the start-limit window).
//! - A host module is restarted when its unit is `failed` or `inactive`.
//! - A module whose start limit is hit (or whose restart the limit refuses)
//!   is *held*, not restarted: `on_failure` runs once per hold, and the module is tried again once the limit's window
//!   has passed, with a pause between tries that doubles up to [`BACKOFF_MAX`].
//!   A hold ends when the module is seen `active`, or is no longer wanted up.
//! - A module that is not active while a module it requires is not started
//!   either is *waiting* (`waiting.rs`): not repaired, not held (a hold is let
//!   go), no `on_failure`; the requirement's own episode is the one that alarms.
//!   Started is active, or running with only the settle second to go (a
//!   healthcheck must say `healthy` first, except for a network-namespace tie):
//!   `ModuleStatus::started`. Once a requirement is started again its waiting
//!   dependents are looked at at once, with no pause or back-off in the way; if
//!   it fails after all, they wait again, uncharged.
//! - After a restart that failed (without hitting the limit), the next one
//!   waits [`PAUSE_FIRST`](pause::PAUSE_FIRST), doubling up to
//!   [`PAUSE_MAX`](pause::PAUSE_MAX) while they keep failing. While another
//!   module waits on it, the pause is never longer than
//!   [`PAUSE_WAITED_ON`](pause::PAUSE_WAITED_ON) (2s): a requirement is back
//!   within seconds of its cause being fixed, and its dependents right after.
//!   Its start limit still bounds how often it is tried, and its hold is the
//!   alarm. Each try restarts or recreates its containers; Docker's own restart
//!   back-off (up to a minute by then) does not hold that up, because the
//!   engine starts a container it is backing off at once when asked to restart
//!   it (`docker start` of one does nothing).
//! - A module whose last start failed, but whose containers all run again
//!   (Docker's restart policy brought them back after a repair gave up), has
//!   its running containers restarted: status calls it failed until a start
//!   succeeds, and nothing else would end that.
//! - A repair of a module that requires or comes after one being repaired
//!   waits until that repair has ended (`repair_order.rs`), settle second included:
//!   a watch repair always follows a failure, and a requirement started again
//!   after one may crash at once, as one Docker restarted may (which
//!   `ModuleStatus::started` holds back for the same reason). A dependent
//!   repaired into it would be charged.

mod heard;
mod hold;
mod pause;
mod trouble;

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use crate::module::KindTag;
use crate::module::fix::Fix;
use crate::module::reason::Reason;
#[cfg(doc)]
use crate::module::status::Verdict;
use crate::module::status::{Desired, ModuleStatus, State};
use crate::output::watch_log::{Cause, Escalation};
use crate::util::timefmt::Stamp;
pub(crate) use heard::{Attempt, Seen};
pub(crate) use hold::Hold;
pub(crate) use trouble::RepairScope;
use trouble::{Trouble, is_unhealthy, key_of};

/// How soon after its repair a container failing again escalates to the
/// module, when the module's start-limit window cannot be read.
pub(crate) const ESCALATE_WINDOW: Duration = Duration::from_secs(120);

/// Whether a module waits on a requirement.
pub(crate) enum WaitsOn {
    /// It waits: these actions (perhaps none), and nothing else.
    Yes(Vec<Action>),
    /// It waited until now: repair it at once, Docker's restart back-off or not.
    Unblocked,
    No,
}

/// What to do about a module.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Act {
    /// Restart it (counts against its start limit).
    Restart,
    /// Try a held module again: its window has passed.
    Retry,
    /// Hold it without trying: its start limit is already hit (run `on_failure`).
    Hold,
    /// Forget the hold of a module: it is active again, no longer wanted up, or waiting.
    Release,
    /// It waits on a requirement that is not active: no repair, no hold, no `on_failure`.
    Wait,
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Action {
    pub module: String,
    pub act: Act,
    /// Why, for the log: `service web unhealthy for 60s`.
    pub reason: Cause,
    /// What a restart or retry touches.
    pub scope: RepairScope,
}

/// The last repair of a module: when, and which containers (or the whole module).
#[derive(Clone, Debug)]
struct Fixed {
    at: Stamp,
    whole: bool,
    containers: BTreeSet<String>,
}

/// The supervisor's memory: when containers turned unhealthy, and which modules are held.
#[derive(Clone, Debug)]
pub(crate) struct Supervisor {
    grace: Duration,
    /// (module, container) → since when it has been unhealthy.
    unhealthy: BTreeMap<(String, String), Stamp>,
    pub(super) holds: BTreeMap<String, Hold>,
    /// Modules whose last restart failed: (when, the pause after it: [`Supervisor::pause_end`]).
    pub(super) paused: BTreeMap<String, (Stamp, Duration)>,
    /// The last repair of each module.
    fixed: BTreeMap<String, Fixed>,
    /// Modules whose containers' repair failed: the next repair is the module's (why).
    escalate: BTreeMap<String, Escalation>,
    /// Modules waiting on requirements that are not active (`waiting.rs`): which.
    pub(super) waiting: BTreeMap<String, Vec<String>>,
    /// When [`Supervisor::due`] last handed out what was due: a deadline
    /// after it and before the next call has not been handed out yet.
    checked: Option<Stamp>,
}

impl Supervisor {
    pub(crate) fn new(grace: Duration) -> Supervisor {
        Supervisor {
            grace,
            unhealthy: BTreeMap::new(),
            holds: BTreeMap::new(),
            paused: BTreeMap::new(),
            fixed: BTreeMap::new(),
            escalate: BTreeMap::new(),
            waiting: BTreeMap::new(),
            checked: None,
        }
    }

    pub(crate) fn hold(&self, module: &str) -> Option<&Hold> {
        self.holds.get(module)
    }

    /// Remembers an engine event: the earliest time a container was seen unhealthy.
    pub(crate) fn saw(&mut self, ev: Seen) {
        let key = (ev.module, ev.container);
        if ev.unhealthy {
            let t = self.unhealthy.entry(key).or_insert(ev.at);
            *t = (*t).min(ev.at);
        } else {
            self.unhealthy.remove(&key);
        }
    }

    /// What to do about each given module now. Modules not given keep their memory.
    pub(crate) fn decide(&mut self, statuses: &[ModuleStatus], now: Stamp) -> Vec<Action> {
        let mut out = Vec::new();
        for s in statuses {
            if s.wanted_up() {
                self.decide_one(s, now, &mut out);
            } else {
                out.extend(self.let_go(s));
            }
        }
        out
    }

    /// A module no longer wanted up: forgotten, and its hold let go.
    fn let_go(&mut self, s: &ModuleStatus) -> Option<Action> {
        self.forget_unhealthy(&s.name);
        self.paused.remove(&s.name);
        self.fixed.remove(&s.name);
        self.escalate.remove(&s.name);
        self.waiting.remove(&s.name);
        self.holds.remove(&s.name)?;
        let why = match s.desired {
            Some(Desired::Down) => Cause::StoppedByRequest,
            _ => Cause::NoLongerWanted,
        };
        Some(Action {
            module: s.name.clone(),
            act: Act::Release,
            reason: why,
            scope: RepairScope::Module,
        })
    }

    /// What to do about one module wanted up.
    fn decide_one(&mut self, s: &ModuleStatus, now: Stamp, out: &mut Vec<Action>) {
        let action = |act, reason: Cause| Action {
            module: s.name.clone(),
            act,
            reason,
            scope: RepairScope::Module,
        };
        // Not this module's to repair: another directory's project, or
        // one whose directory is gone (`hal stop` is the person's call).
        if matches!(
            s.state,
            State::Unknown | State::Invalid | State::Conflict | State::Orphaned
        ) {
            return;
        }
        let unblocked = match self.wait(s) {
            WaitsOn::Yes(acts) => {
                out.extend(acts);
                return;
            }
            WaitsOn::Unblocked => true,
            WaitsOn::No => false,
        };
        self.note_unhealthy(s, now);
        if s.state == State::Active {
            self.paused.remove(&s.name);
        }
        let mut trouble = self.trouble(s, now);
        if unblocked && trouble.is_none() {
            // Docker may be in its restart back-off: not waited out.
            trouble = trouble::restarting(s);
        }
        if let Some(hold) = self.holds.get_mut(&s.name) {
            hold.free_at = s.limit.free_at;
            if s.state == State::Active {
                self.holds.remove(&s.name);
                out.push(action(Act::Release, Cause::ActiveAgain));
            } else if let Some(t) = trouble
                && now >= hold.due_at()
            {
                let scope = self.scope(s, t.fixes, now);
                out.push(Action {
                    scope,
                    ..action(Act::Retry, t.why)
                });
            }
            return;
        }
        let Some(Trouble { why, fixes }) = trouble else {
            return;
        };
        let limited = s.limit.free_at.filter(|free| *free > now);
        match limited {
            // A restart would only be refused: hold now, and try when the window has passed.
            Some(free) => {
                self.begin_hold(&s.name, now, Some(free), why.clone());
                let limit = Reason::StartLimit {
                    used: s.limit.used,
                    interval: s.limit.interval,
                    free_at: free,
                };
                let held = Cause::Then(Box::new(why), Box::new(Cause::Status(limit)));
                out.push(action(Act::Hold, held));
            }
            None if self.pause_end(&s.name).is_some_and(|t| now < t) => {}
            None => {
                let scope = self.scope(s, fixes, now);
                out.push(Action {
                    scope,
                    ..action(Act::Restart, why)
                });
            }
        }
    }

    /// A repair of `a`'s begins now: remembered, so that the same container
    /// failing again within the window escalates to the module.
    pub(crate) fn began(&mut self, a: &Action, now: Stamp) {
        let (whole, containers) = match &a.scope {
            RepairScope::Containers(fixes) => {
                (false, fixes.iter().map(|f| f.container.clone()).collect())
            }
            RepairScope::Module | RepairScope::Escalated(_) => (true, BTreeSet::new()),
        };
        self.fixed.insert(
            a.module.clone(),
            Fixed {
                at: now,
                whole,
                containers,
            },
        );
    }

    /// Holds the module from now.
    fn begin_hold(&mut self, module: &str, now: Stamp, free_at: Option<Stamp>, why: Cause) {
        self.paused.remove(module);
        self.holds
            .insert(module.to_string(), Hold::new(now, free_at, why));
    }

    /// A hold remembered from before (hal's state): held again, without a new `on_failure`.
    pub(crate) fn restore(&mut self, module: &str, hold: Hold) {
        self.holds.insert(module.to_string(), hold);
    }

    /// Forgets a hold that was lifted elsewhere (`reset-failed`, `rescue`).
    pub(crate) fn release(&mut self, module: &str) -> bool {
        self.holds.remove(module).is_some()
    }

    /// Every hold, to be kept in hal's state.
    pub(crate) fn holds(&self) -> &BTreeMap<String, Hold> {
        &self.holds
    }

    /// Notes that `on_failure` was run (or refused) for the module's hold, and why it is held.
    pub(crate) fn notified(&mut self, module: &str, why: &Cause) {
        if let Some(h) = self.holds.get_mut(module) {
            h.notified = true;
            h.reason = why.clone();
        }
    }

    /// The next moment something becomes due without any event (a grace
    /// period running out, a pause ending, a held module's next try) that
    /// [`Supervisor::due`] has not handed out yet: the earliest after its last
    /// call (after `now` before the first). It may lie before `now`: a
    /// deadline that passed while the loop was busy after that call is due at
    /// once, never skipped (issue 50: a repair that failed a moment after the
    /// others of its pass was never tried again). What `due` handed out is
    /// never due again: a waiting loop cannot spin.
    pub(crate) fn next_due(&self, now: Stamp) -> Option<Stamp> {
        let after = self.checked.map_or(now, |c| c.min(now));
        let graces = self
            .unhealthy
            .iter()
            .filter(|((m, _), _)| !self.holds.contains_key(m))
            .map(|(_, since)| since.plus(self.grace));
        let pauses = self.paused.keys().filter_map(|m| self.pause_end(m));
        let holds = self.holds.values().map(Hold::due_at);
        graces
            .chain(pauses)
            .chain(holds)
            .filter(|t| *t > after)
            .min()
    }

    /// Modules with something due at `now` (to be looked at again); from
    /// here on [`Supervisor::next_due`] looks past `now`.
    pub(crate) fn due(&mut self, now: Stamp) -> Vec<String> {
        self.checked = Some(now);
        let mut out: Vec<String> = self
            .unhealthy
            .iter()
            .filter(|(_, since)| since.plus(self.grace) <= now)
            .map(|((m, _), _)| m.clone())
            .chain(
                self.holds
                    .iter()
                    .filter(|(_, h)| h.due_at() <= now)
                    .map(|(m, _)| m.clone()),
            )
            .chain(
                self.paused
                    .keys()
                    .filter(|m| self.pause_end(m).is_some_and(|t| t <= now))
                    .cloned(),
            )
            .collect();
        out.sort();
        out.dedup();
        out
    }

    pub(super) fn forget_unhealthy(&mut self, module: &str) {
        self.unhealthy.retain(|(m, _), _| m != module);
    }

    /// Keeps the unhealthy memory of `s` in line with what its status shows.
    fn note_unhealthy(&mut self, s: &ModuleStatus, now: Stamp) {
        let sick: Vec<String> = s
            .services
            .iter()
            .filter(|c| is_unhealthy(c))
            .map(key_of)
            .collect();
        self.unhealthy
            .retain(|(m, c), _| m != &s.name || sick.contains(c));
        for c in sick {
            self.unhealthy.entry((s.name.clone(), c)).or_insert(now);
        }
    }

    /// Why a module that should be up needs a repair now, and the smallest one, if it does.
    fn trouble(&self, s: &ModuleStatus, now: Stamp) -> Option<Trouble> {
        match s.kind {
            KindTag::Host => trouble::host_trouble(s),
            KindTag::Stack => trouble::stack_trouble(s, &self.unhealthy, self.grace, now),
            KindTag::Invalid => None,
        }
    }

    /// The repair's scope: the containers, unless the last small repair did
    /// not hold (it failed, or the same container failed again within the window).
    fn scope(&self, s: &ModuleStatus, fixes: Vec<Fix>, now: Stamp) -> RepairScope {
        if fixes.is_empty() {
            return RepairScope::Module;
        }
        if let Some(why) = self.escalate.get(&s.name) {
            return RepairScope::Escalated(why.clone());
        }
        // Zero: no figures filled in (the config takes no zero window).
        let window = Some(s.limit.interval)
            .filter(|w| !w.is_zero())
            .unwrap_or(ESCALATE_WINDOW);
        if let Some(last) = self.fixed.get(&s.name)
            && now.since(last.at) < window
        {
            let again = fixes
                .iter()
                .find(|f| last.whole || last.containers.contains(&f.container));
            if let Some(f) = again {
                return RepairScope::Escalated(Escalation::FailedAgain {
                    service: f.service.clone(),
                    after: Duration::from_secs(now.since(last.at).as_secs()),
                    whole: last.whole,
                });
            }
        }
        RepairScope::Containers(fixes)
    }
}

#[cfg(test)]
mod tests;
