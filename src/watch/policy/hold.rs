//! A held module: the hold itself, its next try, and the supervisor's book-keeping of holds.

use std::collections::BTreeMap;
use std::time::Duration;

use super::{BACKOFF_FIRST, BACKOFF_MAX, Supervisor};
use crate::util::timefmt::Stamp;

/// Slack after a window's end: `free_at` is printed to the second.
const FREE_SLACK: Duration = Duration::from_secs(1);

/// A module the supervisor has given up on for now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Hold {
    pub since: Stamp,
    /// No try before this (the backoff).
    pub not_before: Stamp,
    /// The pause after the next failed try.
    pub backoff: Duration,
    /// When the start limit frees a start, as the last status said.
    pub free_at: Option<Stamp>,
    /// Why it is held (the log's words).
    pub reason: String,
    /// Whether `on_failure` has run (or was refused) for this hold.
    pub notified: bool,
}

impl Hold {
    /// When the module is tried again.
    pub(crate) fn due_at(&self) -> Stamp {
        match self.free_at {
            Some(f) => self.not_before.max(f.plus(FREE_SLACK)),
            None => self.not_before,
        }
    }
}

impl Supervisor {
    /// Holds the module from now: its first try after [`BACKOFF_FIRST`] (or when the limit frees a start).
    pub(super) fn begin_hold(
        &mut self,
        module: &str,
        now: Stamp,
        free_at: Option<Stamp>,
        why: &str,
    ) {
        self.paused.remove(module);
        self.holds.insert(
            module.to_string(),
            Hold {
                since: now,
                not_before: now.plus(BACKOFF_FIRST),
                backoff: (BACKOFF_FIRST * 2).min(BACKOFF_MAX),
                free_at,
                reason: why.to_string(),
                notified: false,
            },
        );
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
    pub(crate) fn notified(&mut self, module: &str, why: &str) {
        if let Some(h) = self.holds.get_mut(module) {
            h.notified = true;
            h.reason = why.to_string();
        }
    }
}
