//! `update` on many modules: one at a time unless told, in `after` order, stopping after `--max-failures` failed updates; each module's pull, recreate and gated wait run under its lock, and count as a start when they recreate something.

pub(crate) mod shape;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context;
use futures_util::stream::{self, StreamExt};

use crate::error::{Exit, exit_of};
use crate::module::outcome::Outcome;
use crate::module::progress::Progress;
use crate::module::status::State;
use crate::module::target::Target;
use crate::module::{Kind, Module};
use crate::run::node::Node;
use crate::run::report::Report;
use crate::stack::{ImageChange, RolledBack};
use crate::state::records::Ended;

/// How an update run goes: the command line's, or the supervisor's schedule.
#[derive(Clone, Debug)]
pub(crate) struct UpdateOpts {
    /// `--check`: ask the registries, pull nothing, change nothing.
    pub check: bool,
    /// Update even when the start limit is hit (it still counts).
    pub force: bool,
    /// How long an updated module has to become active (the module's timeout when `None`).
    pub timeout: Option<Duration>,
    /// How many modules are updated at once.
    pub jobs: usize,
    /// No update starts once this many have failed (see [`UpdateReport::failed`]).
    pub max_failures: usize,
    /// The supervisor's scheduled update: only modules still wanted up once
    /// their lock is taken; a failure is recorded as the supervisor's.
    pub by_supervisor: bool,
}

/// What an update did to one module.
pub(crate) struct UpdateReport {
    /// The module's result, as every verb reports it (`changed`: something was recreated).
    pub report: Report,
    /// Each service's image, before and after (under `--check`: now and in the registry).
    pub images: Vec<ImageChange>,
    /// The update was rolled back (the error says why).
    pub rolled_back: bool,
    /// Under `--check`: whether some service has another image in its registry.
    pub available: Option<bool>,
    /// Not tried: `--max-failures` updates had failed before its turn.
    pub skipped: bool,
    /// The update failed, and counts toward `--max-failures`: it was tried
    /// (past the refusals: an unusable config, an engine that cannot be
    /// reached, a module no longer wanted up, its start limit) and could not
    /// pull or recreate, or was rolled back. A refused module is "not
    /// updated", never a failure: `hal update` and `hal watch`'s scheduled
    /// updates both count by this one rule.
    pub failed: bool,
}

impl UpdateReport {
    /// 1 for a failed or rolled-back update, 3 under `--check` when an update is available.
    pub(crate) fn exit(&self) -> Exit {
        match &self.report.result {
            Err(e) => exit_of(e),
            Ok(_) if self.available == Some(true) => Exit::NotActive,
            Ok(_) => Exit::Ok,
        }
    }
}

/// Updates (or, under `--check`, checks) every module, at most `opts.jobs`
/// at once, modules named in a module's `after` first, telling `finished`
/// about each as it ends; the reports come back in the given order. This is
/// the one entry point: `hal update`, `hal module update` and a scheduled
/// update of `hal watch` all call it.
pub(crate) async fn run(
    node: &Node,
    progress: &dyn Progress,
    modules: Vec<Module>,
    opts: &UpdateOpts,
    finished: &dyn Fn(&UpdateReport),
) -> Vec<UpdateReport> {
    let names: Vec<String> = modules.iter().map(|m| m.name.clone()).collect();
    let failures = AtomicUsize::new(0);
    let mut reports: Vec<(usize, UpdateReport)> = Vec::with_capacity(modules.len());
    for layer in node.layers(&names, false) {
        let batch: Vec<(usize, &Module)> = modules
            .iter()
            .enumerate()
            .filter(|(_, m)| layer.contains(&m.name))
            .collect();
        let failures = &failures;
        let mut done = stream::iter(batch)
            .map(|(i, m)| async move {
                let stop = !opts.check && failures.load(Ordering::SeqCst) >= opts.max_failures;
                let r = if stop {
                    skipped(node, m, opts.max_failures).await
                } else {
                    let r = timed(node, progress, m, opts).await;
                    if r.failed {
                        failures.fetch_add(1, Ordering::SeqCst);
                    }
                    r
                };
                (i, r)
            })
            .buffer_unordered(opts.jobs.max(1));
        while let Some((i, r)) = done.next().await {
            finished(&r);
            reports.push((i, r));
        }
    }
    reports.sort_by_key(|(i, _)| *i);
    let mut reports: Vec<UpdateReport> = reports.into_iter().map(|(_, r)| r).collect();
    if !opts.check {
        after_update(node, progress, &mut reports, opts.jobs).await;
    }
    reports
}

