//! A start: a stack's containers made (compose, or the fast path without it) and the wait for `active` (and the rollback a failed wait runs); the `Stack` every verb is given.

pub(crate) mod baseline;
pub(crate) mod bound;
pub(crate) mod evidence;
pub(crate) mod fastpath;
pub(crate) mod pull;
pub(crate) mod start_order;

use std::path::Path;
use std::time::Duration;

use crate::docker::compose::{Fresh, Project};
use crate::docker::engine::{Engine, Listed};
use crate::error::Detailed;
use crate::module::ServiceImage;
use crate::module::config::Settings;
use crate::module::outcome::{Outcome, StartOpts};
use crate::module::progress::Progress;
use crate::module::status::State;
use crate::stack::env::Env;
use crate::stack::look::assess::{ContainerFacts, SETTLE, assess, hopeless, settles_in};
use crate::stack::look::{facts, seen};
use crate::stack::project::inputs::InputError;
use crate::stack::start::bound::Bound;
use crate::stack::update::{gate, rollback};

const POLL: Duration = Duration::from_millis(250);
/// Polled this long after containers should have settled, so one poll sees it.
const SETTLE_MARGIN: Duration = Duration::from_millis(20);

/// One stack as a verb sees it: its compose project, and the one service a
/// `MODULE/SERVICE` names (`None`: the whole project).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Stack<'a> {
    pub name: &'a str,
    pub dir: &'a Path,
    pub service: Option<&'a str>,
}

impl<'a> Stack<'a> {
    pub(super) fn project(&self) -> Project<'a> {
        Project {
            name: self.name,
            dir: self.dir,
        }
    }
}

/// A started stack that still has to reach `active`.
pub(crate) struct Pending {
    pub(super) engine: Engine,
    pub(super) name: String,
    /// Only this service's containers count (`MODULE/SERVICE`).
    pub(super) service: Option<String>,
    /// When the whole start (launch and wait) must be over.
    pub(super) bound: Bound,
    /// The module's containers as just listed (empty: list them first).
    pub(super) containers: Vec<Listed>,
    pub(super) warnings: Vec<String>,
    /// Where the module's containers are recorded once the wait is over (`state::ledger`).
    /// (Boxed: a runner's `Launched` carries a `Pending` by value.)
    pub(super) store: Box<crate::state::Store>,
    /// Set when the launch moved services onto new images: a wait that fails rolls them back.
    pub(super) rollback: Option<Box<rollback::Rollback>>,
}

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

