//! A held module: the hold itself, its next try, and the supervisor's book-keeping of holds.

use std::time::Duration;

use crate::output::watch_log::Cause;
use crate::util::timefmt::Stamp;

/// The first pause between tries of a held module; it doubles after each failed try.
pub(crate) const BACKOFF_FIRST: Duration = Duration::from_secs(10);
pub(crate) const BACKOFF_MAX: Duration = Duration::from_secs(600);
/// Slack after a window's end: `free_at` is printed to the second.
const FREE_SLACK: Duration = Duration::from_secs(1);

/// A module the supervisor has given up on for now.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Hold {
    pub since: Stamp,
    /// No try before this (the backoff).
    pub not_before: Stamp,
    /// The pause after the next failed try.
    pub backoff: Duration,
    /// When the start limit frees a start, as the last status said.
    pub free_at: Option<Stamp>,
    /// Why it is held: its trouble, then what refused the repair, when that is another cause.
    pub reason: Cause,
    /// Whether `on_failure` has run (or was refused) for this hold.
    pub notified: bool,
}

impl Hold {
    /// A hold that begins now: its first try after [`BACKOFF_FIRST`] (or when the limit frees a start).
    pub(crate) fn new(now: Stamp, free_at: Option<Stamp>, why: Cause) -> Hold {
        Hold {
            since: now,
            not_before: now.plus(BACKOFF_FIRST),
            backoff: (BACKOFF_FIRST * 2).min(BACKOFF_MAX),
            free_at,
            reason: why,
            notified: false,
        }
    }

    /// When the module is tried again.
    pub(crate) fn due_at(&self) -> Stamp {
        match self.free_at {
            Some(f) => self.not_before.max(f.plus(FREE_SLACK)),
            None => self.not_before,
        }
    }
}