/// Fails, before anything is touched, when no module's engine can be reached (exit 6).
pub(crate) async fn check_reachable(node: &Node, modules: &[Module]) -> anyhow::Result<()> {
    let mut first = None;
    for m in modules {
        match super::reachable(node, m).await {
            Ok(()) => return Ok(()),
            Err(e) => {
                first.get_or_insert_with(|| e.context(update_step(&m.name)));
            }
        }
    }
    first.map_or(Ok(()), Err)
}

/// What one module's update found and did, besides its outcome.
#[derive(Default)]
struct Extra {
    changed: bool,
    images: Vec<ImageChange>,
    available: Option<bool>,
    /// Past the refusals: an error from here on is a failed update.
    tried: bool,
}

async fn timed(
    node: &Node,
    progress: &dyn Progress,
    m: &Module,
    opts: &UpdateOpts,
) -> UpdateReport {
    let began = Instant::now();
    let mut extra = Extra::default();
    let result = one(node, progress, m, opts, &mut extra)
        .await
        .with_context(|| update_step(&m.name));
    progress.done(&m.name);
    let rolled_back = result.as_ref().err().and_then(RolledBack::of).is_some();
    let failed = result.is_err() && (extra.tried || rolled_back);
    UpdateReport {
        report: Report {
            module: m.clone(),
            service: None,
            changed: extra.changed && result.is_ok(),
            result,
            took: began.elapsed(),
            would: None,
        },
        images: extra.images,
        failed,
        rolled_back,
        available: extra.available,
        skipped: false,
    }
}

/// A module whose turn came after `--max-failures` failed updates.
async fn skipped(node: &Node, m: &Module, max: usize) -> UpdateReport {
    let state = super::status::state_now(node, &Target::whole(m.clone())).await;
    let s = if max == 1 { "" } else { "s" };
    UpdateReport {
        report: Report {
            module: m.clone(),
            service: None,
            result: Ok(Outcome {
                state: state.unwrap_or(State::Unknown),
                reason: Some(format!(
                    "not updated: stopped after {max} failed update{s} (--max-failures)"
                )),
                warnings: Vec::new(),
            }),
            took: Duration::ZERO,
            changed: false,
            would: None,
        },
        images: Vec::new(),
        rolled_back: false,
        available: None,
        skipped: true,
        failed: false,
    }
}

