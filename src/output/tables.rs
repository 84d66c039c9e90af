//! The tables of the commands that plan before they act (rescue, adopt): their plan and their report, for people.

use comfy_table::Cell;

use crate::module::status::State;
use crate::output::render::{state_cell, table, trim_lines};
use crate::output::view::Style;

/// One module of a rescue plan.
pub(crate) struct RescueStep<'a> {
    pub name: &'a str,
    pub critical: bool,
    /// Its state when the plan was made.
    pub was: State,
    pub action: &'a str,
    /// Why it needs rescue.
    pub why: &'a str,
}

/// `MODULE WAS ACTION WHY`, a critical module marked so.
pub(crate) fn rescue_plan<'a>(
    steps: impl IntoIterator<Item = RescueStep<'a>>,
    style: &Style,
) -> String {
    let color = style.color;
    let rows = steps.into_iter().map(|s| {
        let name = if s.critical {
            format!("{} (critical)", s.name)
        } else {
            s.name.to_string()
        };
        vec![
            Cell::new(name),
            state_cell(s.was, color),
            Cell::new(s.action),
            Cell::new(s.why),
        ]
    });
    grid(&["MODULE", "WAS", "ACTION", "WHY"], rows, color)
}

/// One module of a rescue's report.
pub(crate) struct RescueDone<'a> {
    pub step: RescueStep<'a>,
    /// Its state now, or `None` when the rescue failed.
    pub now: Option<State>,
    pub took_ms: u64,
}

/// `MODULE WAS ACTION NOW TOOK`.
pub(crate) fn rescue_report<'a>(
    rows: impl IntoIterator<Item = RescueDone<'a>>,
    style: &Style,
) -> String {
    let color = style.color;
    let rows = rows.into_iter().map(|r| {
        vec![
            Cell::new(r.step.name),
            state_cell(r.step.was, color),
            Cell::new(r.step.action),
            r.now
                .map_or_else(|| Cell::new("error"), |s| state_cell(s, color)),
            Cell::new(format!("{:.1}s", r.took_ms as f64 / 1000.0)),
        ]
    });
    grid(&["MODULE", "WAS", "ACTION", "NOW", "TOOK"], rows, color)
}

/// One module of an adopt plan.
pub(crate) struct AdoptStep<'a> {
    pub name: &'a str,
    /// What runs it now, in words.
    pub was: &'a str,
    /// What hal will do, in words.
    pub action: &'a str,
    /// Why it is left alone, if it is.
    pub refused: Option<&'a str>,
}

/// `MODULE RUN BY NOW HAL WILL`.
pub(crate) fn adopt_plan<'a>(
    steps: impl IntoIterator<Item = AdoptStep<'a>>,
    style: &Style,
) -> String {
    let color = style.color;
    let rows = steps.into_iter().map(|s| {
        let will = match s.refused {
            Some(why) => format!("refuse: {why}"),
            None => s.action.to_string(),
        };
        vec![Cell::new(s.name), Cell::new(s.was), Cell::new(will)]
    });
    grid(&["MODULE", "RUN BY NOW", "HAL WILL"], rows, color)
}

/// One module of an adopt's report.
pub(crate) struct AdoptDone<'a> {
    pub step: AdoptStep<'a>,
    /// Who runs it now, in words.
    pub now: &'a str,
    /// What the next start will do.
    pub next_start: &'a str,
}

/// `MODULE WAS NOW NEXT START`.
pub(crate) fn adopt_report<'a>(
    rows: impl IntoIterator<Item = AdoptDone<'a>>,
    style: &Style,
) -> String {
    let color = style.color;
    let rows = rows.into_iter().map(|r| {
        [r.step.name, r.step.was, r.now, r.next_start]
            .map(Cell::new)
            .to_vec()
    });
    grid(&["MODULE", "WAS", "NOW", "NEXT START"], rows, color)
}

/// A borderless table: `header`, then `rows`, each line trimmed.
pub(crate) fn grid(
    header: &[&str],
    rows: impl IntoIterator<Item = Vec<Cell>>,
    color: bool,
) -> String {
    let mut t = table(color);
    t.set_header(header.to_vec());
    for row in rows {
        t.add_row(row);
    }
    trim_lines(t.trim_fmt())
}

#[cfg(test)]
mod tests {
    use super::*;

    const PLAIN: Style = Style {
        color: false,
        color_err: false,
        quiet: false,
    };

    fn step(critical: bool) -> RescueStep<'static> {
        RescueStep {
            name: "db",
            critical,
            was: State::Failed,
            action: "recreate",
            why: "exited 1",
        }
    }

    #[test]
    fn rescue_tables_mark_critical_modules_and_failed_rescues() {
        assert_eq!(
            rescue_plan([step(true), step(false)], &PLAIN),
            " MODULE         WAS     ACTION    WHY\n db (critical)  failed  recreate  exited 1\n db             failed  recreate  exited 1\n"
        );
        let done = RescueDone {
            step: step(false),
            now: None,
            took_ms: 1250,
        };
        let report = rescue_report([done], &PLAIN);
        assert!(
            report.lines().nth(1).is_some_and(|l| l.contains("error")),
            "{report}"
        );
        assert!(
            report.contains("1.2s") || report.contains("1.3s"),
            "{report}"
        );
    }

    #[test]
    fn adopt_plan_says_why_a_module_is_refused() {
        let s = AdoptStep {
            name: "c",
            was: "hal-module@c.service",
            action: "leave it alone",
            refused: Some("another ExecStart"),
        };
        let plan = adopt_plan([s], &PLAIN);
        assert!(plan.contains("refuse: another ExecStart"), "{plan}");
        assert!(!plan.contains("leave it alone"), "{plan}");
    }
}
