//! What an update did to each module, for people (a line each as it ends, then a summary table over several) or for scripts (one document).

use std::time::Duration;

use comfy_table::Cell;

use crate::output::render::{state_cell, state_colors};
use crate::output::ui::{Format, Ui, paint};
use crate::output::view::{Modules, Rows, Style};
use crate::run::update::UpdateReport;
use crate::run::update::shape::UpdateJson;
use crate::stack::ImageChange;

/// `MODULE RESULT STATE SERVICES TOOK`: one row per module, after an update over several.
impl Rows for UpdateJson {
    fn table(rows: &[Self], style: &Style) -> String {
        let rows = rows.iter().map(|r| {
            let changed: Vec<&str> = r
                .services
                .iter()
                .filter(|s| s.changed)
                .map(|s| s.service.as_str())
                .collect();
            vec![
                Cell::new(&r.report.name),
                Cell::new(result_word(r)),
                r.report
                    .state
                    .map_or_else(|| Cell::new("-"), |s| state_cell(s, style.color)),
                Cell::new(if changed.is_empty() {
                    "-".to_string()
                } else {
                    changed.join(" ")
                }),
                Cell::new(format!("{:.1}s", r.report.took_ms as f64 / 1000.0)),
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
fn result_word(r: &UpdateJson) -> &'static str {
    match () {
        _ if r.skipped => "skipped",
        _ if r.rolled_back => "rolled back",
        _ if !r.report.ok => "failed",
        _ if r.update_available == Some(true) => "available",
        _ if r.update_available == Some(false) => "up to date",
        _ if r.report.changed => "updated",
        _ if r.report.kind == "host" => "nothing to pull",
        _ => "up to date",
    }
}

/// Prints one module's result for people as soon as it ends; nothing for scripts.
pub(crate) fn finished(ui: &Ui, r: &UpdateReport) {
    if ui.format() == Format::Json {
        return;
    }
    let label = r.report.label();
    let o = match &r.report.result {
        Err(e) => return ui.fail(e),
        Ok(o) => o,
    };
    for w in &o.warnings {
        ui.warn(&format!("{label}: {w}"));
    }
    let state = paint(ui.style().color, state_colors(o.state).0, o.state.as_str());
    let changed: Vec<String> = r.images.iter().filter(|i| i.changed).map(moved).collect();
    let what = match () {
        _ if r.skipped => o.reason.clone().unwrap_or_default(),
        _ if r.report.module.kind_name() == "host" => "nothing to pull (a host unit)".to_string(),
        _ if r.available == Some(true) => format!("update available: {}", changed.join(", ")),
        _ if r.report.changed => format!("updated {}", changed.join(", ")),
        _ => "up to date".to_string(),
    };
    let took = match r.skipped {
        true => String::new(),
        false => format!(", {} took {:.1}s", verb(r), r.report.took.as_secs_f64()),
    };
    ui.say(&format!("{label}: {what} ({state}{took})"));
}

fn verb(r: &UpdateReport) -> &'static str {
    if r.available.is_some() {
        "check"
    } else {
        "update"
    }
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

/// Ends an update's output: the one document for scripts, or over several
/// modules a summary table for people, and a count on stderr.
pub(crate) fn end(ui: &Ui, reports: &[UpdateReport], took: Duration) {
    let docs: Vec<UpdateJson> = reports.iter().map(UpdateReport::to_json).collect();
    if ui.format() == Format::Json {
        ui.show(&Modules::new(&docs));
        return;
    }
    if reports.len() > 1 {
        ui.show(&Modules::new(&docs));
        let count = |f: fn(&UpdateReport) -> bool| reports.iter().filter(|r| f(r)).count();
        let (n, took) = (reports.len(), took.as_secs_f64());
        let line = if reports.iter().any(|r| r.available.is_some()) {
            let available = count(|r| r.available == Some(true));
            format!("checked {n} modules in {took:.1}s: {available} with an update available")
        } else {
            let updated = count(|r| r.report.changed);
            let rolled = count(|r| r.rolled_back);
            let skipped = count(|r| r.skipped);
            format!(
                "updated {updated} of {n} modules in {took:.1}s ({rolled} rolled back, {skipped} skipped)"
            )
        };
        ui.note(&line);
    }
}
