//! `auto_update`: the supervisor's scheduled updates. When a slot of the schedule comes, the stacks wanted up that do not opt out are updated through the runner (`run::verb`: the update, then the namespace dependents of what it recreated), one at a time and never while the supervisor repairs them, and each result goes to the log.
//!
//! A round takes one module at a time from its queue; the module being
//! updated counts as in flight, so the supervisor neither looks at it nor
//! repairs it until its update has ended, and a module being repaired (or
//! held by someone else's lock) waits for its turn to come again. A slot
//! that comes while a round is still running is skipped, and a slot long
//! past (the machine slept) is not caught up.

use std::collections::VecDeque;
use std::time::Instant;

use super::rounds::{Round, RoundTurn, Slot, turn};
use super::{BUSY_RECHECK, EVENT_SETTLE, Watcher, WorkDone};
use crate::module::Module;
use crate::module::status::Desired;
use crate::module::target::Target;
use crate::module::warning::Warning;
use crate::output::watch_log::{Moved, RoundEvent, UpdateEnd, UpdateEvent, WatchOwn};
use crate::run::{Report, UpdateOpts};
use crate::util::timefmt::Stamp;

impl Watcher<'_> {
    /// Says the schedule at start-up, when there is one.
    pub(super) fn updates_started(&mut self) {
        if let Some(p) = self.updates.problem.take() {
            self.log.emit(WatchOwn::Problem {
                module: None,
                why: p,
            });
        }
        let u = &self.updates;
        let Some(next) = u.next else { return };
        self.log.emit(RoundEvent::UpdateSchedule {
            schedule: u.schedule.to_string(),
            next: u.when(next),
        });
    }

    /// Begins a round when a slot has come, and starts the next module's update when none runs.
    pub(super) fn update_tick(&mut self) {
        let now = Stamp::now().whole_second();
        if let Some((slot, call)) = self.updates.take_slot(now) {
            let next = self.updates.next.map(|n| self.updates.when(n));
            if call == Slot::Busy {
                self.log.emit(RoundEvent::SlotSkipped {
                    slot: self.updates.when(slot),
                    next,
                });
            } else if call == Slot::Missed {
                self.log.emit(RoundEvent::SlotMissed {
                    slot: self.updates.when(slot),
                    late: now.since(slot),
                    next,
                });
            } else {
                self.round_begins();
            }
        }
        self.update_next();
    }

    /// A slot came: the stacks wanted up, not opted out, in the watch's order.
    fn round_begins(&mut self) {
        let (state, _) = self.node.store.read();
        let wanted = |m: &Module| {
            m.is_stack()
                && state.modules.get(&m.name).and_then(|r| r.desired) == Some(Desired::Up)
                && self.node.config.auto_update(&m.name)
        };
        let queue: VecDeque<Module> = self.modules.iter().filter(|m| wanted(m)).cloned().collect();
        let modules: Vec<String> = queue.iter().map(|m| m.name.clone()).collect();
        self.log.emit(RoundEvent::UpdateDue { modules });
        self.updates.round = Some(Round {
            queue,
            current: None,
            retry_at: None,
            updated: 0,
            unchanged: 0,
            failed: 0,
            skipped: 0,
        });
    }

    /// Starts the next module's update, if the round has one and none is running.
    fn update_next(&mut self) {
        let Some(r) = &mut self.updates.round else {
            return;
        };
        if r.current.is_some() || r.retry_at.is_some_and(|t| Instant::now() < t) {
            return;
        }
        r.retry_at = None;
        if r.failed >= self.updates.max_failures && !r.queue.is_empty() {
            let left: Vec<String> = r.queue.drain(..).map(|m| m.name).collect();
            r.skipped += left.len();
            self.log.emit(RoundEvent::UpdateStopped {
                failed: r.failed,
                left,
            });
        }
        let Some(m) = r.queue.pop_front() else {
            self.round_ends();
            return;
        };
        let name = m.name.clone();
        let (state, _) = self.node.store.read();
        let desired = state.modules.get(&name).and_then(|rec| rec.desired);
        let held = self.sup.hold(&name).is_some();
        let busy = self.inflight.contains(&name) || self.node.store.busy(&name);
        let pinned = self.node.config.pinned(&name);
        match turn(desired == Some(Desired::Up), pinned, held, busy) {
            RoundTurn::Skip(why) => {
                r.skipped += 1;
                self.log.emit(UpdateEvent::UpdatePassed {
                    module: name,
                    why: why.to_string(),
                });
                return self.update_next();
            }
            RoundTurn::Wait => {
                r.queue.push_front(m);
                r.retry_at = Some(Instant::now() + BUSY_RECHECK);
                return;
            }
            RoundTurn::Go => {}
        }
        r.current = Some(name.clone());
        self.inflight.insert(name.clone());
        self.log.emit(UpdateEvent::Updating {
            module: name.clone(),
        });
        let (node, progress) = (std::rc::Rc::clone(&self.node), self.progress);
        let opts = UpdateOpts {
            check: false,
            force: false,
            timeout: None,
            max_failures: usize::MAX,
            by_supervisor: true,
            no_checkpoint: false,
            unpinned: Vec::new(),
        };
        self.work.push(Box::pin(async move {
            let verb = crate::run::Verb::Update { opts };
            let caller = crate::run::Caller {
                progress,
                note: &|_| {},
                confirm: None,
                finished: &|_, _| {},
            };
            let call = crate::run::Call {
                verb: &verb,
                targets: vec![Target::whole(m)],
                jobs: 1,
                dry_run: false,
            };
            // The supervisor's verb has nothing to refuse (`Verb::refuses_a_bad_graph`).
            let ran = crate::run::verb(&node, &caller, call).await;
            WorkDone::Update {
                module: name,
                report: ran.ok().and_then(|mut r| r.reports.pop()).map(Box::new),
            }
        }));
    }

    /// One module's scheduled update ended: say how, and go on with the round.
    pub(super) fn updated(&mut self, name: &str, report: Option<&Report>) {
        self.inflight.remove(name);
        self.mark([name.to_string()], EVENT_SETTLE);
        let Some(r) = &mut self.updates.round else {
            return;
        };
        r.current = None;
        let Some(rep) = report else {
            r.failed += 1;
            return;
        };
        let facts = rep.update.clone().unwrap_or_default();
        let rolled_back = facts.rolled_back.is_some();
        let end = match &rep.result {
            Ok(_) if rep.changed => {
                r.updated += 1;
                let moved = facts.images.iter().filter(|i| i.changed);
                UpdateEnd::Updated(
                    moved
                        .map(|i| Moved {
                            service: i.service.clone(),
                            from: i.from.clone(),
                            to: i.to.clone(),
                        })
                        .collect(),
                )
            }
            // A digest a rollback put aside is not applied again: said, not counted as up to date.
            Ok(o)
                if let Some(q) = o
                    .warnings
                    .iter()
                    .find(|w| matches!(w, Warning::Quarantined { .. })) =>
            {
                r.skipped += 1;
                UpdateEnd::Skipped(q.to_string())
            }
            Ok(_) => {
                r.unchanged += 1;
                UpdateEnd::UpToDate
            }
            Err(e) => {
                let why = crate::run::without_step(e);
                // One rule with `hal update`'s `--max-failures`: a refused
                // module (start limit, no longer wanted up) is not updated.
                if !facts.failed {
                    r.skipped += 1;
                    UpdateEnd::Skipped(why)
                } else if rolled_back {
                    r.failed += 1;
                    UpdateEnd::RolledBack(why)
                } else {
                    r.failed += 1;
                    UpdateEnd::Failed(why)
                }
            }
        };
        self.log.emit(UpdateEvent::Updated {
            module: name.to_string(),
            took: rep.took,
            rolled_back,
            end,
        });
    }

    fn round_ends(&mut self) {
        let Some(r) = self.updates.round.take() else {
            return;
        };
        let next = self.updates.next.map(|n| self.updates.when(n));
        self.log.emit(UpdateEvent::UpdateDone {
            updated: r.updated,
            up_to_date: r.unchanged,
            failed: r.failed,
            skipped: r.skipped,
            next,
        });
    }
}
