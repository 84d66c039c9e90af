//! `hal plan`'s answer: every service's action and reasons in `--json`, a table of what would change for people.

use comfy_table::Cell;
use serde::Serialize;

use crate::module::service_action::{ModulePlan, ServiceAction};
use crate::output::tables::grid;
use crate::output::view::{Modules, Style, View};

/// The plan of some modules; `verbose` shows the services kept too.
#[derive(Serialize)]
#[serde(transparent)]
pub(crate) struct PlanView<'a> {
    modules: Modules<'a, ModulePlan>,
    #[serde(skip)]
    plans: &'a [ModulePlan],
    #[serde(skip)]
    verbose: bool,
}

impl<'a> PlanView<'a> {
    pub(crate) fn new(plans: &'a [ModulePlan], verbose: bool) -> PlanView<'a> {
        PlanView {
            modules: Modules::new(plans),
            plans,
            verbose,
        }
    }
}

impl View for PlanView<'_> {
    fn human(&self, style: &Style) -> String {
        plan_rows(self.plans, self.verbose, style)
    }
}

/// `MODULE SERVICE ACTION WHY`, a reason a line; "nothing would change" alone
/// when every service is kept (and `-v` is not asked).
fn plan_rows(plans: &[ModulePlan], verbose: bool, style: &Style) -> String {
    let mut rows = Vec::new();
    for m in plans {
        let mut first = true;
        if let Some(e) = &m.error {
            rows.push(vec![
                Cell::new(&m.name),
                Cell::new("-"),
                Cell::new("error"),
                Cell::new(e),
            ]);
            first = false;
        }
        for (action, list) in [("fail", &m.fails), ("wait", &m.waits)] {
            if list.is_empty() {
                continue;
            }
            let why: Vec<String> = list
                .iter()
                .map(|r| format!("{}: {}", r.what, r.detail))
                .collect();
            let module = if first { m.name.as_str() } else { "" };
            rows.push(vec![
                Cell::new(module),
                Cell::new("-"),
                Cell::new(action),
                Cell::new(why.join("\n")),
            ]);
            first = false;
        }
        for s in &m.services {
            if s.action == ServiceAction::Keep && !verbose {
                continue;
            }
            let module = if first { m.name.as_str() } else { "" };
            first = false;
            let why: Vec<String> = s
                .reasons
                .iter()
                .map(|r| format!("{}: {}", r.what, r.detail))
                .collect();
            rows.push(vec![
                Cell::new(module),
                Cell::new(&s.service),
                Cell::new(s.action.word()),
                Cell::new(why.join("\n")),
            ]);
        }
    }
    if rows.is_empty() {
        return "nothing would change\n".to_string();
    }
    if style.quiet {
        return String::new();
    }
    grid(&["MODULE", "SERVICE", "ACTION", "WHY"], rows, style.color)
}
