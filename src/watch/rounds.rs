//! The state of `auto_update` between the loop's ticks: the schedule read in the node's zone, its next slot, and the round of updates under way (what `update.rs` acts on).

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use crate::module::Module;
use crate::module::schedule::Schedule;
use crate::util::timefmt::{Stamp, civil_from_days};
use crate::util::tz::Zone;

/// The schedule, its next slot, and the round under way.
pub(super) struct Updates {
    pub(super) schedule: Schedule,
    pub(super) zone: Zone,
    pub(super) max_failures: usize,
    /// The next slot, Unix seconds.
    pub(super) next: Option<i64>,
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
    pub(super) fn new(node: &crate::run::node::Node) -> Updates {
        let (zone, problem) = match Zone::local() {
            Ok(z) => (z, None),
            Err(e) => (
                Zone::utc(),
                Some(format!("auto_update: local time zone: {e}; using UTC")),
            ),
        };
        let schedule = node.config.auto_update;
        let next = schedule.next_after(Stamp::now().secs, &zone);
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

    /// When the loop must wake for the schedule.
    pub(super) fn wake(&self) -> Option<Instant> {
        if let Some(r) = &self.round
            && r.current.is_none()
        {
            return Some(r.retry_at.unwrap_or_else(Instant::now));
        }
        let next = self.next?;
        let now = Stamp::now();
        Some(match u64::try_from(next - now.secs) {
            Ok(secs) if secs > 0 => {
                Instant::now() + Duration::from_secs(secs)
                    - Duration::from_nanos(u64::from(now.nanos))
            }
            _ => Instant::now(),
        })
    }

    /// A slot as the log says it, in local time: `2026-12-04 04:00:00`.
    pub(super) fn when(&self, slot: i64) -> String {
        let local = self.zone.to_local(slot);
        let (y, m, d) = civil_from_days(local.div_euclid(86_400));
        let s = local.rem_euclid(86_400);
        format!(
            "{y}-{m:02}-{d:02} {:02}:{:02}:{:02}",
            s / 3600,
            s % 3600 / 60,
            s % 60
        )
    }
}
