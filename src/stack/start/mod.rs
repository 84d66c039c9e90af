//! A start: a stack's containers made (compose, or the fast path without it) and the wait for `active` (and the rollback a failed wait runs).

pub(crate) mod baseline;
pub(crate) mod fastpath;
pub(crate) mod pending;
pub(crate) mod pull;
pub(crate) mod start_order;
mod wait;

use crate::docker::compose::Fresh;
use crate::docker::engine::{Engine, Listed};
use crate::module::ServiceImage;
use crate::module::outcome::{Outcome, StartPlan};
use crate::module::status::State;
use crate::module::warning::Warning;
use crate::stack::bound::Bound;
use crate::stack::env::Env;
use crate::stack::evidence;
use crate::stack::look::assess::{ContainerFacts, assess};
use crate::stack::look::facts;
use crate::stack::look::identity::Snapshot;
use crate::stack::look::inspects::Inspects;
use crate::stack::one_stack::Stack;
use crate::stack::project::inputs::InputError;
use crate::stack::swap::{gate, rollback};

pub(crate) use pending::Pending;
use pending::Start;
pub(crate) use wait::{Waited, roll_back, wait, wait_holding};

/// What a launch left: done, or started and waiting for `active`.
pub(crate) enum Launch {
    Done(Outcome),
    /// Already active and unchanged: nothing was started (it counts nothing).
    Unchanged(Outcome),
    Wait(Box<Pending>),
    /// The pull moved services onto new images that compose could not
    /// start: they were put back on the previous ones.
    RolledBack(rollback::RolledBack),
}

/// `compose up -d --remove-orphans` (or the fast path when the files are
/// unchanged); for one service, `compose up -d --no-deps SERVICE` (or the
/// fast path on its containers alone). The wait for `active` is [`wait`]'s,
/// so that the caller can free its `--jobs` slot in between.
///
/// The start's timeout bounds all of it, the pull and compose included:
/// past it, hal stops waiting (compose is killed, what it made stays) and
/// says what the start was waiting for.
///
/// `seen` is the project's containers as the refusal just listed them
/// ([`crate::stack::look::identity::refuse_start`]), when nothing can have
/// changed them since; `None`: the launch lists them once itself.
pub(crate) async fn launch(
    env: Env<'_>,
    stack: &Stack<'_>,
    plan: &StartPlan,
    seen: Option<Snapshot>,
) -> anyhow::Result<Launch> {
    let bound = Bound::from_now(plan.timeout);
    let engine = env.stacks.engine().await?;
    let start = Start {
        env,
        engine: &engine,
        stack,
        plan,
        bound,
    };
    let work = launch_within(&start, seen);
    bound.run(&engine, stack.name, stack.service, work).await
}

async fn launch_within(s: &Start<'_>, seen: Option<Snapshot>) -> anyhow::Result<Launch> {
    let digest = match crate::stack::project::digest::digest_of_module(s.stack.dir).await? {
        Ok(d) => d.key,
        // A file compose would need is missing: refuse before anything starts.
        Err(e @ (InputError::Missing { .. } | InputError::NoComposeFile(_))) => {
            return Err(e.into());
        }
        // hal cannot read it: compose says what is wrong, in its own words.
        Err(InputError::Unreadable { .. }) => None,
    };
    let known = remembered(s.env, s.stack.name, digest.as_deref());
    // One list for the fast path, the gate and the evidence: nothing but
    // compose changes the project's containers before compose runs.
    let list = match seen {
        Some(seen) => seen.list,
        None => s.engine.compose_containers(Some(s.stack.name)).await?,
    };
    if let Some((services, _)) = &known
        && let Some(launch) = fast(s, services, &list).await?
    {
        return Ok(launch);
    }
    let (warnings, rollback) = match through_compose(s, digest, known, &list).await? {
        Ok(composed) => composed,
        Err(rolled) => return Ok(Launch::RolledBack(rolled)),
    };
    if !s.plan.wait {
        return no_wait(s.engine, s.stack, warnings).await;
    }
    Ok(Launch::Wait(Box::new(Pending {
        warnings,
        rollback,
        ..Pending::new(s.env.store, s.engine, s.stack, s.bound)
    })))
}

/// The fast path on the services compose resolved for these same files:
/// `None` when the start must go through compose.
async fn fast(
    s: &Start<'_>,
    services: &[ServiceImage],
    list: &[Listed],
) -> anyhow::Result<Option<Launch>> {
    let services = only(services.to_vec(), s.stack.service);
    let Some((outcome, containers)) = fastpath::try_start(s, &services, list).await? else {
        return Ok(None);
    };
    if outcome.state == State::Active {
        // The fast path starts nothing when every container is up.
        return Ok(Some(Launch::Unchanged(outcome)));
    }
    if !s.plan.wait {
        return Ok(Some(Launch::Done(outcome)));
    }
    Ok(Some(Launch::Wait(Box::new(Pending {
        containers,
        warnings: outcome.warnings,
        ..Pending::new(s.env.store, s.engine, s.stack, s.bound)
    }))))
}

