//! Runs a verb on many modules at once, bounded, and dispatches each to its kind (stack or host).

pub mod status;

use std::time::{Duration, Instant};

use anyhow::Context;
use futures_util::stream::{self, StreamExt};
use serde::Serialize;

use crate::cmd::ctx::Ctx;
use crate::error::{Exit, HalError, OneLine, exit_of};
use crate::module::inventory::{Kind, Module};
use crate::module::status::State;
use crate::stack::{self, Outcome, StartOpts};
use crate::state::Desired;
use crate::util::timefmt::Stamp;

/// A verb that changes modules.
#[derive(Clone, Debug)]
pub enum Verb {
    Start {
        opts: StartOpts,
        force: bool,
    },
    Stop,
    Restart {
        opts: StartOpts,
        force: bool,
    },
    /// Clear the start count, recreate the containers (or reset-failed and
    /// restart the unit), and wait for active.
    Rescue {
        opts: StartOpts,
    },
    /// The supervisor's restart: counts like any restart, and is skipped when,
    /// by the time the module's lock is taken, a person has stopped it.
    AutoRestart {
        opts: StartOpts,
    },
}

impl Verb {
    pub fn name(&self) -> &'static str {
        match self {
            Verb::Start { .. } => "start",
            Verb::Stop => "stop",
            Verb::Restart { .. } | Verb::AutoRestart { .. } => "restart",
            Verb::Rescue { .. } => "rescue",
        }
    }
}

/// What happened to one module.
pub struct Report {
    pub module: Module,
    pub result: anyhow::Result<Outcome>,
    pub took: Duration,
}

/// The JSON shape of a [`Report`].
#[derive(Serialize)]
pub struct ReportJson {
    pub name: String,
    pub kind: &'static str,
    pub action: &'static str,
    pub ok: bool,
    pub state: Option<State>,
    pub reason: Option<String>,
    pub error: Option<String>,
    pub exit_code: u8,
    pub took_ms: u64,
    pub warnings: Vec<String>,
}

impl Report {
    pub fn exit(&self) -> Exit {
        self.result.as_ref().err().map_or(Exit::Ok, exit_of)
    }

    pub fn to_json(&self, action: &'static str) -> ReportJson {
        let (state, reason, warnings) = match &self.result {
            Ok(o) => (Some(o.state), o.reason.clone(), o.warnings.clone()),
            Err(_) => (None, None, Vec::new()),
        };
        let (error, details) = match &self.result {
            Err(e) => (
                Some(OneLine(e).to_string()),
                crate::error::details_of(e).to_vec(),
            ),
            Ok(_) => (None, Vec::new()),
        };
        ReportJson {
            name: self.module.name.clone(),
            kind: self.module.kind_name(),
            action,
            ok: self.result.is_ok(),
            state,
            reason: reason.or_else(|| (!details.is_empty()).then(|| details.join("\n"))),
            error,
            exit_code: self.exit().code(),
            took_ms: u64::try_from(self.took.as_millis()).unwrap_or(u64::MAX),
            warnings,
        }
    }
}

tokio::task_local! {
    /// The `--jobs` slot the current module's work holds.
    static SLOT: std::cell::RefCell<Option<tokio::sync::OwnedSemaphorePermit>>;
}

/// Gives the current module's `--jobs` slot back: what is left is waiting.
pub fn release_slot() {
    let _ = SLOT.try_with(|s| s.borrow_mut().take());
}

/// Runs `verb` on every module, at most `jobs` at once, modules named in a
/// module's `after` first (last when stopping); reports come back in the given order.
pub async fn run(ctx: &Ctx, modules: Vec<Module>, verb: &Verb, jobs: usize) -> Vec<Report> {
    let names: Vec<String> = modules.iter().map(|m| m.name.clone()).collect();
    let after = |n: &str| {
        ctx.config
            .modules
            .get(n)
            .map(|s| s.after.clone())
            .unwrap_or_default()
    };
    let layers = crate::module::order::layers(&names, &after, matches!(verb, Verb::Stop));
    let mut reports: Vec<Report> = Vec::with_capacity(modules.len());
    for layer in layers {
        let batch: Vec<Module> = layer
            .iter()
            .filter_map(|n| modules.iter().find(|m| &m.name == n).cloned())
            .collect();
        // `jobs` bounds the work (compose, the engine, the init); a module
        // that only waits for `active` gives its slot back first.
        let slots = std::sync::Arc::new(tokio::sync::Semaphore::new(jobs.max(1)));
        let done: Vec<Report> = stream::iter(batch)
            .map(|m| {
                let slots = slots.clone();
                async move {
                    let began = Instant::now();
                    let permit = slots.acquire_owned().await.ok();
                    let result = SLOT
                        .scope(std::cell::RefCell::new(permit), one(ctx, &m, verb))
                        .await
                        .with_context(|| format!("{} {}", verb.name(), m.name));
                    Report {
                        module: m,
                        result,
                        took: began.elapsed(),
                    }
                }
            })
            .buffered(usize::MAX)
            .collect()
            .await;
        reports.extend(done);
    }
    reports.sort_by_key(|r| names.iter().position(|n| n == &r.module.name));
    reports
}

