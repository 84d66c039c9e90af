//! `hal rescue` / `hal module rescue`: find what failed, say the plan, ask once, recover, report.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::cli::RescueArgs;
use crate::cmd::ctx::Ctx;
use crate::cmd::plan::{Done, PlanAsk, PlanEnd, Planned, confirm_and_apply};
use crate::error::{Exit, HalError};
use crate::module::KindTag;
use crate::module::outcome::{StartOpts, Would};
use crate::module::status::{ModuleStatus, State};
use crate::module::target::Target;
use crate::module::warning::Warning;
use crate::output::tables::{self, RescueDone, RescueStep};
use crate::output::view::{Modules, Rows, Style};
use crate::run::{self, Verb};

/// How long rescue waits for a Docker engine that is down.
const ENGINE_WAIT: Duration = Duration::from_secs(60);

/// One module to rescue: a line of the plan.
#[derive(Serialize, Clone)]
struct ToRescue {
    name: String,
    kind: &'static str,
    was: State,
    reason: Option<String>,
    action: &'static str,
    critical: bool,
}

/// What the report says of a module rescued: rescue's own `now` beside the
/// fields of every verb's document (`state`, `diagnosis`, `exit_code`,
/// `warnings`, `changed`), as `start`, `stop` and `restart` say them.
#[derive(Serialize)]
struct Rescued {
    /// Its state now, or `None` when its rescue failed.
    now: Option<State>,
    /// Its state now; `failed` when its rescue failed.
    state: Option<State>,
    /// A failure's diagnosis: which service is not up, its state and last log lines.
    diagnosis: Option<String>,
    /// 0 when it is active again; the failure's code, or 1 when it came back not active.
    exit_code: u8,
    took_ms: u64,
    warnings: Vec<Warning>,
    /// Whether it was recreated or restarted (false when that failed).
    changed: bool,
}

/// A line of `rescue --dry-run`'s document: the plan's line with the fields of
/// every verb's document as a dry run says them (`start --dry-run`'s): its
/// `state` now, nothing changed, and what it `would` undergo.
#[derive(Serialize)]
struct Foreseen<'a> {
    #[serde(flatten)]
    step: &'a ToRescue,
    state: State,
    ok: bool,
    error: Option<String>,
    diagnosis: Option<String>,
    exit_code: u8,
    took_ms: u64,
    warnings: Vec<Warning>,
    changed: bool,
    /// `recreate` (a stack) or `restart` (a unit: reset-failed, then restart).
    would: Would,
}

pub(crate) async fn run(ctx: &Ctx, a: RescueArgs) -> anyhow::Result<Exit> {
    let modules = if a.modules.is_empty() {
        ctx.node.inventory.modules.clone()
    } else {
        ctx.node.inventory.resolve(&a.modules)?
    };
    ctx.node.store.check_writable()?;
    // Refused before the engine is waited for and the plan is asked: a
    // node whose module graph cannot be built (exit 2).
    let targets: Vec<Target> = modules.iter().cloned().map(Target::whole).collect();
    run::check(&ctx.node, &targets, &verb(a.timeout)).await?;
    let engine_wait = a.timeout.unwrap_or(ENGINE_WAIT);
    if modules.iter().any(|m| m.is_stack()) {
        wait_for_docker(ctx, engine_wait).await?;
    }
    let node = crate::run::collect_status(&ctx.node, &modules, ctx.ui.status_detail()).await;
    for w in &node.warnings {
        ctx.ui.warn(w);
    }
    let plan = plan(ctx, &node.modules, !a.modules.is_empty(), a.auto);
    if a.dry_run && !plan.is_empty() {
        let rows: Vec<Foreseen> = plan.iter().map(ToRescue::foreseen).collect();
        ctx.ui.show(&Modules::new(&rows));
        return Ok(Exit::Ok);
    }
    let ask = PlanAsk {
        dry_run: a.dry_run,
        nothing: "nothing to rescue: no module is failed",
        question: Some(format!("rescue {} module(s)?", plan.len())),
    };
    let apply = async || rescue(ctx, &plan, &node.modules, a.timeout).await;
    Ok(match confirm_and_apply(ctx, &plan, ask, apply).await? {
        PlanEnd::Stopped(exit) => exit,
        PlanEnd::Applied { exit, took } => {
            ctx.ui
                .note(&format!("rescue took {:.1}s", took.as_secs_f64()));
            exit
        }
    })
}

