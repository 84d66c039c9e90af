//! The flow of the commands that plan before they act (rescue, adopt): say the plan, ask once, apply, report.

use std::time::{Duration, Instant};

use crate::cmd::ctx::Ctx;
use crate::error::Exit;
use crate::output::view::{Modules, Rows};

/// What is asked before a plan is applied.
pub(crate) struct Ask<'a> {
    /// `--dry-run`: the plan is the answer (its document), nothing is done.
    pub dry_run: bool,
    /// Said when the plan is empty.
    pub nothing: &'a str,
    /// The question, or `None` when there is nothing to agree to.
    pub question: Option<String>,
}

/// What a plan came to.
pub(crate) enum Outcome {
    /// Nothing to do, a dry run, or a person said no: the exit to end with.
    Stopped(Exit),
    /// Applied and reported: the exit the work came to, and how long it took.
    Applied { exit: Exit, took: Duration },
}

/// An empty plan is said as such; under `--dry-run` the plan is the document;
/// otherwise its table goes to stderr, the question is asked once, `apply`
/// does the work (printing what went wrong as it goes), and its rows are the
/// report.
pub(crate) async fn confirm_and_apply<S: Rows, D: Rows>(
    ctx: &Ctx,
    plan: &[S],
    ask: Ask<'_>,
    apply: impl AsyncFnOnce() -> (Vec<D>, Exit),
) -> anyhow::Result<Outcome> {
    if plan.is_empty() {
        ctx.ui.nothing(ask.nothing);
        return Ok(Outcome::Stopped(Exit::Ok));
    }
    if ask.dry_run {
        ctx.ui.show(&Modules::new(plan));
        return Ok(Outcome::Stopped(Exit::Ok));
    }
    ctx.ui.preview(&Modules::new(plan));
    if let Some(question) = &ask.question
        && !ctx.ui.confirm(question)?
    {
        return Ok(Outcome::Stopped(Exit::Failed));
    }
    let began = Instant::now();
    let (rows, exit) = apply().await;
    let took = began.elapsed();
    ctx.ui.show(&Modules::new(&rows));
    Ok(Outcome::Applied { exit, took })
}