async fn one(ctx: &Ctx, m: &Module, verb: &Verb) -> anyhow::Result<Outcome> {
    if let Kind::Invalid { reason } = &m.kind {
        return Err(HalError::InvalidModule {
            name: m.name.clone(),
            reason: reason.clone(),
        }
        .into());
    }
    // Reach the engine first: a start that cannot happen must not count.
    reachable(ctx, m).await?;
    let _lock = ctx.store.lock_module(&m.name).await?;
    let mut warnings = Vec::new();
    let outcome = match verb {
        Verb::Start { opts, force } => {
            count(ctx, m, *force, &mut warnings)?;
            desire(ctx, m, Desired::Up, &mut warnings)?;
            start(ctx, m, opts).await?
        }
        Verb::Stop => {
            desire(ctx, m, Desired::Down, &mut warnings)?;
            stop(ctx, m).await?
        }
        Verb::Restart { opts, force } => {
            // Refuse before stopping: a held module must not be left down.
            count(ctx, m, *force, &mut warnings)?;
            desire(ctx, m, Desired::Up, &mut warnings)?;
            stop(ctx, m).await?;
            start(ctx, m, opts).await?
        }
        Verb::AutoRestart { opts } => {
            let (state, _) = ctx.store.read();
            let wanted = state.modules.get(&m.name).and_then(|r| r.desired);
            if wanted != Some(Desired::Up) {
                anyhow::bail!("left alone: it is no longer wanted up (stopped by request)");
            }
            count(ctx, m, false, &mut warnings)?;
            stop(ctx, m).await?;
            start(ctx, m, opts).await?
        }
        Verb::Rescue { opts } => {
            warnings.extend(ctx.store.reset(&m.name)?);
            if let Kind::Host { unit, scope } = &m.kind {
                crate::host::reset_failed(unit, *scope).await?;
            }
            count(ctx, m, false, &mut warnings)?;
            desire(ctx, m, Desired::Up, &mut warnings)?;
            stop(ctx, m).await?;
            start(ctx, m, opts).await?
        }
    };
    warnings.extend(outcome.warnings);
    Ok(Outcome {
        warnings,
        ..outcome
    })
}

async fn reachable(ctx: &Ctx, m: &Module) -> anyhow::Result<()> {
    match &m.kind {
        Kind::Stack { .. } => ctx.engine().await.map(drop).map_err(Into::into),
        Kind::Host { scope, .. } => crate::host::reachable(*scope).map_err(Into::into),
        Kind::Invalid { .. } => Ok(()),
    }
}

fn count(ctx: &Ctx, m: &Module, force: bool, warnings: &mut Vec<String>) -> anyhow::Result<()> {
    let limit = ctx.config.settings(&m.name).limit;
    let (_, w) = ctx.store.count_start(&m.name, limit, force, Stamp::now())?;
    warnings.extend(w);
    Ok(())
}

fn desire(ctx: &Ctx, m: &Module, d: Desired, warnings: &mut Vec<String>) -> anyhow::Result<()> {
    warnings.extend(ctx.store.set_desired(&m.name, d)?);
    Ok(())
}

async fn start(ctx: &Ctx, m: &Module, opts: &StartOpts) -> anyhow::Result<Outcome> {
    match &m.kind {
        Kind::Stack { dir, file } => stack::start(ctx, &m.name, dir, file, opts).await,
        Kind::Host { unit, scope } => crate::host::start(ctx, &m.name, unit, *scope, opts).await,
        Kind::Invalid { .. } => unreachable_kind(),
    }
}

async fn stop(ctx: &Ctx, m: &Module) -> anyhow::Result<Outcome> {
    match &m.kind {
        Kind::Stack { dir, file } => stack::stop(ctx, &m.name, dir, file).await,
        Kind::Host { unit, scope } => crate::host::stop(ctx, &m.name, unit, *scope).await,
        Kind::Invalid { .. } => unreachable_kind(),
    }
}

fn unreachable_kind() -> anyhow::Result<Outcome> {
    Err(anyhow::anyhow!("invalid module"))
}
