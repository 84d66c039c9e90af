//! What a verb did to each module, for people (a line each as it finishes, warnings, errors, a summary) or for scripts (one document at the end).

use std::collections::BTreeMap;
use std::time::Duration;

use crate::output::render::state_colors;
use crate::output::ui::{Format, Ui, paint};
use crate::output::view::{Modules, Rows, Style};
use crate::run::{Report, ReportJson};

/// A verb's document is for scripts only: people read a line per module as it finishes.
impl Rows for ReportJson {
    fn table(_: &[Self], _: &Style) -> String {
        String::new()
    }
}

/// Prints one module's result for people as soon as its work is over (above the
/// progress area on a terminal); nothing for scripts, whose document comes at the end.
pub(crate) fn finished(ui: &Ui, action: &'static str, r: &Report) {
    if ui.format() == Format::Json {
        return;
    }
    match (&r.result, r.would) {
        (Ok(o), Some(would)) => {
            let state = paint(ui.style().color, state_colors(o.state).0, o.state.as_str());
            let what = match would {
                crate::module::outcome::Would::None => "nothing to do".to_string(),
                w => format!("would {}", w.as_str()),
            };
            ui.say(&format!("{}: {what} (now {state})", r.label()));
        }
        (Ok(o), None) => {
            for w in &o.warnings {
                ui.warn(&format!("{}: {w}", r.label()));
            }
            let state = paint(ui.style().color, state_colors(o.state).0, o.state.as_str());
            let reason = o
                .reason
                .as_deref()
                .map_or(String::new(), |r| format!(": {r}"));
            ui.say(&format!(
                "{}: {state}{reason} ({action} took {:.1}s)",
                r.label(),
                r.took.as_secs_f64()
            ));
        }
        (Err(e), _) => ui.fail(e),
    }
}

/// Ends a verb's output: the one document for scripts (modules in the given
/// order), or for several modules a summary on stderr for people.
/// For a start or stop that added modules, `because` says, for each, which
/// modules of the call it was added for (`pulled_in_by` of a start's
/// requirement, `stopped_first_for` of a stop's dependent).
pub(crate) fn end(
    ui: &Ui,
    action: &'static str,
    reports: &[Report],
    took: Duration,
    because: &BTreeMap<String, Vec<String>>,
) {
    if ui.format() == Format::Json {
        let docs: Vec<_> = reports
            .iter()
            .map(|r| {
                let mut doc = r.to_json(action);
                if let Some(why) = because.get(&r.module.name) {
                    if action == "stop" {
                        doc.stopped_first_for = Some(why.clone());
                    } else {
                        doc.pulled_in_by = Some(why.clone());
                    }
                }
                doc
            })
            .collect();
        ui.show(&Modules::new(&docs));
        return;
    }
    if reports.len() > 1 {
        let failed = reports.iter().filter(|r| r.result.is_err()).count();
        ui.note(&format!(
            "{action} {} of {} modules in {:.1}s{}",
            reports.len() - failed,
            reports.len(),
            took.as_secs_f64(),
            if failed > 0 {
                format!(" ({failed} failed)")
            } else {
                String::new()
            }
        ));
    }
}
