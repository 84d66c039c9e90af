//! The lines of `auto_update`'s rounds: the schedule, each slot, each module's update and the round's end.

use std::time::Duration;

use std::fmt;

use super::event::{LocalAt, Moved, RoundEvent, UpdateEnd, UpdateEvent};
use super::line::{WatchLine, ms, secs};

impl RoundEvent {
    /// `auto_update`'s rounds.
    pub(super) fn line(&self) -> WatchLine {
        match self {
            RoundEvent::UpdateSchedule { schedule, next } => WatchLine::about(
                "watch",
                "update_schedule",
                None,
                format!("scheduled updates {schedule}; next at {next} local time"),
            )
            .with("schedule", schedule.clone())
            .with("next", next.at.rfc3339()),
            RoundEvent::SlotSkipped { slot, next } => WatchLine::about(
                "watch",
                "update_skipped",
                None,
                format!(
                    "scheduled update of {slot} skipped: the one before is still running; next at {}",
                    or_none(next)
                ),
            ),
            RoundEvent::SlotMissed { slot, late, next } => WatchLine::about(
                "watch",
                "update_missed",
                None,
                format!(
                    "scheduled update of {slot} missed (found {}s late); next at {}",
                    late.as_secs(),
                    or_none(next)
                ),
            ),
            RoundEvent::UpdateDue { modules } => {
                let text = match modules.is_empty() {
                    true => {
                        "scheduled update: no stack is wanted up with auto_update on".to_string()
                    }
                    false => format!("scheduled update: {}", modules.join(", ")),
                };
                WatchLine::about("watch", "update_due", Some("update"), text)
                    .with("modules", modules.clone())
            }
            RoundEvent::UpdateStopped { failed, left } => {
                let s = if *failed == 1 { "" } else { "s" };
                let text = format!(
                    "scheduled update stopped after {failed} failed update{s}; not updated: {}",
                    left.join(", ")
                );
                WatchLine::about("watch", "update_stopped", None, text)
                    .with("modules", left.clone())
            }
        }
    }
}

impl UpdateEvent {
    /// One module's scheduled update, and the round's end.
    pub(super) fn line(&self) -> WatchLine {
        match self {
            UpdateEvent::UpdatePassed { module, why } => {
                let text = format!("not updated: {why}");
                WatchLine::module(module, "update_skipped", None, text).reason(why)
            }
            UpdateEvent::Updating { module } => WatchLine::module(
                module,
                "updating",
                Some("update"),
                "updating (scheduled)".to_string(),
            ),
            UpdateEvent::Updated {
                module,
                took,
                rolled_back,
                end,
            } => updated(module, *took, end)
                .with("took_ms", ms(*took))
                .with("rolled_back", *rolled_back),
            UpdateEvent::UpdateDone {
                updated,
                up_to_date,
                failed,
                skipped,
                next,
            } => WatchLine::about(
                "watch",
                "update_done",
                None,
                format!(
                    "scheduled update done: {updated} updated, {up_to_date} up to date, {failed} failed, {skipped} not updated; next at {}",
                    or_none(next)
                ),
            )
            .with("updated", *updated)
            .with("up_to_date", *up_to_date)
            .with("failed", *failed)
            .with("skipped", *skipped),
        }
    }
}

/// How one module's scheduled update ended, before its `took_ms` and `rolled_back`.
fn updated(module: &str, took: Duration, end: &UpdateEnd) -> WatchLine {
    let took = secs(took);
    match end {
        UpdateEnd::Updated(moved) => {
            let moved: Vec<String> = moved.iter().map(Moved::describe).collect();
            let text = format!("updated, active ({took}; {})", moved.join(", "));
            WatchLine::module(module, "updated", None, text)
        }
        UpdateEnd::UpToDate => {
            WatchLine::module(module, "up_to_date", None, format!("up to date ({took})"))
        }
        UpdateEnd::Skipped(why) => WatchLine::module(
            module,
            "update_skipped",
            None,
            format!("not updated: {why}"),
        )
        .reason(why),
        UpdateEnd::RolledBack(why) => WatchLine::module(
            module,
            "update_rolled_back",
            None,
            format!("update failed, {why} ({took})"),
        )
        .reason(why),
        UpdateEnd::Failed(why) => WatchLine::module(
            module,
            "update_failed",
            None,
            format!("update failed: {why} ({took})"),
        )
        .reason(why),
    }
}

impl Moved {
    /// `web 0123456789ab → 456789abcdef`: the first 12 hex digits of each.
    fn describe(&self) -> String {
        format!(
            "{} {} → {}",
            self.service,
            short(&self.from),
            short(&self.to)
        )
    }
}

/// The first 12 hex digits of a digest or an image id.
fn short(id: &Option<String>) -> String {
    let id = id.as_deref().unwrap_or("?");
    let hex = id.rsplit(':').next().unwrap_or(id);
    hex.chars().take(12).collect()
}

/// A slot as the log says it, in the schedule's zone: `2026-12-04 04:00:00`.
impl fmt::Display for LocalAt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let wall = self.zone.wall(self.at);
        write!(f, "{}", wall.strftime("%Y-%m-%d %H:%M:%S"))
    }
}

/// The next slot as the log says it, or nothing when there is none.
fn or_none(next: &Option<LocalAt>) -> String {
    next.as_ref().map(LocalAt::to_string).unwrap_or_default()
}
