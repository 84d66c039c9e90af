//! The stop that always stops: when compose's `down` fails (a dependency's container gone, a file that no longer parses), the project's containers and networks go through the Engine API by its label, named volumes stay.

use std::time::Duration;

use anyhow::Context;
use futures_util::future::join_all;

use crate::docker::engine::{Engine, Listed};
use crate::module::outcome::Outcome;
use crate::module::warning::Warning;
use crate::stack::env::Env;
use crate::stack::look::assess::assess;
use crate::stack::look::facts;
use crate::stack::look::identity::{self, Snapshot};
use crate::stack::look::inspects::Inspects;
use crate::stack::one_stack::Stack;
use crate::stack::start::of_service;

/// `compose down`: containers and network go, named volumes stay. For one
/// service, its containers go (`compose stop` then `rm`) and the rest of the
/// project runs on. `grace` is compose's `-t`.
///
/// `seen` is the project's containers as listed under the module's lock just
/// before (its state before the stop was read from them, and nothing has
/// changed them since); `None`: the stop lists them itself. Returns the
/// outcome and the project's containers as the stop left them (what a start
/// right after may take as its own `seen`).
pub(crate) async fn stop(
    env: Env<'_>,
    stack: &Stack<'_>,
    grace: Option<Duration>,
    seen: Option<Snapshot>,
) -> anyhow::Result<(Outcome, Snapshot)> {
    let name = stack.name;
    let compose = env.stacks.compose().await?;
    let engine = env.stacks.engine().await?;
    let project = stack.project();
    let endpoint = env.stacks.endpoint()?;
    let mut warnings = Vec::new();
    // One list for the state before, the evidence, the refusal and the
    // ledger: nothing changes the project's containers before compose runs.
    // Each container inspected once, for the state before (done already when
    // `seen`), the evidence and the ledger: the same run, untouched since.
    let Snapshot {
        list: listed,
        inspects,
    } = match seen {
        Some(seen) => seen,
        None => Snapshot::of(engine.compose_containers(Some(name)).await?),
    };
    // A crash's evidence outlives the containers this stop removes.
    crate::stack::evidence::keep_listed(&engine, env.store, stack, &listed, &inspects).await?;
    // None of the target's containers listed: none is removed, and what the
    // stop leaves is what was listed (no list after).
    let mut left = untouched(&listed, stack.service);
    if !stack.dir.is_dir() {
        // Its directory is gone: compose has nothing to run in; what runs of
        // it is found by its label alone.
        env.progress.step(name, "stopping");
        let mine = of_service_listed(listed, stack.service);
        warnings.extend(remember(&engine, env, name, &mine, &inspects).await);
        by_labels(&engine, name, &mine, grace, stack.service.is_none()).await?;
        warnings.push(Warning::DirectoryGone(stack.dir.to_path_buf()));
        return finish(&engine, stack, left, warnings).await;
    }
    // Never another directory's project of the same name.
    identity::refuse_other(name, stack.dir, &listed)?;
    let mine = of_service_listed(listed, stack.service);
    warnings.extend(remember(&engine, env, name, &mine, &inspects).await);
    match stack.service {
        None => {
            env.progress.step(name, "stopping");
            if let Err(why) = compose.down(&project, endpoint, grace).await {
                // What compose left is listed again, and after the fallback.
                left = None;
                let still = engine.compose_containers(Some(name)).await?;
                by_labels(&engine, name, &still, grace, true)
                    .await
                    .with_context(|| format!("{why:#}"))?;
                warnings.push(fell_back(&why));
            }
        }
        Some(service) => {
            env.progress.step(name, &format!("stopping {service}"));
            compose
                .remove_service(&project, endpoint, service, grace)
                .await?;
        }
    }
    finish(&engine, stack, left, warnings).await
}

/// The containers this stop removes go into the module's ledger, with
/// their log drivers: their lines stay readable in the journal.
/// A ledger write that failed is the stop's warning.
async fn remember(
    engine: &Engine,
    env: Env<'_>,
    name: &str,
    mine: &[Listed],
    inspects: &Inspects,
) -> Option<Warning> {
    let remembered =
        crate::stack::look::seen::before_stop(engine, env.store, name, mine, inspects).await;
    remembered
        .err()
        .map(|e| Warning::LedgerNotRecorded(Warning::cause(&e)))
}

/// What a stop left behind, and the project's containers as it left them:
/// listed again, unless the stop touched none of them (`left`: the list
/// before, which then still holds).
async fn finish(
    engine: &Engine,
    stack: &Stack<'_>,
    left: Option<Vec<Listed>>,
    warnings: Vec<Warning>,
) -> anyhow::Result<(Outcome, Snapshot)> {
    let (list, facts) = match left {
        // The target had no container: its facts are none.
        Some(list) => (list, Vec::new()),
        None => {
            let list = engine.compose_containers(Some(stack.name)).await?;
            let facts = facts::read(engine, list.clone()).await?;
            (list, of_service(facts, stack.service))
        }
    };
    let (state, reason) = assess(&facts.iter().collect::<Vec<_>>());
    let outcome = Outcome {
        state,
        reason: reason.into(),
        warnings,
    };
    Ok((outcome, Snapshot::of(list)))
}

/// Stops (each with its own grace period, or `grace`), then removes, every
/// container of `project` in `of`, and, with `networks`, the project's
/// networks. The volumes stay, as `compose down` leaves them.
pub(crate) async fn by_labels(
    engine: &Engine,
    project: &str,
    of: &[Listed],
    grace: Option<Duration>,
    networks: bool,
) -> anyhow::Result<()> {
    let stops = of
        .iter()
        .filter(|c| c.is_running())
        .map(|c| engine.stop_container(&c.id, grace));
    first_error(join_all(stops).await)?;
    let removals = of.iter().map(|c| engine.remove_container(&c.id));
    first_error(join_all(removals).await)?;
    if !networks {
        return Ok(());
    }
    let networks = engine.networks().await?;
    for n in networks
        .iter()
        .filter(|n| n.project.as_deref() == Some(project))
    {
        engine
            .remove_network(&n.name)
            .await
            .with_context(|| format!("remove {project}'s network"))?;
    }
    Ok(())
}

/// The list itself when it holds none of the target's containers.
fn untouched(list: &[Listed], service: Option<&str>) -> Option<Vec<Listed>> {
    let mine = list
        .iter()
        .any(|c| service.is_none_or(|s| c.identity.as_ref().is_some_and(|i| i.service == s)));
    (!mine).then(|| list.to_vec())
}

fn of_service_listed(list: Vec<Listed>, service: Option<&str>) -> Vec<Listed> {
    list.into_iter()
        .filter(|c| service.is_none_or(|s| c.identity.as_ref().is_some_and(|i| i.service == s)))
        .collect()
}

fn first_error(results: Vec<anyhow::Result<()>>) -> anyhow::Result<()> {
    results.into_iter().collect()
}

/// The warning a fallback stop leaves in the outcome: that it fell back, and why.
pub(crate) fn fell_back(why: &anyhow::Error) -> Warning {
    let root = why.root_cause().to_string();
    let line = root
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim();
    Warning::DownFellBack(line.to_string())
}
