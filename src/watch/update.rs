//! `auto_update`: the supervisor's scheduled updates. When a slot of the schedule comes, the stacks wanted up that do not opt out are updated through the runner (`run::run`, then `run::follow::after_update`), one at a time and never while the supervisor repairs them, and each result goes to the log.
//!
//! A round takes one module at a time from its queue; the module being
//! updated counts as in flight, so the supervisor neither looks at it nor
//! repairs it until its update has ended, and a module being repaired (or
//! held by someone else's lock) waits for its turn to come again. A slot
//! that comes while a round is still running is skipped, and a slot long
//! past (the machine slept) is not caught up.

use std::collections::VecDeque;
use std::time::Instant;

use super::rounds::{Round, Slot, Turn, turn};
use super::{BUSY_RECHECK, Done, EVENT_SETTLE, Watcher};
use crate::module::status::Desired;
use crate::module::{Kind, Module};
use crate::output::watch_log::Entry;
use crate::run::{Report, UpdateOpts};
use crate::util::timefmt::Stamp;

impl Watcher<'_> {
    /// Says the schedule at start-up, when there is one.
    pub(super) fn updates_started(&mut self) {
        if let Some(p) = self.updates.problem.take() {
            self.log
                .emit(Entry::about("watch", "problem", None, p.clone()).reason(p));
        }
        let u = &self.updates;
        let Some(next) = u.next else { return };
        let text = format!(
            "scheduled updates {}; next at {} local time",
            u.schedule,
            u.when(next)
        );
        self.log.emit(
            Entry::about("watch", "update_schedule", None, text)
                .with("schedule", u.schedule.to_string())
                .with(
                    "next",
                    Stamp {
                        secs: next,
                        nanos: 0,
                    }
                    .rfc3339(),
                ),
        );
    }

    /// Begins a round when a slot has come, and starts the next module's update when none runs.
    pub(super) fn update_tick(&mut self) {
        let now = Stamp::now().secs;
        if let Some((slot, call)) = self.updates.take_slot(now) {
            let next = self
                .updates
                .next
                .map(|n| self.updates.when(n))
                .unwrap_or_default();
            if call == Slot::Busy {
                let text = format!(
                    "scheduled update of {} skipped: the one before is still running; next at {next}",
                    self.updates.when(slot)
                );
                self.log
                    .emit(Entry::about("watch", "update_skipped", None, text));
            } else if call == Slot::Missed {
                let text = format!(
                    "scheduled update of {} missed (found {}s late); next at {next}",
                    self.updates.when(slot),
                    now - slot
                );
                self.log
                    .emit(Entry::about("watch", "update_missed", None, text));
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
            matches!(m.kind, Kind::Stack { .. })
                && state.modules.get(&m.name).and_then(|r| r.desired) == Some(Desired::Up)
                && self.node.config.auto_update(&m.name)
        };
        let queue: VecDeque<Module> = self.modules.iter().filter(|m| wanted(m)).cloned().collect();
        let names: Vec<&str> = queue.iter().map(|m| m.name.as_str()).collect();
        let text = match names.is_empty() {
            true => "scheduled update: no stack is wanted up with auto_update on".to_string(),
            false => format!("scheduled update: {}", names.join(", ")),
        };
        self.log.emit(
            Entry::about("watch", "update_due", Some("update"), text)
                .with("modules", names.clone()),
        );
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
            let s = if r.failed == 1 { "" } else { "s" };
            let text = format!(
                "scheduled update stopped after {} failed update{s}; not updated: {}",
                r.failed,
                left.join(", ")
            );
            self.log
                .emit(Entry::about("watch", "update_stopped", None, text).with("modules", left));
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
        match turn(desired == Some(Desired::Up), held, busy) {
            Turn::Skip(why) => {
                r.skipped += 1;
                self.log.emit(
                    Entry::module(&name, "update_skipped", None, format!("not updated: {why}"))
                        .reason(why),
                );
                return self.update_next();
            }
            Turn::Wait => {
                r.queue.push_front(m);
                r.retry_at = Some(Instant::now() + BUSY_RECHECK);
                return;
            }
            Turn::Go => {}
        }
        r.current = Some(name.clone());
        self.inflight.insert(name.clone());
        self.log.emit(Entry::module(
            &name,
            "updating",
            Some("update"),
            "updating (scheduled)".to_string(),
        ));
        let (node, progress) = (self.node, self.progress);
        let opts = UpdateOpts {
            check: false,
            force: false,
            timeout: None,
            max_failures: usize::MAX,
            by_supervisor: true,
        };
        self.work.push(Box::pin(async move {
            let verb = crate::run::Verb::Update { opts };
            let mut reports = crate::run::run(node, progress, vec![m], &verb, 1).await;
            crate::run::follow::after_update(node, progress, &mut reports, 1).await;
            Done::Update {
                module: name,
                report: reports.pop().map(Box::new),
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
        let took = rep.took;
        let took_text = format!("{:.1}s", took.as_secs_f64());
        let took_ms = u64::try_from(took.as_millis()).unwrap_or(u64::MAX);
        let (event, text, reason) = match &rep.result {
            Ok(_) if rep.changed => {
                r.updated += 1;
                let moved: Vec<String> = facts
                    .images
                    .iter()
                    .filter(|i| i.changed)
                    .map(|i| format!("{} {} → {}", i.service, short(&i.from), short(&i.to)))
                    .collect();
                (
                    "updated",
                    format!("updated, active ({took_text}; {})", moved.join(", ")),
                    None,
                )
            }
            Ok(_) => {
                r.unchanged += 1;
                ("up_to_date", format!("up to date ({took_text})"), None)
            }
            Err(e) => {
                let why = crate::run::without_step(e);
                // One rule with `hal update`'s `--max-failures`: a refused
                // module (start limit, no longer wanted up) is not updated.
                if !facts.failed {
                    r.skipped += 1;
                    ("update_skipped", format!("not updated: {why}"), Some(why))
                } else if rolled_back {
                    r.failed += 1;
                    (
                        "update_rolled_back",
                        format!("update failed, {why} ({took_text})"),
                        Some(why),
                    )
                } else {
                    r.failed += 1;
                    (
                        "update_failed",
                        format!("update failed: {why} ({took_text})"),
                        Some(why),
                    )
                }
            }
        };
        let mut entry = Entry::module(name, event, None, text)
            .with("took_ms", took_ms)
            .with("rolled_back", rolled_back);
        if let Some(why) = reason {
            entry = entry.reason(why);
        }
        self.log.emit(entry);
    }

    fn round_ends(&mut self) {
        let Some(r) = self.updates.round.take() else {
            return;
        };
        let next = self
            .updates
            .next
            .map(|n| self.updates.when(n))
            .unwrap_or_default();
        let text = format!(
            "scheduled update done: {} updated, {} up to date, {} failed, {} not updated; next at {next}",
            r.updated, r.unchanged, r.failed, r.skipped
        );
        self.log.emit(
            Entry::about("watch", "update_done", None, text)
                .with("updated", r.updated)
                .with("up_to_date", r.unchanged)
                .with("failed", r.failed)
                .with("skipped", r.skipped),
        );
    }
}

/// The first 12 hex digits of a digest or an image id.
fn short(id: &Option<String>) -> String {
    let id = id.as_deref().unwrap_or("?");
    let hex = id.rsplit(':').next().unwrap_or(id);
    hex.chars().take(12).collect()
}
