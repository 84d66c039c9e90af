//! Updating a stack's images with a health gate: pull, recreate only the services whose image changed, and when the module is not `active` in time, put the previous images back.
//!
//! The same gate guards a start that pulled a new image (`gate.rs`): whatever
//! recreates a service onto a new image keeps the old one under a hal-owned tag
//! (`previous.rs`) and rolls back to it (`rollback.rs`). `check.rs` asks the
//! registry without pulling.

mod check;
mod gate;
pub(crate) mod previous;
mod rollback;

use std::time::Duration;

use serde::Serialize;

use crate::module::ServiceImage;
use crate::module::config::{PullPolicy, Settings};
use crate::stack::Stack;
use crate::stack::bound::Bound;
use crate::stack::compose::Fresh;
use crate::stack::env::Env;

pub(crate) use check::check;
pub(crate) use gate::Gate;
pub(crate) use rollback::{Rollback, RolledBack};

/// One service's image before and after an update (under `--check`: what it
/// runs, and what the registry has now).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub(crate) struct ImageChange {
    pub service: String,
    /// The service's image reference, as compose resolved it.
    pub image: String,
    /// What it ran: its repository digest (`sha256:…`) where it has one, else its image id.
    pub from: Option<String>,
    /// What it runs after the update (the registry's digest, under `--check`).
    pub to: Option<String>,
    /// Whether the image changed (would change, under `--check`).
    pub changed: bool,
}

/// A service moving from one local image to another: what a rollback undoes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Swap {
    pub service: String,
    pub image: String,
    /// The image id the service ran before.
    pub previous: String,
    /// The image id its reference names now.
    pub new: String,
}

/// What an update's pull found: each service's image, and those that changed.
pub(crate) struct Pulled {
    pub images: Vec<ImageChange>,
    swaps: Vec<Swap>,
    /// A pull that failed while an image was present (the old image stays).
    pub warnings: Vec<String>,
}

impl Pulled {
    /// Whether some running service's image changed: the update recreates something.
    pub(crate) fn changed(&self) -> bool {
        !self.swaps.is_empty()
    }
}

/// Pulls every image of the stack (the Engine API; a failed pull of a
/// present image is a warning and changes nothing), and compares each with
/// what the service's containers run. Nothing is recreated.
pub(crate) async fn pull(
    env: Env<'_>,
    stack: &Stack<'_>,
    settings: &Settings,
) -> anyhow::Result<Pulled> {
    let engine = env.stacks.engine().await?;
    let compose = env.stacks.compose().await?;
    let images = compose
        .images(&stack.project(), env.stacks.endpoint()?)
        .await?;
    let gate = Gate::before(&engine, stack.name, &images, false).await?;
    let warnings = crate::stack::pull::pull(
        &engine,
        env.progress,
        stack.name,
        &images,
        PullPolicy::Always,
        settings.pull_timeout,
    )
    .await?;
    env.store
        .set_pull_warning(stack.name, warnings.first().cloned())
        .await?;
    let swaps = gate.after(&engine).await?;
    let mut report = Vec::new();
    for s in pullable(&images) {
        let image = s.image.clone().unwrap_or_default();
        let swap = swaps.iter().find(|w| w.service == s.service);
        let now = engine.image_facts(&image).await?;
        let to = now.as_ref().map(|f| gate::digest_of(f, &image));
        let from = match swap {
            Some(w) => gate::digest_of_id(&engine, &w.previous, &image).await?,
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
    })
}

/// Recreates the services whose image changed (`up -d --no-deps
/// --force-recreate --pull never SERVICE...`, compose's order), their
/// previous images kept first; the wait for `active` is [`crate::stack::wait`]'s,
/// which rolls back when it fails.
pub(crate) async fn recreate(
    env: Env<'_>,
    stack: &Stack<'_>,
    pulled: Pulled,
    timeout: Duration,
) -> anyhow::Result<crate::stack::Pending> {
    let bound = Bound::from_now(timeout);
    let engine = env.stacks.engine().await?;
    let plan = Rollback::keep(env, stack, pulled.swaps, timeout).await?;
    // A failed container of these services leaves its last words first.
    crate::stack::evidence::keep(&engine, env.store, stack.name, None).await?;
    let services: Vec<&str> = plan.services();
    env.progress
        .step(stack.name, &format!("updating {}", services.join(" ")));
    let compose = env.stacks.compose().await?;
    let project = stack.project();
    let work = compose.up_services(
        &project,
        env.stacks.endpoint()?,
        &services,
        Some("never"),
        Fresh::Always,
    );
    // Containers compose could not make on the new image are rolled back too.
    if let Err(e) = bound.run(&engine, stack.name, None, work).await {
        return Err(plan.roll_back(env.progress, &engine, e).await);
    }
    let mut pending =
        crate::stack::Pending::new(&engine, stack, bound, Vec::new(), pulled.warnings);
    pending.rollback = Some(Box::new(plan));
    Ok(pending)
}

/// The services whose image hal pulls and compares: an image, not built, by tag.
fn pullable(images: &[ServiceImage]) -> impl Iterator<Item = &ServiceImage> {
    images
        .iter()
        .filter(|s| !s.build && s.image.as_deref().is_some_and(|i| !i.contains('@')))
}
