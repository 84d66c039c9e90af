//! The flow of the commands that plan before they act (rescue, adopt): say the plan, ask once, apply, report.

use std::borrow::Cow;
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::cmd::ctx::Ctx;
use crate::error::Exit;
use crate::output::view::{Modules, PlanReport, Rows, Style};

/// What is asked before a plan is applied.
pub(crate) struct PlanAsk<'a> {
    /// `--dry-run`: the plan is the answer (its document), nothing is done.
    pub dry_run: bool,
    /// Said when the plan is empty.
    pub nothing: &'a str,
    /// The question, or `None` when there is nothing to agree to.
    pub question: Option<String>,
}

/// One module of a plan: a row of the plan's table and, once applied, of the
/// report's (a [`Done`]).
pub(crate) trait Planned: Rows + Clone {
    /// What the report says of a module besides whether it went well and why not.
    type After: Serialize;
    /// The report's table for people.
    fn report(rows: &[Done<'_, Self>], style: &Style) -> String;
}

/// One line of the report: the plan's line, whether it went well, what the
/// command says of it now, and why it failed. The plan's line is borrowed,
/// or owned when the work added a module the plan did not name (rescue's
/// namespace dependents).
#[derive(Serialize)]
pub(crate) struct Done<'a, S: Planned> {
    #[serde(flatten)]
    pub step: Cow<'a, S>,
    pub ok: bool,
    #[serde(flatten)]
    pub after: S::After,
    pub error: Option<String>,
}

impl<S: Planned> Rows for Done<'_, S> {
    fn table(rows: &[Self], style: &Style) -> String {
        S::report(rows, style)
    }
}

/// How a plan ended.
pub(crate) enum PlanEnd {
    /// Nothing to do, a dry run, or a person said no: the exit to end with.
    Stopped(Exit),
    /// Applied and reported: the exit the work came to, and how long it took.
    Applied { exit: Exit, took: Duration },
}

/// An empty plan is said as such; under `--dry-run` the plan is the document;
/// otherwise its table goes to stderr, the question is asked once, `apply`
/// does the work (printing what went wrong as it goes), and its rows are the
/// report.
pub(crate) async fn confirm_and_apply<'a, S: Planned>(
    ctx: &Ctx,
    plan: &'a [S],
    ask: PlanAsk<'_>,
    apply: impl AsyncFnOnce() -> (Vec<Done<'a, S>>, Exit),
) -> anyhow::Result<PlanEnd> {
    if plan.is_empty() {
        ctx.ui.nothing(ask.nothing);
        return Ok(PlanEnd::Stopped(Exit::Ok));
    }
    if ask.dry_run {
        ctx.ui.show(&Modules::new(plan));
        return Ok(PlanEnd::Stopped(Exit::Ok));
    }
    ctx.ui.preview(&Modules::new(plan));
    if let Some(question) = &ask.question
        && !ctx.ui.confirm(question)?
    {
        return Ok(PlanEnd::Stopped(Exit::Failed));
    }
    let began = Instant::now();
    let (rows, exit) = apply().await;
    let took = began.elapsed();
    ctx.ui.show(&PlanReport::new(&rows));
    Ok(PlanEnd::Applied { exit, took })
}
