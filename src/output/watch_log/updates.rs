//! The lines of `auto_update`'s rounds: the schedule, each slot, each module's update and the round's end.

use std::time::Duration;

use super::event::{Moved, UpdateEnd, WatchEvent};
use super::line::{WatchLine, ms, secs};

impl WatchEvent {
    /// `auto_update`'s rounds.
    pub(super) fn update_line(&self) -> WatchLine {
        match self {
            WatchEvent::UpdateSchedule {
                schedule,
                next,
                next_at,
            } => WatchLine::about(
                "watch",
                "update_schedule",
                None,
                format!("scheduled updates {schedule}; next at {next_at} local time"),
            )
            .with("schedule", schedule.clone())
            .with("next", next.rfc3339()),
            WatchEvent::SlotSkipped { slot_at, next_at } => WatchLine::about(
                "watch",
                "update_skipped",
                None,
                format!(
                    "scheduled update of {slot_at} skipped: the one before is still running; next at {next_at}"
                ),
            ),
            WatchEvent::SlotMissed {
                slot_at,
                late,
                next_at,
            } => WatchLine::about(
                "watch",
                "update_missed",
                None,
                format!(
                    "scheduled update of {slot_at} missed (found {}s late); next at {next_at}",
                    late.as_secs()
                ),
            ),
            WatchEvent::UpdateDue { modules } => {
                let text = match modules.is_empty() {
                    true => {
                        "scheduled update: no stack is wanted up with auto_update on".to_string()
                    }
                    false => format!("scheduled update: {}", modules.join(", ")),
                };
                WatchLine::about("watch", "update_due", Some("update"), text)
                    .with("modules", modules.clone())
            }
            WatchEvent::UpdateStopped { failed, left } => {
                let s = if *failed == 1 { "" } else { "s" };
                let text = format!(
                    "scheduled update stopped after {failed} failed update{s}; not updated: {}",
                    left.join(", ")
                );
                WatchLine::about("watch", "update_stopped", None, text)
                    .with("modules", left.clone())
            }
            _ => self.module_update_line(),
        }
    }

    /// One module's scheduled update, and the round's end.
    fn module_update_line(&self) -> WatchLine {
        match self {
            WatchEvent::UpdatePassed { module, why } => {
                let text = format!("not updated: {why}");
                WatchLine::module(module, "update_skipped", None, text).reason(why)
            }
            WatchEvent::Updating { module } => WatchLine::module(
                module,
                "updating",
                Some("update"),
                "updating (scheduled)".to_string(),
            ),
            WatchEvent::Updated {
                module,
                took,
                rolled_back,
                end,
            } => updated(module, *took, end)
                .with("took_ms", ms(*took))
                .with("rolled_back", *rolled_back),
            WatchEvent::UpdateDone {
                updated,
                up_to_date,
                failed,
                skipped,
                next_at,
            } => WatchLine::about(
                "watch",
                "update_done",
                None,
                format!(
                    "scheduled update done: {updated} updated, {up_to_date} up to date, {failed} failed, {skipped} not updated; next at {next_at}"
                ),
            )
            .with("updated", *updated)
            .with("up_to_date", *up_to_date)
            .with("failed", *failed)
            .with("skipped", *skipped),
            _ => WatchLine::default(), // `line` hands the others to their own table
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
