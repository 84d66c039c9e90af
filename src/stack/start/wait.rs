//! The wait for `active` after a start: polls the project's containers until every service is up, something fails for good, or the start's timeout passes; a gated start's wait rolls back when it fails.

use std::time::Duration;

use crate::docker::engine::{Engine, Listed};
use crate::module::diagnosed::Detailed;
use crate::module::outcome::Outcome;
use crate::module::progress::Progress;
use crate::module::reason::Reason;
use crate::module::status::State;
use crate::module::warning::Warning;
use crate::stack::bound;
use crate::stack::look::assess::{ContainerFacts, SETTLE, assess, hopeless, settles_in};
use crate::stack::look::{facts, seen};
use crate::stack::one_stack::Stack;
use crate::stack::start::pending::Pending;
use crate::stack::swap::rollback;

/// How a wait for `active` ended, when it did not fail outright.
pub(crate) enum Waited {
    Active(Outcome),
    /// The new images did not become active: put back on the previous ones.
    RolledBack(rollback::RolledBack),
}

const POLL: Duration = Duration::from_millis(250);
/// Polled this long after containers should have settled, so one poll sees it.
const SETTLE_MARGIN: Duration = Duration::from_millis(20);

/// Polls the project until every service is up (healthy where it has a
/// healthcheck), something fails for good, or the start's timeout passes.
///
/// Each poll inspects the containers the launch listed alone: no compose
/// process creates any while hal waits, and a list call costs the engine
/// several inspects when many modules start at once. One that went away makes
/// the next poll list again.
///
/// When the launch moved services onto new images, a wait that fails rolls
/// them back (`swap/rollback.rs`), and one that succeeds clears an old rollback.
pub(crate) async fn wait(progress: &dyn Progress, p: Pending) -> anyhow::Result<Waited> {
    wait_holding(progress, p, None).await
}

/// [`wait`], and once the module is active, `hold` (what requires it, active
/// too within the same bound: the update's gate, `run/update.rs`): when it
/// fails, the new images are rolled back as when the module itself fails.
pub(crate) async fn wait_holding(
    progress: &dyn Progress,
    mut p: Pending,
    hold: Option<rollback::WaitAgain<'_>>,
) -> anyhow::Result<Waited> {
    let Some(rollback) = p.rollback.take() else {
        return wait_active(progress, p).await.map(Waited::Active);
    };
    let engine = p.engine.clone();
    let store = p.store.clone();
    let bound = p.bound;
    let waited = match wait_active(progress, p).await {
        Ok(o) => match hold {
            Some(hold) => hold(bound).await.map(|()| o),
            None => Ok(o),
        },
        Err(e) => Err(e),
    };
    match waited {
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
    let again = |bound| -> futures_util::future::LocalBoxFuture<'_, anyhow::Result<()>> {
        let stack = Stack {
            name: &name,
            dir: &dir,
            service: service.as_deref(),
        };
        let p = Pending::new(store, engine, &stack, bound);
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
                warnings.push(Warning::LedgerNotRecorded(Warning::cause(&e)));
            }
        }
        if state == State::Active {
            return Ok(Outcome {
                state,
                reason: reason.into(),
                warnings,
            });
        }
        // The cause in words (the state's, without one), for the error and the progress line.
        let why = reason
            .as_ref()
            .map_or_else(|| state.as_str().to_string(), |r| r.to_string());
        if give_up || bound.passed() {
            let summary = if give_up {
                format!("did not start: {why}")
            } else {
                format!(
                    "not active after {}: {why}",
                    crate::util::duration::format(bound.timeout)
                )
            };
            let details = bound::diagnose(&engine, &refs).await;
            let seen = reason
                .as_ref()
                .and_then(Reason::as_seen)
                .into_iter()
                .collect();
            return Err(Detailed {
                summary,
                details,
                seen,
            }
            .into());
        }
        progress.step(name, &format!("waiting ({why})"));
        // Running containers that only have to stay up a moment are not asked
        // about again before they can have: fewer calls while other modules start.
        let pause =
            settles_in(&refs).map_or(POLL, |left| (left + SETTLE_MARGIN).clamp(POLL, SETTLE));
        tokio::time::sleep(pause.min(bound.left())).await;
    }
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
