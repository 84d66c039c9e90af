//! What a verb did to each module, for people (a line each as it finishes, warnings, errors, a summary, and for an update over several a table) or for scripts (one document at the end).

use std::collections::BTreeMap;
use std::time::Duration;

use comfy_table::Cell;
use serde::Serialize;

use crate::module::KindTag;
use crate::module::outcome::{ImageChange, Outcome, UpdateFacts, Would};
use crate::module::reason::Reasons;
use crate::module::service_action::{ModulePlan, ServicePlan, Why};
use crate::module::status::State;
use crate::module::warning::Warning;
use crate::output::render::{state_cell, state_colors};
use crate::output::ui::{Ui, paint};
use crate::output::view::{Modules, Rows, Style};

/// A verb as the printer says it (run's `Verb::view`): its word, and what
/// its document and summary depend on.
#[derive(Clone, Copy, Debug)]
pub(crate) struct VerbView {
    /// `start`, `stop`, `update`…
    pub name: &'static str,
    /// It stops modules: a module it added was stopped first for others.
    pub stops: bool,
    /// It updates images: its reports carry an update's facts.
    pub updates: bool,
}

/// What a verb did to one module, as the printer reads it: run's `Report`
/// handed over (`Report::view`), with its document.
pub(crate) struct ReportView<'a> {
    /// `web`, or `web/worker` when one service was acted on.
    pub label: String,
    pub kind: KindTag,
    pub result: Result<&'a Outcome, &'a anyhow::Error>,
    pub took: Duration,
    /// Whether it started, stopped, restarted or recreated anything.
    pub changed: bool,
    /// Under `--dry-run`: what the verb would do.
    pub would: Option<Would>,
    /// Under `--dry-run` (and `update --check`): the plan, service by service.
    pub plan: Option<&'a ModulePlan>,
    /// Only for `update`: what it found and did besides its outcome.
    pub update: Option<&'a UpdateFacts>,
    /// Its row in the verb's document.
    pub doc: ReportJson,
}

/// The JSON shape of what a verb did to one module (run's `Report::to_json`):
/// the rows of every verb's document.
#[derive(Serialize)]
pub(crate) struct ReportJson {
    pub name: String,
    /// Only for `MODULE/SERVICE`: the service acted on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub service: Option<String>,
    pub kind: KindTag,
    pub action: &'static str,
    pub ok: bool,
    pub state: Option<State>,
    /// One line: why it is not active, or the cause of the failure.
    pub reason: Reasons,
    pub error: Option<String>,
    /// A failure's diagnosis: which service is not up, its state and last log lines (several lines).
    pub diagnosis: Option<String>,
    pub exit_code: u8,
    pub took_ms: u64,
    pub warnings: Vec<Warning>,
    /// Whether anything was started, stopped, restarted or recreated.
    pub changed: bool,
    /// Only under `--dry-run`: `start`, `recreate`, `restart`, `stop` or `none`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub would: Option<Would>,
    /// Only under `--dry-run` (and `update --check`): `hal plan`'s entry for
    /// the module, its `services`, `waits` and `fails`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plan: Option<PlanJson>,
    /// Only for a module a start pulled in: the modules of the call that require it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pulled_in_by: Option<Vec<String>>,
    /// Only for a module a stop stopped first: the modules of the call it requires.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stopped_first_for: Option<Vec<String>>,
    /// Only for `update`: what it found per service.
    #[serde(flatten)]
    pub update: Option<UpdateJson>,
}

/// A dry run's plan of one module (`plan` in its entry): `hal plan --json`'s
/// entry for it without the name and kind the entry already has.
#[derive(Serialize)]
pub(crate) struct PlanJson {
    pub services: Vec<ServicePlan>,
    pub waits: Vec<Why>,
    pub fails: Vec<Why>,
}

impl PlanJson {
    pub(crate) fn of(p: &ModulePlan) -> PlanJson {
        PlanJson {
            services: p.services.clone(),
            waits: p.waits.clone(),
            fails: p.fails.clone(),
        }
    }
}

/// What `update --json` adds to every verb's fields.
#[derive(Serialize)]
pub(crate) struct UpdateJson {
    /// Only under `--check`: whether some service's registry has another
    /// image; `null` when none has and some registry could not be asked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub update_available: Option<Option<bool>>,
    /// The update did not become active in time and was rolled back.
    pub rolled_back: bool,
    /// Not tried: `--max-failures` updates had failed before its turn.
    pub skipped: bool,
    /// Each changed service's image before (a `sha256:` digest, else the image id).
    pub from: BTreeMap<String, String>,
    /// Each changed service's image after (under `--check`: the registry's digest).
    pub to: BTreeMap<String, String>,
    /// Every service with a pulled image: its reference, `from`, `to` and `changed`.
    pub services: Vec<ImageChange>,
}

impl UpdateJson {
    /// The JSON shape of what an update found and did.
    pub(crate) fn of(facts: &UpdateFacts) -> UpdateJson {
        let f = facts;
        let changed = f.images.iter().filter(|i| i.changed);
        let pick = |f: fn(&ImageChange) -> &Option<String>| -> BTreeMap<String, String> {
            changed
                .clone()
                .filter_map(|i| f(i).clone().map(|d| (i.service.clone(), d)))
                .collect()
        };
        UpdateJson {
            update_available: f.check.then_some(f.available),
            rolled_back: f.rolled_back.is_some(),
            skipped: f.skipped,
            from: pick(|i| &i.from),
            to: pick(|i| &i.to),
            services: f.images.clone(),
        }
    }
}

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
        _ if u.update_available == Some(None) => "cannot check",
        _ if !r.ok => "failed",
        _ if u.update_available == Some(Some(true)) => "available",
        _ if u.update_available == Some(Some(false)) => "up to date",
        _ if r.changed => "updated",
        _ if r.kind == KindTag::Host => "nothing to pull",
        _ => "up to date",
    }
}

