//! Updating a stack's images with a health gate: pull, recreate only the services whose image changed, and when the module is not `active` in time, put the previous images back.
//!
//! The gate, the rollback, the quarantine, the checkpoint and the
//! transaction's log are `swap/`'s, below both this and `start/`: a start
//! that pulled a new image passes the same gate. `check.rs` asks the registry
//! without pulling; `transaction.rs` ends an update another hal left unfinished.

mod check;
pub(crate) mod transaction;

use std::time::Duration;

use anyhow::Context;

use crate::docker::compose::Fresh;
use crate::module::config::PullPolicy;
use crate::module::outcome::StartPlan;
use crate::module::warning::Warning;
use crate::stack::bound::Bound;
use crate::stack::env::Env;
use crate::stack::one_stack::Stack;
use crate::stack::swap::gate::{Gate, ImageChange, Swap, pullable};
use crate::stack::swap::rollback::Rollback;
use crate::stack::swap::{checkpoint, gate, quarantine, txn_log};
use crate::state::txn::TxnStep;

pub(crate) use check::check_update;

/// What an update's pull found: each service's image, and those that changed.
pub(crate) struct Pulled {
    pub images: Vec<ImageChange>,
    swaps: Vec<Swap>,
    /// A pull that failed while an image was present (the old image stays).
    pub warnings: Vec<Warning>,
    /// The services whose new digest is quarantined: kept on what they run.
    pub held: Vec<Warning>,
}

impl Pulled {
    /// Whether some running service's image changed: the update recreates something.
    pub(crate) fn changed(&self) -> bool {
        !self.swaps.is_empty()
    }
}

/// Pulls every image of the stack (the Engine API; a failed pull of a
/// present image is a warning and changes nothing), and compares each with
/// what the service's containers run. Nothing is recreated. A digest
/// quarantined by a rollback is not taken (unless `force`): the service keeps its image.
pub(crate) async fn pull_update(
    env: Env<'_>,
    stack: &Stack<'_>,
    plan: &StartPlan,
    force: bool,
) -> anyhow::Result<Pulled> {
    let (engine, images, list) = gate::project_now(env, &stack.project()).await?;
    let gate = Gate::before(&engine, &list, &images, false).await?;
    let ask = crate::stack::start::pull::Ask {
        module: stack.name,
        services: &images,
        policy: PullPolicy::Always,
        timeout: plan.pull_timeout,
    };
    let warnings = crate::stack::start::pull::pull(env, &engine, &ask, true).await?;
    let swaps = gate.after(&engine).await?;
    let (swaps, held) = quarantine::hold_back(&engine, env.store, stack.name, swaps, force).await?;
    let mut report = Vec::new();
    for s in pullable(&images) {
        let image = s.image.clone().unwrap_or_default();
        let swap = swaps.iter().find(|w| w.service == s.service);
        let now = engine.image_facts(&image).await?;
        let to = now
            .as_ref()
            .map(|f| crate::stack::swap::gate::digest_of(f, &image));
        let from = match swap {
            Some(w) => crate::stack::swap::gate::digest_of_id(&engine, &w.previous, &image).await?,
            None => to.clone(),
        };

        report.push(ImageChange {
            service: s.service.clone(),
            image,
            from,
            to,
            changed: swap.is_some(),
        });
    }
    Ok(Pulled {
        images: report,
        swaps,
        warnings,
        held,
    })
}

