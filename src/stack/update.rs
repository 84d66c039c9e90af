//! Updating a stack's images with a health gate: pull, recreate only the services whose image changed, and when the module is not `active` in time, put the previous images back.
//!
//! The same gate guards a start that pulled a new image (`update/gate.rs`):
//! whatever recreates a service onto a new image keeps the old one under a
//! hal-owned tag (`update/rollback/previous.rs`) and rolls back to it
//! (`update/rollback.rs`). `check.rs` asks the registry without pulling.

mod check;
pub(crate) mod gate;
pub(crate) mod quarantine;
pub(crate) mod rollback;

use std::time::Duration;

use crate::docker::compose::Fresh;
use crate::module::config::PullPolicy;
use crate::module::outcome::StartPlan;
use crate::module::warning::Warning;
use crate::stack::env::Env;
use crate::stack::start::Stack;
use crate::stack::start::bound::Bound;
use crate::stack::update::gate::{Gate, Swap, pullable};
use crate::stack::update::rollback::Rollback;

pub(crate) use crate::stack::update::gate::ImageChange;
pub(crate) use crate::stack::update::rollback::RolledBack;
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
            .map(|f| crate::stack::update::gate::digest_of(f, &image));
        let from = match swap {
            Some(w) => {
                crate::stack::update::gate::digest_of_id(&engine, &w.previous, &image).await?
            }
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
/// previous images kept first; the wait for `active` is [`crate::stack::start::wait`]'s,
/// which rolls back when it fails (or, when compose cannot make them, the rollback done).
pub(crate) async fn recreate_update(
    env: Env<'_>,
    stack: &Stack<'_>,
    pulled: Pulled,
    timeout: Duration,
) -> anyhow::Result<crate::stack::start::Launch> {
    let bound = Bound::from_now(timeout);
    let engine = env.stacks.engine().await?;
    let whole = Stack {
        service: None,
        ..*stack
    };
    let plan = Rollback::keep(env, &whole, pulled.swaps, timeout).await?;
    // A failed container of these services leaves its last words first.
    crate::stack::start::evidence::keep(&engine, env.store, stack.name, None).await?;
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
    Ok(crate::stack::start::Launch::Wait(Box::new(
        crate::stack::start::Pending {
            warnings: pulled.warnings,
            rollback: Some(Box::new(plan)),
            ..crate::stack::start::Pending::new(env.store, &engine, stack, bound)
        },
    )))
}