/// One module's update (or check) under its lock.
async fn one(
    node: &Node,
    progress: &dyn Progress,
    m: &Module,
    opts: &UpdateOpts,
    extra: &mut Extra,
) -> anyhow::Result<Outcome> {
    m.usable()?;
    let Kind::Stack { dir, .. } = &m.kind else {
        // A host unit has no image: nothing to pull, nothing to do.
        return now(node, m, Vec::new()).await;
    };
    super::reachable(node, m).await?;
    let lock = node.store.lock_module(&m.name).await?;
    if opts.by_supervisor {
        super::still_wanted(node, m)?;
    }
    let env = node.stack_env(progress);
    let stack = crate::stack::Stack {
        name: &m.name,
        dir,
        service: None,
    };
    if opts.check {
        let (images, warnings) = crate::stack::check_update(env, &stack).await?;
        extra.available = Some(images.iter().any(|i| i.changed));
        extra.images = images;
        return now(node, m, warnings).await;
    }
    let settings = node.config.settings(&m.name);
    // Refused at the limit before anything is pulled, as a start is; counted
    // below only when something is recreated.
    node.store
        .check_limit(&m.name, settings.limit, opts.force)?;
    extra.tried = true;
    let pulled = crate::stack::pull_update(env, &stack, &settings).await?;
    extra.images = pulled.images.clone();
    if !pulled.changed() {
        // Nothing changed: nothing is recreated, nothing counts. Every image
        // pulled and none new: an old rollback no longer describes the module.
        if pulled.warnings.is_empty() {
            let name = m.name.clone();
            node.store
                .update(move |s| {
                    if let Some(r) = s.modules.get_mut(&name) {
                        r.up_to_date();
                    }
                })
                .await?;
        }
        return now(node, m, pulled.warnings).await;
    }
    let mut warnings = Vec::new();
    super::count(node, m, opts.force, &mut warnings).await?;
    extra.changed = true;
    let timeout = opts.timeout.unwrap_or(settings.timeout);
    let result = async {
        let pending = crate::stack::recreate_update(env, &stack, pulled, timeout).await?;
        crate::stack::wait(progress, pending).await
    }
    .await;
    if let Some(ended) = ended_of(node, m, opts, &result) {
        super::ended::record(node, m, ended, &mut warnings).await;
    }
    drop(lock);
    let mut outcome = result?;
    warnings.append(&mut outcome.warnings);
    outcome.warnings = warnings;
    Ok(outcome)
}

/// The module's state now, for an update that changed nothing.
async fn now(node: &Node, m: &Module, warnings: Vec<String>) -> anyhow::Result<Outcome> {
    let state = super::status::state_now(node, &Target::whole(m.clone())).await;
    Ok(Outcome {
        state: state.unwrap_or(State::Unknown),
        reason: None,
        warnings,
    })
}

/// What an update's end leaves in the record: active again (on the new
/// images, or rolled back onto the old ones) clears a failed start; a
/// rollback that did not come back is a failed start.
fn ended_of(
    node: &Node,
    m: &Module,
    opts: &UpdateOpts,
    result: &anyhow::Result<Outcome>,
) -> Option<Ended> {
    match result {
        Ok(_) => Some(Ended::Repaired),
        Err(e) if RolledBack::of(e).is_some_and(|r| r.restored) => Some(Ended::Repaired),
        Err(e) => {
            let (state, _) = node.store.read();
            let desired = state.modules.get(&m.name).and_then(|r| r.desired);
            if opts.by_supervisor && desired != Some(crate::module::status::Desired::Up) {
                return None;
            }
            let cause = crate::run::report::cause(e);
            Some(Ended::StartFailed(None, cause))
        }
    }
}

/// After `update` (or its rollback) recreated modules' containers: their
/// namespace dependents restarted, each result said on the report of the
/// module that caused it.
async fn after_update(
    node: &Node,
    progress: &dyn Progress,
    reports: &mut [UpdateReport],
    jobs: usize,
) {
    let opts = crate::module::outcome::StartOpts {
        pull: Some(crate::module::config::PullPolicy::Missing),
        wait: true,
        timeout: None,
    };
    let acted: Vec<String> = reports
        .iter()
        .map(|r| r.report.module.name.clone())
        .collect();
    for r in reports.iter_mut() {
        let recreated = r.report.changed || r.rolled_back;
        if !recreated {
            continue;
        }
        let name = [r.report.module.name.clone()];
        for d in
            super::follow::restart_after(node, progress, &name, &acted, &opts, jobs.max(1)).await
        {
            let said = match &d.result {
                Ok(o) => format!("restarted {} with it: {}", d.module.name, o.state.as_str()),
                Err(e) => format!(
                    "restarted {} with it: failed: {}",
                    d.module.name,
                    crate::error::OneLine(e)
                ),
            };
            if let Ok(o) = &mut r.report.result {
                o.warnings.push(said);
            }
        }
    }
}

/// The context of an update's error: `update NAME`, read back by `cause()`.
fn update_step(name: &str) -> super::verb::Step {
    super::verb::Step {
        action: "update",
        label: name.to_string(),
    }
}
