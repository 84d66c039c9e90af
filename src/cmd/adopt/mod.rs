//! `hal adopt`: take a live node over from `hal-module@` units and stacks started by hand, without stopping a container.
//!
//! Find (both scopes' `hal-module@` instances, running stacks hal has no
//! desired state for), say the plan, ask once, then for each module in turn:
//! disarm its units (their stop no longer runs `compose down`, nothing
//! restarts them), record the fast path's baseline and the desired state,
//! hand the units over (disabled, stopped, inactive). A run cut short at any
//! point leaves each module with one supervisor, or none that would stop it,
//! and the next run finishes the job: a disarmed unit is found again by its
//! drop-in, a module without a desired state by its running containers.

pub(crate) mod plan;

use std::time::Duration;

use serde::Serialize;

use self::plan::{TEMPLATE, ToAdopt, live};
use crate::cli::AdoptArgs;
use crate::cmd::ctx::Ctx;
use crate::cmd::plan::{Done, PlanAsk, PlanEnd, Planned, confirm_and_apply};
use crate::error::{Exit, OneLine};
use crate::host::init::{Instance, adoption_of};
use crate::module::config::Scope;
use crate::module::progress::Progress;
use crate::output::tables::{self, AdoptDone, AdoptStep};
use crate::output::view::{Rows, Style};
use crate::stack::Baseline;

/// How long systemd may take to stop a disarmed unit (it only kills `compose up`).
const STOP_TIMEOUT: Duration = Duration::from_secs(90);

/// Under `hal-module@`, `compose up` ran in the foreground and the unit's
/// journal kept every line; under hal the engine's log driver keeps them:
/// say so before taking over, when that driver drops them with each container.
async fn history_advice(ctx: &Ctx) {
    let Ok(session) = ctx.node.stacks.session().await else {
        return;
    };
    let path = std::path::Path::new("/etc/docker/daemon.json");
    if let Ok(k) = session.keeping(path).await
        && let (detail, Some(fix)) = k.advice()
    {
        ctx.ui.warn(&format!(
            "{detail} (hal-module@'s unit journal kept them); to keep history: {fix}"
        ));
    }
}

/// What the report says of a module adopted.
#[derive(Serialize)]
pub(crate) struct Adopted {
    /// Who runs it now, in words.
    now: String,
    /// What the next start will do: `recorded` (a no-op), or why compose runs.
    baseline: Option<String>,
}

pub(crate) async fn run(ctx: &Ctx, a: AdoptArgs) -> anyhow::Result<Exit> {
    let node = &ctx.node;
    node.store.check_writable()?;
    let instances = find_instances(ctx).await?;
    let stacks: Vec<_> = node.inventory.stacks().cloned().collect();
    let status = crate::run::collect_status(node, &stacks, ctx.ui.status_detail()).await;
    for w in status.warnings.iter().chain(&status.errors) {
        ctx.ui.warn(w);
    }
    let plan = plan::build(
        &instances,
        &node.inventory.modules,
        &status.modules,
        &node.inventory.root,
    );
    let nothing = format!(
        "nothing to adopt: no {TEMPLATE}@ unit is running, failed or enabled, and hal has a desired state for every running stack"
    );
    let todo = plan.iter().filter(|s| s.refused.is_none()).count();
    if todo > 0 {
        history_advice(ctx).await;
    }
    let ask = PlanAsk {
        dry_run: a.dry_run,
        nothing: &nothing,
        question: (todo > 0).then(|| format!("adopt {todo} module(s)?")),
    };
    Ok(
        match confirm_and_apply(ctx, &plan, ask, async || adopt_all(ctx, &plan).await).await? {
            PlanEnd::Stopped(exit) | PlanEnd::Applied { exit, .. } => exit,
        },
    )
}

/// Adopts each module in turn, then checks with the inits that no unit of
/// an adopted module is still live; says each failure, and reports every module.
async fn adopt_all<'a>(ctx: &Ctx, plan: &'a [ToAdopt]) -> (Vec<Done<'a, ToAdopt>>, Exit) {
    let mut rows = Vec::new();
    for step in plan {
        rows.push(adopt(ctx, step).await);
    }
    // What the inits say now: no unit of an adopted module may still be live.
    if let Ok(after) = find_instances(ctx).await {
        for row in rows.iter_mut().filter(|r| r.ok) {
            if let Some((_, i)) = after
                .iter()
                .find(|(_, i)| i.instance == row.step.name && live(i))
            {
                row.ok = false;
                row.error = Some(format!("{} is still {}", i.unit, words(i)));
                row.after.now = "error".into();
            }
        }
    }
    for r in &rows {
        if let Some(e) = &r.error {
            ctx.ui.problem(&format!("adopt {}: {e}", r.step.name));
        }
    }
    let exit = if rows.iter().all(|r| r.ok) {
        Exit::Ok
    } else {
        Exit::Failed
    };
    (rows, exit)
}

