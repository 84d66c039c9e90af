//! The supervisor's holds kept in hal's state: a restarted `hal watch` holds what it held, and `on_failure` runs once per hold; and what it keeps in memory while that state cannot be written.

use std::time::{Duration, Instant};

use super::{Stopped, Watcher};
use crate::module::recorded_causes::HoldCause;
use crate::output::watch_log::{Cause, HoldEvent, Release, WatchEvent, WatchOwn};
use crate::state::records::HoldRecord;
use crate::util::timefmt::Stamp;
use crate::watch::policy::Hold;

/// While hal's state cannot be written, how often the watch tries again to write what it kept.
const WRITE_AGAIN: Duration = Duration::from_secs(1);

pub(super) fn record_of(h: &Hold) -> HoldRecord {
    HoldRecord {
        // To the millisecond, as the file keeps them: a record read back
        // compares equal to the one written.
        since: h.since.whole_milli(),
        not_before: h.not_before.whole_milli(),
        backoff: Duration::from_millis(u64::try_from(h.backoff.as_millis()).unwrap_or(u64::MAX)),
        free_at: h.free_at.map(Stamp::whole_milli),
        reason: cause_kept(&h.reason),
        notified: h.notified,
    }
}

/// A hold's cause as hal's state keeps it: the trouble and the refusal apart, in the log's words.
fn cause_kept(c: &Cause) -> HoldCause {
    match c {
        Cause::Then(trouble, refusal) => HoldCause::Refused {
            trouble: trouble.to_string(),
            refusal: refusal.to_string(),
        },
        c => HoldCause::Said(c.to_string()),
    }
}

/// A kept hold's cause, taken up again: its words, each cause apart.
fn cause_of(c: &HoldCause) -> Cause {
    match c {
        HoldCause::Refused { trouble, refusal } => Cause::Then(
            Box::new(Cause::Said(trouble.clone())),
            Box::new(Cause::Said(refusal.clone())),
        ),
        HoldCause::Said(said) => Cause::Said(said.clone()),
    }
}

pub(super) fn hold_of(r: &HoldRecord) -> Hold {
    Hold {
        since: r.since,
        not_before: r.not_before,
        backoff: r.backoff,
        free_at: r.free_at,
        reason: cause_of(&r.reason),
        notified: r.notified,
    }
}

impl Watcher<'_> {
    /// Takes up the holds hal's state remembers (from a watch that ran before).
    pub(super) fn restore_holds(&mut self) {
        let (state, _) = self.node.store.read();
        for (name, rec) in &state.modules {
            let Some(h) = &rec.hold else { continue };
            if !self.modules.iter().any(|m| &m.name == name) {
                continue;
            }
            self.sup.restore(name, hold_of(h));
            self.saved.insert(name.clone(), h.clone());
            self.log.emit(HoldEvent::StillHeld {
                module: name.clone(),
                since: h.since,
                until: h.until(),
                reason: cause_of(&h.reason),
                notified: h.notified,
            });
            if !h.notified {
                // The watch before ended before it could run on_failure: run it now, once.
                let reason = cause_of(&h.reason);
                self.held(name, &reason, &reason);
            }
        }
    }

    /// Writes the holds that changed to hal's state, and lets go of those a
    /// person lifted meanwhile (`reset-failed`, `rescue` clear them there).
    pub(super) async fn save_holds(&mut self) -> Result<(), Stopped> {
        let (state, _) = self.node.store.read();
        let lifted: Vec<String> = self
            .saved
            .keys()
            .filter(|m| state.modules.get(*m).is_none_or(|r| r.hold.is_none()))
            .cloned()
            .collect();
        for m in lifted {
            self.saved.remove(&m);
            if self.sup.release(&m) {
                self.log.emit(HoldEvent::Released {
                    module: m.clone(),
                    why: Release::CountReset,
                });
                self.mark([m], Duration::ZERO);
            }
        }
        let mut writes: Vec<(String, Option<HoldRecord>)> = Vec::new();
        for (m, h) in self.sup.holds() {
            let rec = record_of(h);
            if self.saved.get(m) != Some(&rec) {
                writes.push((m.clone(), Some(rec)));
            }
        }
        for m in self.saved.keys() {
            if !self.sup.holds().contains_key(m) {
                writes.push((m.clone(), None));
            }
        }
        for (m, rec) in writes {
            let store = self.node.store.clone();
            if let Err(e) = self.drive(store.set_hold(&m, rec.clone())).await? {
                let why = format!("could not keep the hold in hal's state: {e:#}");
                self.log.emit(WatchOwn::Problem {
                    module: Some(m.clone()),
                    why,
                });
            }
            // Said once: not tried again until the hold changes.
            match rec {
                Some(r) => {
                    self.saved.insert(m, r);
                }
                None => {
                    self.saved.remove(&m);
                }
            }
        }
        Ok(())
    }

    /// While hal's state cannot be written (a full disk, a read-only mount):
    /// tries again every [`WRITE_AGAIN`] to write what the store keeps in
    /// memory, and says once that it cannot, and once that it can again.
    /// True when that changed (the metrics say it too).
    pub(super) async fn keep_state(&mut self) -> Result<bool, Stopped> {
        let store = self.node.store.clone();
        if store.owed() && self.write_at.is_none_or(|t| Instant::now() >= t) {
            self.drive(store.write_kept()).await?;
            self.write_at = Some(Instant::now() + WRITE_AGAIN);
        }
        if !store.owed() {
            self.write_at = None;
        }
        match (store.unwritable(), self.unwritable_said) {
            (Some(why), false) => {
                self.unwritable_said = true;
                self.log.emit(WatchEvent::StateUnwritable { why });
                Ok(true)
            }
            (None, true) if !store.owed() => {
                self.unwritable_said = false;
                self.log.emit(WatchEvent::StateWritable);
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    /// Writes the metrics file (`--metrics`), if there is one: the holds as
    /// just written, and whether hal's state can be written.
    pub(super) fn write_metrics(&mut self) {
        let updates = self
            .metrics
            .is_some()
            .then(|| self.node.store.update_tallies());
        let writable = self.node.store.unwritable().is_none();
        let written = self.metrics.as_mut().map(|m| {
            m.state_writable = writable;
            m.write(
                &self.node,
                &self.modules,
                &self.saved,
                &updates.unwrap_or_default(),
            )
        });
        if let Some(Some(why)) = written {
            self.log.emit(WatchOwn::Problem { module: None, why });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hold_kept_in_the_state_is_taken_up_again_with_the_same_words() {
        let held = |reason: Cause| Hold {
            since: Stamp::from_millis(1_000),
            not_before: Stamp::from_millis(2_000),
            backoff: Duration::from_secs(20),
            free_at: None,
            reason,
            notified: true,
        };
        let limited = Cause::Then(
            Box::new(Cause::StoppedByRequest),
            Box::new(Cause::Said("start limit hit".into())),
        );
        for h in [held(limited), held(Cause::ActiveAgain)] {
            let kept = record_of(&h);
            assert_eq!(kept.reason.to_string(), h.reason.to_string());
            let again = hold_of(&kept);
            assert_eq!(again.reason.to_string(), h.reason.to_string());
            // Written again unchanged: the watch does not write a hold it kept.
            assert_eq!(record_of(&again), kept);
        }
        let kept = record_of(&held(Cause::Then(
            Box::new(Cause::NoLongerWanted),
            Box::new(Cause::ActiveAgain),
        )));
        assert_eq!(
            kept.reason,
            HoldCause::Refused {
                trouble: "no longer wanted up".into(),
                refusal: "active again".into()
            }
        );
    }
}
