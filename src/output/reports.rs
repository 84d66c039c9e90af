//! What a verb did to each module, for people (a line each as it finishes, warnings, errors, a summary, and for an update over several a table) or for scripts (one document at the end).

use std::collections::BTreeMap;
use std::time::Duration;

use comfy_table::Cell;

use crate::module::KindTag;
use crate::module::outcome::{Outcome, Would};
use crate::output::render::{state_cell, state_colors};
use crate::output::ui::{Ui, paint};
use crate::output::view::{Modules, Rows, Style};
use crate::run::{Report, ReportJson, UpdateFacts, UpdateJson, Verb};
use crate::stack::ImageChange;

/// People read a line per module as it finishes; after an update over
/// several, a table too: `MODULE RESULT STATE SERVICES TOOK`, one row each.
impl Rows for ReportJson {
    fn table(rows: &[Self], style: &Style) -> String {
        let rows: Vec<(&ReportJson, &UpdateJson)> = rows
            .iter()
            .filter_map(|r| r.update.as_ref().map(|u| (r, u)))
            .collect();
        if rows.is_empty() {
            return String::new();
        }
        let rows = rows.into_iter().map(|(r, u)| {
            let changed: Vec<&str> = u
                .services
                .iter()
                .filter(|s| s.changed)
                .map(|s| s.service.as_str())
                .collect();
            vec![
                Cell::new(&r.name),
                Cell::new(result_word(r, u)),
                r.state
                    .map_or_else(|| Cell::new("-"), |s| state_cell(s, style.color)),
                Cell::new(if changed.is_empty() {
                    "-".to_string()
                } else {
                    changed.join(" ")
                }),
                Cell::new(format!("{:.1}s", r.took_ms as f64 / 1000.0)),
            ]
        });
        crate::output::tables::grid(
            &["MODULE", "RESULT", "STATE", "SERVICES", "TOOK"],
            rows,
            style.color,
        )
    }
}

/// One word for how a module's update went.
fn result_word(r: &ReportJson, u: &UpdateJson) -> &'static str {
    match () {
        _ if u.skipped => "skipped",
        _ if u.rolled_back => "rolled back",
        _ if !r.ok => "failed",
        _ if u.update_available == Some(true) => "available",
        _ if u.update_available == Some(false) => "up to date",
        _ if r.changed => "updated",
        _ if r.kind == KindTag::Host => "nothing to pull",
        _ => "up to date",
    }
}

/// Prints one module's result for people as soon as its work is over (above the
/// progress area on a terminal); nothing for scripts, whose document comes at the end.
pub(crate) fn finished(ui: &Ui, verb: &Verb, r: &Report) {
    if !ui.for_people() {
        return;
    }
    let o = match (&r.result, r.would) {
        (Err(e), _) => return ui.fail(e),
        (Ok(o), Some(would)) => {
            let state = paint(ui.style().color, state_colors(o.state).0, o.state.as_str());
            let what = match would {
                Would::None => "nothing to do".to_string(),
                w => format!("would {}", w.as_str()),
            };
            return ui.say(&format!("{}: {what} (now {state})", r.label()));
        }
        (Ok(o), None) => o,
    };
    for w in &o.warnings {
        ui.warn(&format!("{}: {w}", r.label()));
    }
    let state = paint(ui.style().color, state_colors(o.state).0, o.state.as_str());
    let line = match &r.update {
        Some(u) => update_line(r, o, u, &state),
        None => {
            let reason = o
                .reason
                .as_deref()
                .map_or(String::new(), |r| format!(": {r}"));
            format!(
                "{}: {state}{reason} ({} took {:.1}s)",
                r.label(),
                verb.name(),
                r.took.as_secs_f64()
            )
        }
    };
    ui.say(&line);
}