/// Recreates the services whose image changed (`up -d --no-deps
/// --force-recreate --pull never SERVICE...`, compose's order), their
/// previous images kept first and, when `sources` is given, their data
/// checkpointed with them stopped, each step written to the state first
/// (`swap/txn_log.rs`); the wait for `active` is [`crate::stack::start::wait`]'s,
/// which rolls back (data too) when it fails (or, when compose cannot make
/// them, the rollback done).
pub(crate) async fn recreate_update(
    env: Env<'_>,
    stack: &Stack<'_>,
    pulled: Pulled,
    timeout: Duration,
    sources: Option<Vec<checkpoint::DataSource>>,
) -> anyhow::Result<crate::stack::start::Launch> {
    let bound = Bound::from_now(timeout);
    let engine = env.stacks.engine().await?;
    let whole = Stack {
        service: None,
        ..*stack
    };
    let changed: Vec<&str> = pulled.swaps.iter().map(|w| w.service.as_str()).collect();
    let entries = sources.map(|s| checkpoint::for_services(&s, &changed));
    let entries = entries.filter(|e| !e.is_empty());
    let txn =
        txn_log::Txn::begin(env, stack.name, &pulled.swaps, entries.is_some(), timeout).await?;
    let mut plan = Rollback::keep(env, &whole, pulled.swaps, timeout).await?;
    // A failed container of these services leaves its last words first.
    crate::stack::evidence::keep(&engine, env.store, stack.name, None).await?;
    let data = match entries {
        Some(entries) => Some(checkpointed(env, stack, &plan, &txn, entries).await?),
        None => None,
    };
    txn.step(
        TxnStep::Checkpointed,
        data.as_ref().map(|d| d.record.clone()),
    )
    .await?;
    plan.set_data(data, Some(txn.clone()));
    let services: Vec<&str> = plan.services();
    env.progress
        .step(stack.name, &format!("updating {}", services.join(" ")));
    let compose = env.stacks.compose().await?;
    let project = stack.project();
    let work = compose.up_services(&project, env.stacks.endpoint()?, &services, Fresh::Always);
    // Containers compose could not make on the new image are rolled back too.
    if let Err(e) = bound.run(&engine, stack.name, None, work).await {
        let rolled = crate::stack::start::roll_back(env.progress, &engine, env.store, plan, e);
        return Ok(crate::stack::start::Launch::RolledBack(rolled.await));
    }
    txn.step(TxnStep::Recreated, None).await?;
    Ok(crate::stack::start::Launch::Wait(Box::new(
        crate::stack::start::Pending {
            warnings: pulled.warnings,
            rollback: Some(Box::new(plan)),
            ..crate::stack::start::Pending::new(env.store, &engine, stack, bound)
        },
    )))
}

/// Stops the services `plan` moves and copies `entries` into the module's
/// checkpoint. A copy that fails (storage unwritable or full) is removed,
/// and the module is left as it was: its references back on the previous
/// images, its stopped containers started again, its data untouched.
async fn checkpointed(
    env: Env<'_>,
    stack: &Stack<'_>,
    plan: &Rollback,
    txn: &txn_log::Txn,
    entries: Vec<crate::state::txn::CheckpointEntry>,
) -> anyhow::Result<txn_log::Data> {
    let compose = env.stacks.compose().await?;
    let project = stack.project();
    let services = plan.services();
    env.progress.step(
        stack.name,
        &format!("stopping {} for the checkpoint", services.join(" ")),
    );
    let mut stop = vec!["stop"];
    stop.extend(&services);
    compose
        .run(&project, env.stacks.endpoint()?, &stop)
        .await
        .context("stop the services to checkpoint their data")?;
    txn.step(TxnStep::Stopped, None).await?;
    env.progress.step(stack.name, "checkpointing its data");
    let state = env.store.dir().to_path_buf();
    match checkpoint::take(&state, stack.name, entries).await {
        Ok(record) => Ok(txn_log::Data { state, record }),
        Err(e) => {
            let engine = env.stacks.engine().await?;
            plan.put_references_back(&engine).await?;
            let mut start = vec!["start"];
            start.extend(&services);
            compose
                .run(&project, env.stacks.endpoint()?, &start)
                .await
                .context("start the services again on their previous image")?;
            let name = txn.name().to_string();
            env.store
                .update(move |s| {
                    if let Some(r) = s.modules.get_mut(&name) {
                        r.txn = None;
                    }
                })
                .await?;
            Err(checkpoint::CheckpointRefused(format!(
                "update refused: its checkpoint failed; {} runs its previous image, its data untouched: {}",
                stack.name,
                crate::error::OneLine(&e)
            ))
            .into())
        }
    }
}