/// How a wait for `active` ended, when it did not fail outright.
pub(crate) enum Waited {
    Active(Outcome),
    /// The new images did not become active: put back on the previous ones.
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
pub(crate) async fn launch(
    env: Env<'_>,
    stack: &Stack<'_>,
    settings: &Settings,
    opts: &StartOpts,
) -> anyhow::Result<Launch> {
    let bound = Bound::from_now(opts.timeout.unwrap_or(settings.timeout));
    let engine = env.stacks.engine().await?;
    let work = launch_within(env, &engine, stack, settings, opts, bound);
    bound.run(&engine, stack.name, stack.service, work).await
}

async fn launch_within(
    env: Env<'_>,
    engine: &Engine,
    stack: &Stack<'_>,
    settings: &Settings,
    opts: &StartOpts,
    bound: Bound,
) -> anyhow::Result<Launch> {
    let digest = match crate::stack::project::digest::of_module(stack.dir) {
        Ok(d) => d.key,
        // A file compose would need is missing: refuse before anything starts.
        Err(e @ (InputError::Missing { .. } | InputError::NoComposeFile(_))) => {
            return Err(e.into());
        }
        // hal cannot read it: compose says what is wrong, in its own words.
        Err(InputError::Unreadable { .. }) => None,
    };
    let known = remembered(env, stack.name, digest.as_deref());
    if let Some((services, _)) = &known
        && let Some(launch) = fast(env, engine, stack, settings, opts, services, bound).await?
    {
        return Ok(launch);
    }
    let (warnings, rollback) =
        match through_compose(env, engine, stack, settings, opts, digest, known).await? {
            Ok(composed) => composed,
            Err(rolled) => return Ok(Launch::RolledBack(rolled)),
        };
    if !opts.wait {
        return no_wait(engine, stack, warnings).await;
    }
    let mut pending = Pending::new(env.store, engine, stack, bound, Vec::new(), warnings);
    pending.rollback = rollback;
    Ok(Launch::Wait(Box::new(pending)))
}

impl Pending {
    pub(super) fn new(
        store: &crate::state::Store,
        engine: &Engine,
        stack: &Stack<'_>,
        bound: Bound,
        containers: Vec<Listed>,
        warnings: Vec<String>,
    ) -> Pending {
        Pending {
            engine: engine.clone(),
            name: stack.name.to_string(),
            service: stack.service.map(str::to_string),
            bound,
            containers,
            warnings,
            store: Box::new(store.clone()),
            rollback: None,
        }
    }
}

/// The fast path on the services compose resolved for these same files:
/// `None` when the start must go through compose.
async fn fast(
    env: Env<'_>,
    engine: &Engine,
    stack: &Stack<'_>,
    settings: &Settings,
    opts: &StartOpts,
    services: &[ServiceImage],
    bound: Bound,
) -> anyhow::Result<Option<Launch>> {
    let services = only(services.to_vec(), stack.service);
    let inputs = crate::stack::start::fastpath::FastInputs {
        services: &services,
        policy: opts.pull.unwrap_or(settings.pull),
        pull_timeout: settings.pull_timeout,
        only: stack.service,
    };
    let Some((outcome, containers)) =
        crate::stack::start::fastpath::try_start(env, engine, stack.name, &inputs).await?
    else {
        return Ok(None);
    };
    if outcome.state == State::Active {
        // The fast path starts nothing when every container is up.
        return Ok(Some(Launch::Unchanged(outcome)));
    }
    if !opts.wait {
        return Ok(Some(Launch::Done(outcome)));
    }
    Ok(Some(Launch::Wait(Box::new(Pending::new(
        env.store,
        engine,
        stack,
        bound,
        containers,
        outcome.warnings,
    )))))
}

/// Pulls through the Engine API, then `compose up`; returns the pull's
/// warnings, and the rollback of the services the pull moved onto new images
/// (or, when compose could not start them, that rollback done).
async fn through_compose(
    env: Env<'_>,
    engine: &Engine,
    stack: &Stack<'_>,
    settings: &Settings,
    opts: &StartOpts,
    digest: Option<String>,
    known: Option<(Vec<ServiceImage>, Option<String>)>,
) -> anyhow::Result<Result<Composed, rollback::RolledBack>> {
    let name = stack.name;
    let policy = opts.pull.unwrap_or(settings.pull);
    let compose = env.stacks.compose().await?;
    let project = stack.project();
    let endpoint = env.stacks.endpoint()?;
    // hal pulls through the Engine API, so a failed pull can fall back to a
    // cached image; compose then only creates containers. The image list is
    // compose's answer for these same inputs when one is remembered under the
    // same digest from the same compose version: then `up` is the only
    // compose process (`digest.rs` says what the digest covers).
    let images = match known {
        Some((images, Some(version))) if version == compose.version => images,
        _ => compose.images(&project, endpoint).await?,
    };
    let wanted = only(images.clone(), stack.service);
    let gate = gate::Gate::before(engine, name, &wanted, true).await?;
    let warnings = crate::stack::start::pull::pull(
        engine,
        env.progress,
        name,
        &wanted,
        policy,
        settings.pull_timeout,
    )
    .await?;
    // One service's pull says nothing of the others': it never clears theirs.
    if stack.service.is_none() || !warnings.is_empty() {
        env.store
            .set_pull_warning(name, warnings.first().cloned())
            .await?;
    }
    // compose may recreate a failed container (its files changed): keep its last words first.
    crate::stack::start::evidence::keep(engine, env.store, name, stack.service).await?;
    // A service the pull moved onto a new image goes through the update's gate.
    let swaps = gate.after(engine).await?;
    let timeout = opts.timeout.unwrap_or(settings.timeout);
    let rollback = match swaps.is_empty() || !opts.wait {
        true => None,
        false => Some(Box::new(
            rollback::Rollback::keep(env, name, stack.dir, stack.service, swaps, timeout).await?,
        )),
    };
    match (up(env, &compose, stack, digest, images).await, rollback) {
        (Ok(()), rollback) => Ok(Ok((warnings, rollback))),
        (Err(e), Some(r)) => Ok(Err(roll_back(env.progress, engine, env.store, *r, e).await)),
        (Err(e), None) => Err(e),
    }
}

/// A compose start's pull warnings, and the rollback its wait may need.
type Composed = (Vec<String>, Option<Box<rollback::Rollback>>);

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
    warnings: Vec<String>,
) -> anyhow::Result<Launch> {
    let facts = of_service(facts::of_project(engine, stack.name).await?, stack.service);
    let (state, reason) = assess(&facts.iter().collect::<Vec<_>>());
    Ok(Launch::Done(Outcome {
        state,
        reason,
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

/// The listed containers of one service, or all of them.
fn listed_of(list: Vec<Listed>, service: Option<&str>) -> Vec<Listed> {
    match service {
        Some(s) => list
            .into_iter()
            .filter(|c| c.identity.as_ref().is_some_and(|who| who.service == s))
            .collect(),
        None => list,
    }
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

/// Polls the project until every service is up (healthy where it has a
/// healthcheck), something fails for good, or the start's timeout passes.
///
/// Each poll inspects the containers the launch listed alone: no compose
/// process creates any while hal waits, and a list call costs the engine
/// several inspects when many modules start at once. One that went away makes
/// the next poll list again.
///
/// When the launch moved services onto new images, a wait that fails rolls
/// them back (`update.rs`), and one that succeeds clears an old rollback.
pub(crate) async fn wait(progress: &dyn Progress, mut p: Pending) -> anyhow::Result<Waited> {
    let Some(rollback) = p.rollback.take() else {
        return wait_active(progress, p).await.map(Waited::Active);
    };
    let engine = p.engine.clone();
    let store = p.store.clone();
    match wait_active(progress, p).await {
        Ok(mut o) => {
            o.warnings.extend(rollback.passed().await);
            Ok(Waited::Active(o))
        }
        Err(e) => Ok(Waited::RolledBack(
            roll_back(progress, &engine, &store, *rollback, e).await,
        )),
    }
}

/// Rolls back a gated launch that failed with `e`, waiting again as [`wait`] does.
pub(crate) async fn roll_back(
    progress: &dyn Progress,
    engine: &Engine,
    store: &crate::state::Store,
    r: rollback::Rollback,
    e: anyhow::Error,
) -> rollback::RolledBack {
    let (name, dir) = (r.name().to_string(), r.dir().to_path_buf());
    let service = r.service().map(str::to_string);
    let again = |bound| -> futures_util::future::BoxFuture<'_, anyhow::Result<()>> {
        let stack = Stack {
            name: &name,
            dir: &dir,
            service: service.as_deref(),
        };
        let p = Pending::new(store, engine, &stack, bound, Vec::new(), Vec::new());
        Box::pin(async move { wait_active(progress, p).await.map(drop) })
    };
    r.roll_back(progress, engine, e, &again).await
}

/// [`wait`] with no gate.
async fn wait_active(progress: &dyn Progress, p: Pending) -> anyhow::Result<Outcome> {
    let Pending {
        engine,
        name,
        service,
        bound,
        mut containers,
        mut warnings,
        store,
        rollback: _,
    } = p;
    let name = name.as_str();
    let service = service.as_deref();
    let list = async || {
        engine
            .compose_containers(Some(name))
            .await
            .map(|l| listed_of(l, service))
    };
    progress.step(name, "waiting");
    loop {
        if containers.is_empty() {
            containers = list().await?;
        }
        let mut facts = facts::read(&engine, containers.clone()).await?;
        if facts.len() != containers.len() {
            // Removed under us: see the project as it is now.
            containers = list().await?;
            facts = facts::read(&engine, containers.clone()).await?;
        }
        let refs: Vec<&ContainerFacts> = facts.iter().collect();
        let (state, reason) = assess(&refs);
        let give_up = hopeless(&refs);
        if state == State::Active || give_up || bound.passed() {
            // This generation's lines stay readable after it is gone.
            if let Err(e) = seen::listed(&store, &containers, |p| p == name).await {
                warnings.push(seen::warning(&e));
            }
        }
        if state == State::Active {
            return Ok(Outcome {
                state,
                reason,
                warnings,
            });
        }
        if give_up || bound.passed() {
            let why = reason.unwrap_or_else(|| state.as_str().to_string());
            let summary = if give_up {
                format!("did not start: {why}")
            } else {
                format!(
                    "not active after {}: {why}",
                    crate::util::duration::format(bound.timeout)
                )
            };
            let details = bound::diagnose(&engine, &refs).await;
            return Err(Detailed { summary, details }.into());
        }
        progress.step(
            name,
            &format!("waiting ({})", reason.as_deref().unwrap_or(state.as_str())),
        );
        // Running containers that only have to stay up a moment are not asked
        // about again before they can have: fewer calls while other modules start.
        let pause =
            settles_in(&refs).map_or(POLL, |left| (left + SETTLE_MARGIN).clamp(POLL, SETTLE));
        tokio::time::sleep(pause.min(bound.left())).await;
    }
}