/// A rescue's verb: every image as the module says, each waited for
/// `active` within `timeout` (the module's own when `None`).
fn verb(timeout: Option<Duration>) -> Verb {
    Verb::Rescue {
        opts: StartOpts {
            pull: None,
            wait: true,
            timeout,
        },
    }
}

/// Runs the plan as one verb (`run::verb`: critical modules and what they
/// require first, then the modules in the network namespace of one it
/// recreated); says each failure, and reports every module, those
/// dependents beside the plan's.
async fn rescue<'a>(
    ctx: &Ctx,
    plan: &'a [ToRescue],
    before: &[ModuleStatus],
    timeout: Option<Duration>,
) -> (Vec<Done<'a, ToRescue>>, Exit) {
    let verb = verb(timeout);
    let targets = plan
        .iter()
        .filter_map(|s| ctx.node.inventory.get(&s.name).cloned())
        .map(Target::whole)
        .collect();
    let caller = run::Caller {
        progress: &ctx.ui,
        note: &|_| {},
        confirm: None,
        finished: &|_, _| {},
    };
    let call = run::Call {
        verb: &verb,
        targets,
        jobs: ctx.node.jobs(None),
        dry_run: false,
    };
    let (mut done, more, were) = match run::verb(&ctx.node, &caller, call).await {
        Ok(ran) => (ran.reports, ran.followers, ran.followers_were),
        // Checked before the plan was said (`run`): nothing is left to refuse.
        Err(e) => {
            ctx.ui.fail(&e);
            return (Vec::new(), crate::error::exit_of(&e));
        }
    };
    let followers: Vec<ToRescue> = more
        .iter()
        .map(|r| follower(ctx, r, before, &were))
        .collect();
    let steps = plan
        .iter()
        .map(Cow::Borrowed)
        .chain(followers.into_iter().map(Cow::Owned));
    done.extend(more);
    let mut exit = Exit::Ok;
    // Each step with its own module's report, by name (not by position).
    let rows: Vec<Done<ToRescue>> = steps
        .filter_map(|step| {
            let r = done.iter().find(|r| r.module.name == step.name)?;
            Some((step, r))
        })
        .map(|(step, r)| {
            exit = exit.worst(r.exit());
            done_row(step, r, &verb)
        })
        .collect();
    for r in &done {
        if let Err(e) = &r.result {
            ctx.ui.fail(e);
        }
    }
    if exit == Exit::Ok && rows.iter().any(|r| !r.ok) {
        exit = Exit::Failed;
    }
    (rows, exit)
}

/// The report's line of one step, with its module's report: `ok` when the
/// module is active again, and the fields of every verb's document.
fn done_row<'a>(step: Cow<'a, ToRescue>, r: &run::Report, verb: &Verb) -> Done<'a, ToRescue> {
    let ok = r.result.as_ref().is_ok_and(|o| o.state == State::Active);
    let doc = r.to_json(verb);
    let exit = match r.exit() {
        Exit::Ok if !ok => Exit::Failed,
        e => e,
    };
    Done {
        step,
        ok,
        after: Rescued {
            now: r.result.as_ref().ok().map(|o| o.state),
            state: doc.state,
            diagnosis: doc.diagnosis,
            exit_code: exit.code(),
            took_ms: doc.took_ms,
            warnings: doc.warnings,
            changed: doc.changed,
        },
        error: doc.error,
    }
}

