//! The supervisor's log: one line per event on stdout, for people and the journal, or one JSON object per line.
//!
//! The watch says what happened as a [`WatchEvent`]; `view.rs` and `updates.rs`
//! make its line (`line.rs`): the human text, and the JSON line's keys.

mod causes;
mod event;
mod line;
mod updates;
mod view;

#[cfg(test)]
mod tests;

use std::io::Write;

pub(crate) use event::{
    Cause, Escalation, Failure, HoldEvent, HookEvent, LocalAt, Moved, OnFailure, Plan, Release,
    RepairEvent, Repaired, RoundEvent, UpdateEnd, UpdateEvent, WatchEvent, WatchOwn,
};

use crate::output::ui::Ui;
use crate::util::timefmt::Stamp;

/// Where the lines go.
pub(crate) struct Log {
    /// One JSON object a line, else text for people.
    json: bool,
}

impl Log {
    /// The log in the printer's format.
    pub(crate) fn new(ui: &Ui) -> Log {
        Log {
            json: ui.json_lines(),
        }
    }

    pub(crate) fn emit(&self, e: impl Into<WatchEvent>) {
        let line = e.into().line();
        // A log reader that went away must not stop the supervisor.
        let mut out = std::io::stdout().lock();
        let _ = if self.json {
            let doc = line.json(Stamp::now().rfc3339_nanos());
            crate::output::json::write_line(&mut out, &doc)
        } else {
            writeln!(out, "{}: {}", line.subject, line.text)
        }
        .and_then(|()| out.flush());
    }
}