/// `web: updated api sha256:1a2b… → sha256:6f5e… (active, update took 3.2s)`.
fn update_line(r: &Report, o: &Outcome, u: &UpdateFacts, state: &str) -> String {
    let changed: Vec<String> = u.images.iter().filter(|i| i.changed).map(moved).collect();
    let what = match () {
        _ if u.skipped => o.reason.clone().unwrap_or_default(),
        _ if r.module.kind_tag() == KindTag::Host => "nothing to pull (a host unit)".to_string(),
        _ if u.available == Some(true) => format!("update available: {}", changed.join(", ")),
        _ if r.changed => format!("updated {}", changed.join(", ")),
        _ => "up to date".to_string(),
    };
    let word = if u.available.is_some() {
        "check"
    } else {
        "update"
    };
    let took = match u.skipped {
        true => String::new(),
        false => format!(", {word} took {:.1}s", r.took.as_secs_f64()),
    };
    format!("{}: {what} ({state}{took})", r.label())
}

/// `api sha256:1a2b3c4d5e6f → sha256:6f5e4d3c2b1a`.
fn moved(i: &ImageChange) -> String {
    let short = |d: &Option<String>| {
        d.as_deref().map_or("?".to_string(), |d| {
            let (algo, hex) = d.split_once(':').unwrap_or(("", d));
            let hex: String = hex.chars().take(12).collect();
            if algo.is_empty() {
                hex
            } else {
                format!("{algo}:{hex}")
            }
        })
    };
    format!("{} {} → {}", i.service, short(&i.from), short(&i.to))
}

/// Ends a verb's output: the one document for scripts (modules in the given
/// order), or for several modules a summary on stderr for people (after an
/// update's table). For a start or stop that added modules, `because` says,
/// for each, which modules of the call it was added for (`pulled_in_by` of
/// a start's requirement, `stopped_first_for` of a stop's dependent).
pub(crate) fn end(
    ui: &Ui,
    verb: &Verb,
    reports: &[Report],
    took: Duration,
    because: &BTreeMap<String, Vec<String>>,
) {
    let docs: Vec<ReportJson> = reports
        .iter()
        .map(|r| {
            let mut doc = r.to_json(verb);
            if let Some(why) = because.get(&r.module.name) {
                if verb.stops() {
                    doc.stopped_first_for = Some(why.clone());
                } else {
                    doc.pulled_in_by = Some(why.clone());
                }
            }
            doc
        })
        .collect();
    if !ui.for_people() {
        ui.show(&Modules::new(&docs));
        return;
    }
    if reports.len() <= 1 {
        return;
    }
    if verb.updates() {
        ui.show(&Modules::new(&docs));
    }
    ui.note(&summary(verb, reports, took));
}

/// `start 2 of 3 modules in 4.1s (1 failed)`; for an update, what it updated or found.
fn summary(verb: &Verb, reports: &[Report], took: Duration) -> String {
    let (n, took) = (reports.len(), took.as_secs_f64());
    let count = |f: &dyn Fn(&Report) -> bool| reports.iter().filter(|r| f(r)).count();
    let facts = |r: &Report, f: fn(&UpdateFacts) -> bool| r.update.as_ref().is_some_and(f);
    if !verb.updates() {
        let failed = count(&|r| r.result.is_err());
        let said = match failed {
            0 => String::new(),
            f => format!(" ({f} failed)"),
        };
        let done = n - failed;
        return format!("{} {done} of {n} modules in {took:.1}s{said}", verb.name());
    }
    if reports.iter().any(|r| facts(r, |u| u.available.is_some())) {
        let available = count(&|r| facts(r, |u| u.available == Some(true)));
        return format!("checked {n} modules in {took:.1}s: {available} with an update available");
    }
    let updated = count(&|r| r.changed);
    let rolled = count(&|r| facts(r, |u| u.rolled_back.is_some()));
    let skipped = count(&|r| facts(r, |u| u.skipped));
    format!(
        "updated {updated} of {n} modules in {took:.1}s ({rolled} rolled back, {skipped} skipped)"
    )
}