/// Pulls through the Engine API, then `compose up`; returns the pull's
/// warnings, and the rollback of the services the pull moved onto new images
/// (or, when compose could not start them, that rollback done).
async fn through_compose(
    s: &Start<'_>,
    digest: Option<String>,
    known: Option<(Vec<ServiceImage>, Option<String>)>,
    list: &[Listed],
) -> anyhow::Result<Result<Composed, rollback::RolledBack>> {
    let (env, engine, stack) = (s.env, s.engine, s.stack);
    let compose = env.stacks.compose().await?;
    // hal pulls through the Engine API, so a failed pull can fall back to a
    // cached image; compose then only creates containers. The image list is
    // compose's answer for these same inputs when one is remembered under the
    // same digest from the same compose version: then `up` is the only
    // compose process (`digest.rs` says what the digest covers).
    // The services as resolved, when compose ran: what the start applies,
    // recorded once it has (`hal plan` names the keys changed since).
    let (images, applied) = match known {
        Some((images, Some(version))) if version == compose.version => (images, None),
        _ => {
            compose
                .model(&stack.project(), env.stacks.endpoint()?)
                .await?
        }
    };
    // A `container_name` or a host port another container has, an external
    // network that does not exist: compose would start the services before
    // the one that fails and stop halfway. Refused before anything.
    // One service (`up --no-deps SERVICE`): its clashes alone.
    if let Some(resolved) = &applied {
        let mine: Vec<_> = resolved
            .iter()
            .filter(|r| stack.service.is_none_or(|s| s == r.service))
            .cloned()
            .collect();
        let clashes = crate::stack::forecast::clashes::clashes(engine, &mine, stack.name).await?;
        if let Some(c) = clashes.into_iter().next() {
            return Err(c.into());
        }
    }
    let wanted = only(images.clone(), stack.service);
    let gate = gate::Gate::before(engine, list, &wanted, true).await?;
    let ask = pull::Ask {
        module: stack.name,
        services: &wanted,
        policy: s.plan.pull,
        timeout: s.plan.pull_timeout,
    };
    // One service's pull says nothing of the others': it never clears theirs.
    let warnings = pull::pull(env, engine, &ask, stack.service.is_none()).await?;
    // compose may recreate a failed container (its files changed): keep its last words first.
    evidence::keep_listed(engine, env.store, stack, list, &Inspects::default()).await?;
    // A service the pull moved onto a new image goes through the update's gate.
    let swaps = gate.after(engine).await?;
    // A digest a rollback put aside is not taken again (`update --force` alone does).
    let (swaps, held) =
        crate::stack::swap::quarantine::hold_back(engine, env.store, stack.name, swaps, false)
            .await?;
    let mut warnings = warnings;
    warnings.extend(held);
    let rollback = match swaps.is_empty() || !s.plan.wait {
        true => None,
        false => Some(Box::new(
            rollback::Rollback::keep(env, stack, swaps, s.plan.timeout).await?,
        )),
    };
    let up = up(env, &compose, stack, digest, images).await;
    if up.is_ok()
        && let Some(applied) = applied
    {
        // Only `hal plan`'s explanations need it: a record not written is no failed start.
        let _ = crate::state::applied::keep(env.store, stack.name, &applied, stack.service);
    }
    match (up, rollback) {
        (Ok(()), rollback) => Ok(Ok((warnings, rollback))),
        (Err(e), Some(r)) => Ok(Err(roll_back(env.progress, engine, env.store, *r, e).await)),
        (Err(e), None) => Err(e),
    }
}

/// A compose start's pull warnings, and the rollback its wait may need.
type Composed = (Vec<Warning>, Option<Box<rollback::Rollback>>);

/// `compose up` of the stack (or of its one service), its images pulled.
async fn up(
    env: Env<'_>,
    compose: &crate::docker::compose::Compose,
    stack: &Stack<'_>,
    digest: Option<String>,
    images: Vec<ServiceImage>,
) -> anyhow::Result<()> {
    let (name, project, endpoint) = (stack.name, stack.project(), env.stacks.endpoint()?);
    match stack.service {
        None => {
            env.progress.step(name, "starting");
            compose.up(&project, endpoint).await?;
            // The containers now reflect these files: remember them for the fast path.
            env.store
                .remember(name, digest, images, &compose.version)
                .await?;
        }
        // The other services may still be older than the files: nothing to remember.
        Some(service) => {
            env.progress.step(name, &format!("starting {service}"));
            compose
                .up_service(&project, endpoint, service, Fresh::IfChanged)
                .await?;
        }
    }
    Ok(())
}

/// `--no-wait`: the state the containers are in right after compose.
async fn no_wait(
    engine: &Engine,
    stack: &Stack<'_>,
    warnings: Vec<Warning>,
) -> anyhow::Result<Launch> {
    let facts = of_service(facts::of_project(engine, stack.name).await?, stack.service);
    let (state, reason) = assess(&facts.iter().collect::<Vec<_>>());
    Ok(Launch::Done(Outcome {
        state,
        reason: reason.into(),
        warnings,
    }))
}

/// The services a verb on `service` touches: that one, or all of them.
fn only(services: Vec<ServiceImage>, service: Option<&str>) -> Vec<ServiceImage> {
    match service {
        Some(s) => services.into_iter().filter(|i| i.service == s).collect(),
        None => services,
    }
}

/// The facts of one service's containers, or all of them.
pub(super) fn of_service(
    mut facts: Vec<ContainerFacts>,
    service: Option<&str>,
) -> Vec<ContainerFacts> {
    if let Some(s) = service {
        facts.retain(|f| f.service == s);
    }
    facts
}

/// The services compose resolved the last time, if the files are the same now.
fn remembered(
    env: Env<'_>,
    name: &str,
    digest: Option<&str>,
) -> Option<(Vec<ServiceImage>, Option<String>)> {
    let digest = digest?;
    let (state, _) = env.store.read();
    let rec = state.modules.get(name)?;
    if rec.digest.as_deref() != Some(digest) {
        return None;
    }
    Some((rec.services.clone()?, rec.compose_version.clone()))
}
