//! How a repair ended, and the pause before the next one: doubling while repairs keep failing, kept short while another module waits on the one repaired.

use std::time::Duration;

use super::hold::BACKOFF_MAX;
use super::{Attempt, Supervisor};
use crate::output::watch_log::{Cause, Escalation};
use crate::util::timefmt::Stamp;

/// The pause after a failed restart before the next one; it doubles while they keep failing.
pub(crate) const PAUSE_FIRST: Duration = Duration::from_secs(2);
pub(crate) const PAUSE_MAX: Duration = Duration::from_secs(60);
/// The longest pause after a failed restart of a module another one waits on.
pub(crate) const PAUSE_WAITED_ON: Duration = Duration::from_secs(2);

impl Supervisor {
    /// Records how a restart or retry ended; true when a hold began (run `on_failure`).
    pub(crate) fn record(&mut self, module: &str, attempt: Attempt, now: Stamp) -> bool {
        match attempt {
            Attempt::Recovered => {
                self.holds.remove(module);
                self.paused.remove(module);
                self.escalate.remove(module);
                self.forget_unhealthy(module);
                false
            }
            Attempt::Refused | Attempt::Failed => {
                if attempt == Attempt::Failed
                    && let Some(last) = self.fixed.get(module)
                    && !last.whole
                {
                    self.escalate
                        .insert(module.into(), Escalation::RepairFailed);
                }
                if let Some(h) = self.holds.get_mut(module) {
                    h.not_before = now.plus(h.backoff);
                    h.backoff = (h.backoff * 2).min(BACKOFF_MAX);
                    return false;
                }
                if attempt == Attempt::Failed {
                    // Not held: pause, then the next look decides (the limit bounds how often).
                    let gap = self
                        .paused
                        .get(module)
                        .map_or(PAUSE_FIRST, |(_, g)| (*g * 2).min(PAUSE_MAX));
                    self.paused.insert(module.to_string(), (now, gap));
                    return false;
                }
                self.begin_hold(module, now, None, Cause::Said(String::new()));
                true
            }
        }
    }

    /// When the pause after `module`'s failed restart ends: its doubling
    /// pause, or [`PAUSE_WAITED_ON`] if shorter while another module waits on it.
    pub(super) fn pause_end(&self, module: &str) -> Option<Stamp> {
        let (failed, gap) = self.paused.get(module)?;
        let waited_on = self.waiting.values().flatten().any(|r| r == module);
        let gap = if waited_on {
            (*gap).min(PAUSE_WAITED_ON)
        } else {
            *gap
        };
        Some(failed.plus(gap))
    }
}
