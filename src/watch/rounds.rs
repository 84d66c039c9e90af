//! The state of `auto_update` between the loop's ticks: the schedule read in the node's zone, its next slot, and the round of updates under way (what `update.rs` acts on).

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use crate::module::Module;
use crate::module::schedule::Schedule;
use crate::output::watch_log::LocalAt;
use crate::util::timefmt::Stamp;
use crate::util::tz::Zone;

/// A slot found this late (the machine slept, the loop was stuck) is missed, not run.
pub(super) const LATE: Duration = Duration::from_secs(600);

/// What a slot that has come does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Slot {
    /// A round begins.
    Run,
    /// The round before still runs: two rounds never run at once.
    Busy,
    /// Found more than [`LATE`] after it fell: missed, not caught up.
    Missed,
}

/// Whether the round's next module is updated now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum RoundTurn {
    Go,
    /// Being repaired, or someone else holds its lock: it stays at the head
    /// of the queue, and its turn comes again.
    Wait,
    /// Not updated this round, and why.
    Skip(&'static str),
}

/// The turn of a module at the head of a round's queue.
pub(super) fn turn(wanted_up: bool, pinned: bool, held: bool, busy: bool) -> RoundTurn {
    if !wanted_up {
        RoundTurn::Skip("it is no longer wanted up")
    } else if pinned {
        RoundTurn::Skip("it is pinned (pin = true)")
    } else if held {
        RoundTurn::Skip("it is held (its start limit is hit)")
    } else if busy {
        RoundTurn::Wait
    } else {
        RoundTurn::Go
    }
}

/// The schedule, its next slot, and the round under way.
pub(super) struct Updates {
    pub(super) schedule: Schedule,
    pub(super) zone: Zone,
    pub(super) max_failures: usize,
    /// The next slot (a whole second).
    pub(super) next: Option<Stamp>,
    pub(super) round: Option<Round>,
    /// Why the local time zone could not be read, said once at start-up.
    pub(super) problem: Option<String>,
}

/// One slot's updates.
pub(super) struct Round {
    pub(super) queue: VecDeque<Module>,
    /// The module being updated.
    pub(super) current: Option<String>,
    /// When to look at the queue again (its head was busy).
    pub(super) retry_at: Option<Instant>,
    pub(super) updated: usize,
    pub(super) unchanged: usize,
    pub(super) failed: usize,
    pub(super) skipped: usize,
}

impl Updates {
    /// The config's schedule, in the node's time zone (UTC, said at start-up, when it cannot be read).
    pub(super) fn new(node: &crate::run::Node) -> Updates {
        let (zone, problem) = match Zone::local() {
            Ok(z) => (z, None),
            Err(e) => (
                Zone::utc(),
                Some(format!("auto_update: local time zone: {e}; using UTC")),
            ),
        };
        let schedule = node.config.auto_update;
        let next = schedule.next_after(Stamp::now(), &zone);
        let max_failures = node.config.auto_update_max_failures.unwrap_or(1).max(1);
        Updates {
            schedule,
            zone,
            max_failures,
            next,
            round: None,
            problem,
        }
    }

    /// The config was read again: its schedule and its bound on failures count
    /// from now on (a round under way goes on). True when the schedule changed.
    pub(super) fn reread(&mut self, node: &crate::run::Node) -> bool {
        self.max_failures = node.config.auto_update_max_failures.unwrap_or(1).max(1);
        if node.config.auto_update == self.schedule {
            return false;
        }
        self.schedule = node.config.auto_update;
        self.next = self.schedule.next_after(Stamp::now(), &self.zone);
        true
    }

    /// The slot that has come by `now` (to the second), if one has, and what it
    /// does. The next slot is then the first after `now`: slots that passed
    /// meanwhile are never caught up.
    pub(super) fn take_slot(&mut self, now: Stamp) -> Option<(Stamp, Slot)> {
        let now = now.whole_second();
        let slot = self.next.filter(|s| now >= *s)?;
        self.next = self.schedule.next_after(now.max(slot), &self.zone);
        let call = if self.round.is_some() {
            Slot::Busy
        } else if now.since(slot) > LATE {
            Slot::Missed
        } else {
            Slot::Run
        };
        Some((slot, call))
    }