/// The step of a module restarted after one rescue recreated (it shares its
/// network namespace or volumes): not in the plan, reported beside it.
fn follower(
    ctx: &Ctx,
    r: &run::Report,
    before: &[ModuleStatus],
    were: &BTreeMap<String, State>,
) -> ToRescue {
    let name = r.module.name.clone();
    let was = before
        .iter()
        .find(|s| s.name == name && s.service.is_none())
        .map(|s| s.state)
        .or_else(|| were.get(&name).copied())
        .unwrap_or(State::Unknown);
    let reason = r.result.as_ref().ok().and_then(|o| o.warnings.first());
    ToRescue {
        kind: r.module.kind_name(),
        was,
        reason: reason.map(ToString::to_string),
        action: "restart",
        critical: ctx
            .node
            .config
            .modules
            .get(&name)
            .is_some_and(|m| m.critical),
        name,
    }
}

/// Waits a bounded time for a Docker engine that does not answer.
async fn wait_for_docker(ctx: &Ctx, bound: Duration) -> Result<(), HalError> {
    // An endpoint that cannot be used is no engine to wait for (exit 2 now).
    ctx.node.stacks.endpoint()?;
    let first = match ctx.node.stacks.reach().await {
        Ok(_) => return Ok(()),
        Err(e @ HalError::DockerPermission { .. }) => return Err(e),
        Err(e) => e,
    };
    ctx.ui.problem(&format!(
        "rescue: {first}; waiting up to {} for it to come back",
        crate::util::duration::format(bound)
    ));
    let deadline = Instant::now() + bound;
    let mut last = first;
    while Instant::now() < deadline {
        tokio::time::sleep(Duration::from_secs(2)).await;
        match ctx.node.stacks.reach().await {
            Ok(_) => {
                ctx.ui.problem("rescue: Docker is back");
                return Ok(());
            }
            Err(e) => last = e,
        }
    }
    Err(last)
}

/// What to rescue: the named modules, or every failed one; `auto` keeps only
/// modules a person wants up, and then also takes inactive or degraded ones.
fn plan(ctx: &Ctx, statuses: &[ModuleStatus], named: bool, auto: bool) -> Vec<ToRescue> {
    let mut steps: Vec<ToRescue> = statuses
        .iter()
        .filter(|s| s.kind != KindTag::Invalid)
        .filter(|s| {
            if auto {
                s.wanted_up()
                    && (named
                        || matches!(s.state, State::Failed | State::Degraded | State::Inactive))
            } else {
                named || s.state == State::Failed
            }
        })
        .map(|s| ToRescue {
            name: s.name.clone(),
            kind: s.kind.as_str(),
            was: s.state,
            reason: s.reason.text(),
            action: if s.kind == KindTag::Host {
                "reset-failed, restart"
            } else {
                "recreate"
            },
            critical: ctx
                .node
                .config
                .modules
                .get(&s.name)
                .is_some_and(|m| m.critical),
        })
        .collect();
    steps.sort_by_key(|s| !s.critical);
    steps
}

impl ToRescue {
    fn row(&self) -> RescueStep<'_> {
        RescueStep {
            name: &self.name,
            critical: self.critical,
            was: self.was,
            action: self.action,
            why: self.reason.as_deref().unwrap_or(""),
        }
    }
}

impl ToRescue {
    /// Its line of `rescue --dry-run`'s document: nothing done, nothing changed.
    fn foreseen(&self) -> Foreseen<'_> {
        Foreseen {
            step: self,
            state: self.was,
            ok: true,
            error: None,
            diagnosis: None,
            exit_code: Exit::Ok.code(),
            took_ms: 0,
            warnings: Vec::new(),
            changed: false,
            would: if self.kind == KindTag::Host.as_str() {
                Would::Restart
            } else {
                Would::Recreate
            },
        }
    }
}

impl Rows for Foreseen<'_> {
    fn table(rows: &[Self], style: &Style) -> String {
        tables::rescue_plan(rows.iter().map(|r| r.step.row()), style)
    }
}

impl Rows for ToRescue {
    fn table(plan: &[Self], style: &Style) -> String {
        tables::rescue_plan(plan.iter().map(ToRescue::row), style)
    }
}

impl Planned for ToRescue {
    type After = Rescued;
    fn report(rows: &[Done<'_, Self>], style: &Style) -> String {
        let rows = rows.iter().map(|r| RescueDone {
            step: r.step.row(),
            now: r.after.now,
            took_ms: r.after.took_ms,
        });
        tables::rescue_report(rows, style)
    }
}
