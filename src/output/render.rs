//! The tables people read for status and list, and the error document scripts read (no logic, no engine).

use comfy_table::{Cell, Color, ContentArrangement, Table, presets};
use serde::Serialize;

use crate::module::Module;
use crate::module::deps::{Graph, Origin, Strength};
use crate::module::last_run::Run;
use crate::module::status::{Desired, ModuleStatus, State};
use crate::output::json;
use crate::output::view::{Rows, SCHEMA, Style};
use crate::util::timefmt::Stamp;

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
            let mut text = status_table(rows, style.color, Stamp::now());
            for r in rows {
                for run in r.last_runs.iter().flatten() {
                    text.push_str(&last_run(&r.name, run));
                }
            }
            text
        }
    }
}

/// Lines of a kept failed run shown under the table (the document has them all).
const SHOWN_LINES: usize = 10;

/// "last run of web/db: exit 137 (OOM) at …, its last lines:" and those lines, each ending in a newline.
fn last_run(module: &str, run: &Run) -> String {
    let label = format!("{module}/{}", run.service);
    let at = run.at.rfc3339();
    let mut text = format!("last run of {label}: {} at {at}", run.how());
    if run.lines.is_empty() {
        text.push_str(", no lines\n");
    } else {
        text.push_str(", its last lines:\n");
    }
    let skip = run.lines.len().saturating_sub(SHOWN_LINES);
    for l in &run.lines[skip..] {
        text.push_str(&format!("  {label} | {}\n", l.message));
    }
    text
}

/// The detail column: why a module is not active; for a timer, also its last and next run.
fn detail(m: &ModuleStatus, now: Stamp) -> String {
    let reason = m.reason.to_string();
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
    /// What the module requires or comes after, each edge with its origin.
    pub edges: Vec<EdgeJson>,
}

/// One edge out of a module, as `list` shows it.
#[derive(Serialize)]
pub(crate) struct EdgeJson {
    /// The module it requires or comes after.
    pub to: String,
    /// `requires` (hard) or `after` (order only).
    pub strength: &'static str,
    /// `declared`, `namespace`, `network` or `link`.
    pub tie: &'static str,
    pub origin: OriginJson,
    /// It names no module (an `after` only: a `requires` naming none is a
    /// config error): nothing is ordered by it, and `hal doctor` warns.
    pub missing: bool,
}

/// Where an edge came from: the config's key and line, or a compose file's key.
#[derive(Serialize)]
#[serde(tag = "source", rename_all = "lowercase")]
pub(crate) enum OriginJson {
    Config {
        key: &'static str,
        line: Option<usize>,
    },
    Compose {
        file: String,
        key: String,
    },
}

fn edges_of(graph: Option<&Graph>, modules: &[Module], module: &str) -> Vec<EdgeJson> {
    let Some(g) = graph else {
        return Vec::new();
    };
    g.of(module)
        .into_iter()
        .map(|e| EdgeJson {
            to: e.to.clone(),
            strength: match e.strength {
                Strength::Requires => "requires",
                Strength::After => "after",
            },
            tie: e.tie.word(),
            origin: match &e.origin {
                Origin::Config { key, line } => OriginJson::Config { key, line: *line },
                Origin::Compose { file, key } => OriginJson::Compose {
                    file: file.display().to_string(),
                    key: key.clone(),
                },
            },
            missing: !modules.iter().any(|m| m.name == e.to),
        })
        .collect()
}

/// An edge in `list`'s table: `db (requires: config line 3)`,
/// `gw (requires, namespace: compose.yaml services.vpn.network_mode)`.
fn edge_words(e: &EdgeJson) -> String {
    let how = match e.tie {
        "declared" => e.strength.to_string(),
        tie => format!("{}, {tie}", e.strength),
    };
    let origin = match &e.origin {
        // The key is the edge's strength: the line says the rest.
        OriginJson::Config { line: Some(l), .. } => format!("config line {l}"),
        OriginJson::Config { line: None, .. } => "config".to_string(),
        OriginJson::Compose { file, key } => {
            let name = std::path::Path::new(file)
                .file_name()
                .map_or(file.clone(), |n| n.to_string_lossy().into_owned());
            format!("{name} {key}")
        }
    };
    let missing = if e.missing { "; no such module" } else { "" };
    format!("{} ({how}: {origin}{missing})", e.to)
}

pub(crate) fn list_entries<'a>(modules: &'a [Module], graph: Option<&Graph>) -> Vec<ListEntry<'a>> {
    modules
        .iter()
        .map(|m| {
            let reason = m.invalid_reason();
            let host = m.host_unit();
            ListEntry {
                name: &m.name,
                kind: m.kind_name(),
                source: m.source(),
                dir: m.stack_dir().map(|d| d.display().to_string()),
                unit: host.map(|(unit, _)| unit),
                scope: host.map(|(_, scope)| scope.as_str()),
                valid: reason.is_none(),
                reason,
                edges: edges_of(graph, modules, &m.name),
            }
        })
        .collect()
}

pub(crate) fn list_table(entries: &[ListEntry<'_>], color: bool) -> String {
    let mut t = table(color);
    // The edges' column only on a node that has edges.
    let deps = entries.iter().any(|e| !e.edges.is_empty());
    if deps {
        t.set_header(["MODULE", "KIND", "SOURCE", "DEPENDS ON"]);
    } else {
        t.set_header(["MODULE", "KIND", "SOURCE"]);
    }
    for e in entries {
        let kind = if e.valid || !color {
            Cell::new(e.kind)
        } else {
            Cell::new(e.kind).fg(Color::Red)
        };
        let mut row = vec![
            Cell::new(e.name),
            kind,
            Cell::new(e.reason.map_or_else(|| e.source.clone(), str::to_string)),
        ];
        if deps {
            let words: Vec<String> = e.edges.iter().map(edge_words).collect();
            row.push(Cell::new(words.join("\n")));
        }
        t.add_row(row);
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

    #[test]
    fn a_kept_run_shows_its_exit_time_and_last_ten_lines() {
        use crate::module::last_run::KeptLine;
        let lines = (1..=12)
            .map(|i| KeptLine {
                time: crate::util::timefmt::parse("2026-01-01T03:11:59.5Z").unwrap(),
                stderr: false,
                message: format!("line {i}"),
            })
            .collect();
        let run = Run {
            service: "db".into(),
            container: "web-db-1".into(),
            container_id: "abc".into(),
            exit_code: Some(137),
            oom_killed: true,
            unhealthy: false,
            at: crate::util::timefmt::parse("2026-01-01T03:12:00.25Z").unwrap(),
            lines,
        };
        let text = last_run("web", &run);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            "last run of web/db: exit 137 (OOM) at 2026-01-01T03:12:00Z, its last lines:"
        );
        assert_eq!(lines[1], "  web/db | line 3");
        assert_eq!(lines.len(), 11);
        let none = last_run(
            "web",
            &Run {
                lines: Vec::new(),
                ..run
            },
        );
        assert!(none.ends_with(", no lines\n"), "{none}");
    }
}
