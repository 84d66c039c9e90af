//! The tables people read for status and list, and the error document scripts read (no logic, no engine).

use comfy_table::{Cell, Color, ContentArrangement, Table, presets};
use serde::Serialize;

use crate::module::status::{Desired, ModuleStatus, State};
use crate::module::{Kind, Module};
use crate::output::json;
use crate::output::view::{Rows, Style};
use crate::util::timefmt::Stamp;

use crate::output::view::SCHEMA;

#[derive(Serialize)]
struct ErrorDoc<'a> {
    schema: u32,
    error: ErrorBody<'a>,
}

#[derive(Serialize)]
struct ErrorBody<'a> {
    exit_code: u8,
    message: &'a str,
}

/// `{"schema": 1, "error": {"exit_code": N, "message": "..."}}`: what a
/// script reads on stdout when a command stopped before its own document.
pub(crate) fn error_json(exit_code: u8, message: &str) -> String {
    json::document(&ErrorDoc {
        schema: SCHEMA,
        error: ErrorBody { exit_code, message },
    })
}

/// A borderless table, styled only when `color` is on.
pub(crate) fn table(color: bool) -> Table {
    let mut t = Table::new();
    t.load_style(presets::NOTHING)
        .set_content_arrangement(ContentArrangement::Dynamic);
    if color {
        t.enforce_styling().style_text_only();
    } else {
        t.force_no_tty();
    }
    t
}

/// The one colour table: each state's ANSI code (lines) and table colour.
pub(crate) fn state_colors(s: State) -> (&'static str, Color) {
    match s {
        State::Active => ("32", Color::Green),
        State::Starting => ("36", Color::Cyan),
        State::Degraded => ("33", Color::Yellow),
        State::Inactive => ("2", Color::Grey),
        State::Failed | State::Invalid | State::Conflict | State::Orphaned => ("31", Color::Red),
        State::Unknown => ("35", Color::Magenta),
    }
}

pub(crate) fn state_color(s: State) -> Color {
    state_colors(s).1
}

pub(crate) fn state_cell(s: State, color: bool) -> Cell {
    let c = Cell::new(s.as_str());
    if color { c.fg(state_color(s)) } else { c }
}

/// Status table: module (or `module/service`), kind, state, desired state
/// (`up`, `down`, or `-` when hal never started or stopped it), detail,
/// starts in window, since.
pub(crate) fn status_table(modules: &[ModuleStatus], color: bool, now: Stamp) -> String {
    let mut t = table(color);
    t.set_header([
        "MODULE", "KIND", "STATE", "DESIRED", "DETAIL", "STARTS", "SINCE",
    ]);
    for m in modules {
        let starts = format!("{}/{}", m.limit.used, m.limit.burst);
        let since = m.since.map(|t| ago(now, t)).unwrap_or_default();
        t.add_row(vec![
            Cell::new(m.label()),
            Cell::new(m.kind.as_str()),
            state_cell(m.state, color),
            Cell::new(m.desired.map_or("-", Desired::as_str)),
            Cell::new(detail(m, now)),
            Cell::new(starts),
            Cell::new(since),
        ]);
    }
    trim_lines(t.trim_fmt())
}

/// `status`: the table, or nothing under `-q` (the exit code is the answer).
impl Rows for ModuleStatus {
    fn table(rows: &[Self], style: &Style) -> String {
        if style.quiet {
            String::new()
        } else {
            status_table(rows, style.color, Stamp::now())
        }
    }
}

/// The detail column: why a module is not active; for a timer, also its last and next run.
fn detail(m: &ModuleStatus, now: Stamp) -> String {
    let reason = m.reason.clone().unwrap_or_default();
    let Some(t) = &m.timer else { return reason };
    let mut runs = Vec::new();
    match (t.last_run.or(t.last_exit), &t.last_result) {
        (Some(at), Some(r)) => runs.push(format!("last run {} ago: {r}", ago(now, at))),
        (Some(at), None) => runs.push(format!("last run {} ago", ago(now, at))),
        (None, _) => runs.push("never ran".to_string()),
    }
    if let Some(next) = t.next_run {
        let when = if next > now {
            format!("in {}", ago(next, now))
        } else {
            "now".to_string()
        };
        runs.push(format!("next {when}"));
    }
    let runs = runs.join(", ");
    if reason.is_empty() {
        runs
    } else {
        format!("{reason} ({runs})")
    }
}

/// One row per module of `hal module list`.
#[derive(Serialize)]
pub(crate) struct ListEntry<'a> {
    pub name: &'a str,
    pub kind: &'static str,
    /// The compose file, or `unit (scope)`.
    pub source: String,
    pub dir: Option<String>,
    pub unit: Option<&'a str>,
    pub scope: Option<&'static str>,
    pub valid: bool,
    pub reason: Option<&'a str>,
}

pub(crate) fn list_entries(modules: &[Module]) -> Vec<ListEntry<'_>> {
    modules
        .iter()
        .map(|m| {
            let (dir, unit, scope, reason) = match &m.kind {
                Kind::Stack { dir, .. } => (Some(dir.display().to_string()), None, None, None),
                Kind::Host { unit, scope } => {
                    (None, Some(unit.as_str()), Some(scope.as_str()), None)
                }
                Kind::Invalid { reason } => (None, None, None, Some(reason.as_str())),
            };
            ListEntry {
                name: &m.name,
                kind: m.kind_name(),
                source: m.source(),
                dir,
                unit,
                scope,
                valid: reason.is_none(),
                reason,
            }
        })
        .collect()
}

pub(crate) fn list_table(entries: &[ListEntry<'_>], color: bool) -> String {
    let mut t = table(color);
    t.set_header(["MODULE", "KIND", "SOURCE"]);
    for e in entries {
        let kind = if e.valid || !color {
            Cell::new(e.kind)
        } else {
            Cell::new(e.kind).fg(Color::Red)
        };
        t.add_row(vec![
            Cell::new(e.name),
            kind,
            Cell::new(e.reason.map_or_else(|| e.source.clone(), str::to_string)),
        ]);
    }
    trim_lines(t.trim_fmt())
}

impl Rows for ListEntry<'_> {
    fn table(rows: &[Self], style: &Style) -> String {
        list_table(rows, style.color)
    }
}

/// `3s`, `5m`, `2h`, `4d` ago.
pub(crate) fn ago(now: Stamp, then: Stamp) -> String {
    let s = now.since(then).as_secs();
    match s {
        0..=119 => format!("{s}s"),
        120..=7199 => format!("{}m", s / 60),
        7200..=172_799 => format!("{}h", s / 3600),
        _ => format!("{}d", s / 86_400),
    }
}

pub(crate) fn trim_lines(s: String) -> String {
    let mut out: String = s.lines().map(str::trim_end).collect::<Vec<_>>().join("\n");
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_document_is_json_with_code_and_message() {
        let doc: serde_json::Value =
            serde_json::from_str(&error_json(4, "no such module: \"ghost\"")).unwrap();
        assert_eq!(doc["schema"], 1);
        assert_eq!(doc["error"]["exit_code"], 4);
        assert_eq!(doc["error"]["message"], "no such module: \"ghost\"");
    }
}