    /// When the loop must wake for the schedule.
    pub(super) fn wake(&self) -> Option<Instant> {
        if let Some(r) = &self.round
            && r.current.is_none()
        {
            return Some(r.retry_at.unwrap_or_else(Instant::now));
        }
        let next = self.next?;
        Some(Instant::now() + next.since(Stamp::now()))
    }

    /// A slot in the schedule's zone, for the log to say.
    pub(super) fn when(&self, slot: Stamp) -> LocalAt {
        LocalAt {
            at: slot,
            zone: self.zone.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `every 1h` in UTC, its next slot at `next`, a round running or not.
    fn updates(next: i64, running: bool) -> Updates {
        Updates {
            schedule: Schedule::parse("every 1h").unwrap(),
            zone: Zone::utc(),
            max_failures: 1,
            next: Some(t(next)),
            round: running.then(|| Round {
                queue: VecDeque::new(),
                current: Some("web".into()),
                retry_at: None,
                updated: 0,
                unchanged: 0,
                failed: 0,
                skipped: 0,
            }),
            problem: None,
        }
    }

    const SLOT: i64 = 1_800_000_000;

    /// A time in Unix seconds, as the slots below are pinned.
    fn t(secs: i64) -> Stamp {
        Stamp::from_secs(secs)
    }

    /// [`LATE`] in seconds.
    const LATE_S: i64 = LATE.as_secs() as i64;

    #[test]
    fn a_slot_runs_on_time_and_not_before() {
        let mut u = updates(SLOT, false);
        assert_eq!(u.take_slot(t(SLOT - 1)), None);
        assert_eq!(u.take_slot(t(SLOT + LATE_S)), Some((t(SLOT), Slot::Run)));
        assert_eq!(u.next, Some(t(SLOT + 3600)));
    }

    #[test]
    fn two_rounds_never_run_at_once() {
        let mut u = updates(SLOT, true);
        assert_eq!(u.take_slot(t(SLOT)), Some((t(SLOT), Slot::Busy)));
        assert_eq!(u.next, Some(t(SLOT + 3600)));
    }

    #[test]
    fn a_slot_found_more_than_10_minutes_late_is_missed_and_none_is_caught_up() {
        let mut u = updates(SLOT, false);
        assert_eq!(LATE_S, 600);
        assert_eq!(
            u.take_slot(t(SLOT + LATE_S + 1)),
            Some((t(SLOT), Slot::Missed))
        );
        // The machine slept 5 hours: one slot is missed, the four after it
        // are not run one after another; the next is the first after now.
        let mut u = updates(SLOT, false);
        let now = SLOT + 5 * 3600 + 60;
        assert_eq!(u.take_slot(t(now)), Some((t(SLOT), Slot::Missed)));
        assert_eq!(u.next, Some(t(SLOT + 6 * 3600)));
        assert_eq!(u.take_slot(t(now + 1)), None);
    }

    #[test]
    fn a_slot_is_taken_to_the_second() {
        // Found 600.9 s after it fell: 600 s late to the second, so it runs.
        let mut u = updates(SLOT, false);
        let now = Stamp::new(SLOT + LATE_S, 900_000_000);
        assert_eq!(u.take_slot(now), Some((t(SLOT), Slot::Run)));
        assert_eq!(u.next, Some(t(SLOT + 3600)));
    }

    #[test]
    fn a_module_being_repaired_waits_and_a_held_one_is_skipped() {
        assert_eq!(turn(true, false, false, false), RoundTurn::Go);
        // Being repaired (or its lock held): it waits for its turn, not skipped.
        assert_eq!(turn(true, false, false, true), RoundTurn::Wait);
        assert!(matches!(turn(true, false, true, false), RoundTurn::Skip(w) if w.contains("held")));
        assert!(matches!(turn(true, false, true, true), RoundTurn::Skip(w) if w.contains("held")));
        assert!(
            matches!(turn(false, false, false, true), RoundTurn::Skip(w) if w.contains("wanted up"))
        );
    }

    #[test]
    fn a_pinned_module_is_left_by_the_round_and_says_why() {
        assert!(
            matches!(turn(true, true, false, false), RoundTurn::Skip(w) if w.contains("pin = true"))
        );
        assert!(
            matches!(turn(true, true, false, true), RoundTurn::Skip(w) if w.contains("pinned"))
        );
    }
}