/// Prints one module's result for people as soon as its work is over (above the
/// progress area on a terminal); nothing for scripts, whose document comes at the end.
pub(crate) fn finished(ui: &Ui, verb: &VerbView, r: &ReportView) {
    if !ui.for_people() {
        return;
    }
    let o = match (r.result, r.would) {
        (Err(e), _) => return ui.fail(e),
        (Ok(o), Some(would)) => {
            let state = paint(ui.style().color, state_colors(o.state).0, o.state.as_str());
            let what = match would {
                Would::None => "nothing to do".to_string(),
                w => format!("would {}", w.as_str()),
            };
            return ui.say(&format!("{}: {what} (now {state})", r.label));
        }
        (Ok(o), None) => o,
    };
    for w in &o.warnings {
        ui.warn(&format!("{}: {w}", r.label));
    }
    let state = paint(ui.style().color, state_colors(o.state).0, o.state.as_str());
    let line = match r.update {
        Some(u) => update_line(r, o, u, &state),
        None => {
            let reason = o.reason.text().map_or(String::new(), |r| format!(": {r}"));
            format!(
                "{}: {state}{reason} ({} took {:.1}s)",
                r.label,
                verb.name,
                r.took.as_secs_f64()
            )
        }
    };
    ui.say(&line);
}

/// `web: updated api sha256:1a2b… → sha256:6f5e… (active, update took 3.2s)`.
fn update_line(r: &ReportView, o: &Outcome, u: &UpdateFacts, state: &str) -> String {
    let changed: Vec<String> = u.images.iter().filter(|i| i.changed).map(moved).collect();
    let what = match () {
        _ if u.skipped => o.reason.to_string(),
        _ if r.kind == KindTag::Host => "nothing to pull (a host unit)".to_string(),
        _ if u.available == Some(true) => format!("update available: {}", changed.join(", ")),
        _ if r.changed => format!("updated {}", changed.join(", ")),
        // A pull that failed asked nothing: the cached image runs, and nobody
        // knows whether it is the newest.
        _ if o
            .warnings
            .iter()
            .any(|w| matches!(w, Warning::PullFailed { .. })) =>
        {
            "not updated: the pull failed, the cached image runs".to_string()
        }
        _ if o.warnings.contains(&Warning::Pinned) => "pinned, left as it is".to_string(),
        // The registry's newer digest is one a rollback put aside: said below.
        _ if o
            .warnings
            .iter()
            .any(|w| matches!(w, Warning::Quarantined { .. })) =>
        {
            "not updated: the newer image is quarantined, the running image stays".to_string()
        }
        _ => "up to date".to_string(),
    };
    let word = if u.check { "check" } else { "update" };
    let took = match u.skipped {
        true => String::new(),
        false => format!(", {word} took {:.1}s", r.took.as_secs_f64()),
    };
    format!("{}: {what} ({state}{took})", r.label)
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
    verb: &VerbView,
    reports: Vec<ReportView>,
    took: Duration,
    because: &BTreeMap<String, Vec<String>>,
) {
    let summary = summary(verb, &reports, took);
    let n = reports.len();
    // A dry run's plan, for people: the table `hal plan` prints.
    let plans: Vec<ModulePlan> = reports.iter().filter_map(|r| r.plan.cloned()).collect();
    let docs: Vec<ReportJson> = reports
        .into_iter()
        .map(|r| {
            let mut doc = r.doc;
            if let Some(why) = because.get(&doc.name) {
                if verb.stops {
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
    if !plans.is_empty() {
        ui.show(&crate::output::plan_table::PlanView::new(&plans, false));
    }
    if n <= 1 {
        return;
    }
    if verb.updates {
        ui.show(&Modules::new(&docs));
    }
    ui.note(&summary);
}

/// `start 2 of 3 modules in 4.1s (1 failed)`; for an update, what it updated or found.
fn summary(verb: &VerbView, reports: &[ReportView], took: Duration) -> String {
    let (n, took) = (reports.len(), took.as_secs_f64());
    let count = |f: &dyn Fn(&ReportView) -> bool| reports.iter().filter(|r| f(r)).count();
    let facts = |r: &ReportView, f: fn(&UpdateFacts) -> bool| r.update.is_some_and(f);
    if !verb.updates {
        let failed = count(&|r| r.result.is_err());
        let said = match failed {
            0 => String::new(),
            f => format!(" ({f} failed)"),
        };
        let done = n - failed;
        return format!("{} {done} of {n} modules in {took:.1}s{said}", verb.name);
    }
    if reports.iter().any(|r| facts(r, |u| u.check)) {
        let available = count(&|r| facts(r, |u| u.available == Some(true)));
        let cannot = count(&|r| facts(r, |u| u.check && u.available.is_none()));
        let said = match cannot {
            0 => String::new(),
            c => format!(" ({c} could not be checked)"),
        };
        return format!(
            "checked {n} modules in {took:.1}s: {available} with an update available{said}"
        );
    }
    let updated = count(&|r| r.changed);
    let rolled = count(&|r| facts(r, |u| u.rolled_back.is_some()));
    let skipped = count(&|r| facts(r, |u| u.skipped));
    format!(
        "updated {updated} of {n} modules in {took:.1}s ({rolled} rolled back, {skipped} skipped)"
    )
}