/// Every `hal-module@` instance of both scopes whose manager can be reached
/// (an unreachable user manager is a note, not a failure: there is nothing to find there).
async fn find_instances(ctx: &Ctx) -> anyhow::Result<Vec<(Scope, Instance)>> {
    let mut all = Vec::new();
    for scope in [Scope::System, Scope::User] {
        let init = ctx.node.hosts.init(scope);
        if let Err(e) = init.reachable() {
            ctx.ui.note(&format!(
                "adopt: {} scope not looked at: {e}",
                scope.as_str()
            ));
            continue;
        }
        let Some(adopt) = init.adoption() else {
            ctx.ui.note(&format!(
                "adopt: {} scope not looked at: {} has no template units to hand over",
                scope.as_str(),
                init.name()
            ));
            continue;
        };
        let found = adopt.instances(TEMPLATE).await?;
        all.extend(found.into_iter().map(|i| (scope, i)));
    }
    Ok(all)
}

fn words(i: &Instance) -> String {
    let mut w = Vec::new();
    if i.activity != crate::host::init::Activity::Inactive {
        w.push(i.activity.as_str().to_string());
    }
    if i.enabled {
        w.push("enabled".into());
    }
    if i.handing_over {
        w.push("half handed over".into());
    }
    w.join(", ")
}

/// Adopts one module; never stops a container.
async fn adopt<'a>(ctx: &Ctx, step: &'a ToAdopt) -> Done<'a, ToAdopt> {
    let row = |ok, now: String, baseline, error| Done {
        step: std::borrow::Cow::Borrowed(step),
        ok,
        after: Adopted { now, baseline },
        error,
    };
    if let Some(why) = &step.refused {
        return row(
            false,
            "left alone".into(),
            None,
            Some(format!("refused: {why}")),
        );
    }
    match act(ctx, step).await {
        Ok(baseline) => {
            let units = if step.units.is_empty() {
                String::new()
            } else {
                ", unit disabled and inactive".into()
            };
            row(
                true,
                format!("hal, desired {}{units}", step.desired.as_str()),
                baseline.map(|b| match b {
                    Baseline::Recorded => "recorded: the next start is a no-op".into(),
                    Baseline::Changed(s) => format!(
                        "not recorded: the files changed since {} started: the next start recreates them",
                        s.join(", ")
                    ),
                    Baseline::Unknown(why) => {
                        format!("not recorded ({why}): the next start runs compose")
                    }
                }),
                None,
            )
        }
        Err(e) => row(false, "error".into(), None, Some(OneLine(&e).to_string())),
    }
}

async fn act(ctx: &Ctx, step: &ToAdopt) -> anyhow::Result<Option<Baseline>> {
    let node = &ctx.node;
    let m = node
        .inventory
        .get(&step.name)
        .ok_or_else(|| anyhow::anyhow!("no module {}", step.name))?;
    ctx.ui.step(&step.name, "disarming its unit");
    for u in &step.units {
        let init = node.hosts.init(u.scope);
        adoption_of(&*init)?.disarm(&u.unit, STOP_TIMEOUT).await?;
    }
    let (baseline, warnings) =
        crate::run::adopt_stack(node, &ctx.ui, m, step.desired, step.runs).await?;
    for w in &warnings {
        ctx.ui.warn(&w.to_string());
    }
    ctx.ui.step(&step.name, "handing its unit over");
    for u in &step.units {
        let init = node.hosts.init(u.scope);
        adoption_of(&*init)?
            .hand_over(&u.unit, STOP_TIMEOUT)
            .await?;
    }
    Ok(baseline)
}

fn row(s: &ToAdopt) -> AdoptStep<'_> {
    AdoptStep {
        name: &s.name,
        was: &s.was,
        action: &s.action,
        refused: s.refused.as_deref(),
    }
}

impl Rows for ToAdopt {
    fn table(plan: &[Self], style: &Style) -> String {
        tables::adopt_plan(plan.iter().map(row), style)
    }
}

impl Planned for ToAdopt {
    type After = Adopted;
    fn report(rows: &[Done<'_, Self>], style: &Style) -> String {
        let rows = rows.iter().map(|r| AdoptDone {
            step: row(&r.step),
            now: &r.after.now,
            next_start: r.after.baseline.as_deref().unwrap_or(""),
        });
        tables::adopt_report(rows, style)
    }
}
