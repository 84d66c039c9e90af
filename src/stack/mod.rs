//! Verbs on stack modules: compose creates and removes containers, the Engine API watches them.

pub mod assess;
pub mod compose;
pub mod credentials;
pub mod digest;
pub mod engine;
pub mod env;
pub mod facts;
pub mod fastpath;
pub mod labels;
pub mod logs;
pub mod pull;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::Context;
use bollard::models::ContainerSummary;

use crate::error::Detailed;
use crate::module::ServiceImage;
use crate::module::config::Settings;
use crate::module::outcome::{Outcome, StartOpts};
use crate::module::progress::Progress;
use crate::module::status::State;
use crate::stack::assess::{ContainerFacts, SETTLE, assess, hopeless, settles_in};
use crate::stack::compose::Project;
use crate::stack::engine::Engine;
use crate::stack::env::Env;
use crate::stack::labels::Identity;

const POLL: Duration = Duration::from_millis(250);
/// Polled this long after containers should have settled, so one poll sees it.
const SETTLE_MARGIN: Duration = Duration::from_millis(20);
/// Log lines shown for a service that did not come up.
const DIAG_LINES: u64 = 5;

/// A started stack that still has to reach `active`.
pub struct Pending {
    engine: Engine,
    name: String,
    timeout: Duration,
    /// The module's containers as just listed (empty: list them first).
    containers: Vec<ContainerSummary>,
    warnings: Vec<String>,
}

/// What a launch left: done, or started and waiting for `active`.
pub enum Launch {
    Done(Outcome),
    Wait(Pending),
}

/// `compose up -d --remove-orphans` (or the fast path when the files are
/// unchanged). The wait for `active` is [`wait`]'s, so that the caller can
/// free its `--jobs` slot in between.
pub async fn launch(
    env: Env<'_>,
    name: &str,
    dir: &Path,
    file: &Path,
    settings: &Settings,
    opts: &StartOpts,
) -> anyhow::Result<Launch> {
    let engine = env.stacks.engine().await?;
    let policy = opts.pull.unwrap_or(settings.pull);
    let timeout = opts.timeout.unwrap_or(settings.timeout);
    let digest = crate::stack::digest::of_module(dir);
    if let Some(services) = remembered(env, name, digest.as_deref()) {
        let known = crate::stack::fastpath::Known {
            services: &services,
            policy,
            pull_timeout: settings.pull_timeout,
        };
        if let Some((outcome, containers)) =
            crate::stack::fastpath::try_start(env, &engine, name, &known).await?
        {
            if outcome.state == State::Active || !opts.wait {
                return Ok(Launch::Done(outcome));
            }
            return Ok(Launch::Wait(Pending {
                engine,
                name: name.to_string(),
                timeout,
                containers,
                warnings: outcome.warnings,
            }));
        }
    }
    let compose = env.stacks.compose().await?;
    let project = Project { name, dir, file };
    let endpoint = env.stacks.endpoint();
    // hal pulls through the Engine API, so a failed pull can fall back to a
    // cached image; compose then only creates containers.
    let images = compose.images(&project, endpoint).await?;
    let warnings = crate::stack::pull::pull(
        &engine,
        env.progress,
        name,
        &images,
        policy,
        settings.pull_timeout,
    )
    .await?;
    env.store
        .set_pull_warning(name, warnings.first().cloned())
        .await?;
    env.progress.step(name, "starting");
    compose.up(&project, endpoint, Some("never")).await?;
    // The containers now reflect these files: remember them for the fast path.
    env.store.remember(name, digest, images).await?;
    if !opts.wait {
        let facts = engine.project_facts(name).await?;
        let (state, reason) = assess(&facts.iter().collect::<Vec<_>>());
        return Ok(Launch::Done(Outcome {
            state,
            reason,
            warnings,
        }));
    }
    Ok(Launch::Wait(Pending {
        engine,
        name: name.to_string(),
        timeout,
        containers: Vec::new(),
        warnings,
    }))
}

/// The services compose resolved the last time, if the files are the same now.
fn remembered(env: Env<'_>, name: &str, digest: Option<&str>) -> Option<Vec<ServiceImage>> {
    let digest = digest?;
    let (state, _) = env.store.read();
    let rec = state.modules.get(name)?;
    if rec.digest.as_deref() != Some(digest) {
        return None;
    }
    rec.services.clone()
}

/// Polls the project until every service is up (healthy where it has a
/// healthcheck), something fails for good, or the start's timeout passes.
///
/// Each poll inspects the containers the launch listed alone: no compose
/// process creates any while hal waits, and a list call costs the engine
/// several inspects when many modules start at once. One that went away makes
/// the next poll list again.
pub async fn wait(progress: &dyn Progress, p: Pending) -> anyhow::Result<Outcome> {
    let Pending {
        engine,
        name,
        timeout,
        mut containers,
        warnings,
    } = p;
    let name = name.as_str();
    let began = Instant::now();
    progress.step(name, "waiting");
    loop {
        if containers.is_empty() {
            containers = engine.compose_containers(Some(name)).await?;
        }
        let mut facts = engine.facts(containers.clone()).await?;
        if facts.len() != containers.len() {
            // Removed under us: see the project as it is now.
            containers = engine.compose_containers(Some(name)).await?;
            facts = engine.facts(containers.clone()).await?;
        }
        let refs: Vec<&ContainerFacts> = facts.iter().collect();
        let (state, reason) = assess(&refs);
        if state == State::Active {
            return Ok(Outcome {
                state,
                reason,
                warnings,
            });
        }
        let give_up = hopeless(&refs);
        if give_up || began.elapsed() >= timeout {
            let why = reason.unwrap_or_else(|| state.as_str().to_string());
            let summary = if give_up {
                format!("did not start: {why}")
            } else {
                format!(
                    "not active after {}: {why}",
                    crate::util::duration::format(timeout)
                )
            };
            let details = diagnose(&engine, &refs).await;
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
        tokio::time::sleep(pause.min(timeout.saturating_sub(began.elapsed()))).await;
    }
}

/// For each service that is not up: its state, exit code, health and last log lines.
async fn diagnose(engine: &Engine, containers: &[&ContainerFacts]) -> Vec<String> {
    use crate::module::status::Verdict;
    let mut out = Vec::new();
    for c in containers.iter().filter(|c| !c.oneoff) {
        if matches!(c.verdict(), Verdict::Up | Verdict::Completed) {
            continue;
        }
        out.push(format!(
            "{}: state {}, exit code {}, health {}, {} restarts",
            c.label(),
            c.status,
            c.exit_code.map_or("-".to_string(), |x| x.to_string()),
            c.health.as_deref().unwrap_or("none"),
            c.restart_count
        ));
        for line in engine.last_lines(&c.id, DIAG_LINES).await {
            out.push(format!("  {} | {line}", c.label()));
        }
    }
    out
}

/// `compose down`: containers and network go, named volumes stay.
pub async fn stop(env: Env<'_>, name: &str, dir: &Path, file: &Path) -> anyhow::Result<Outcome> {
    let compose = env.stacks.compose().await?;
    let engine = env.stacks.engine().await?;
    let project = Project { name, dir, file };
    env.progress.step(name, "stopping");
    compose.down(&project, env.stacks.endpoint()).await?;
    let facts = engine.project_facts(name).await?;
    let (state, reason) = assess(&facts.iter().collect::<Vec<_>>());
    Ok(Outcome {
        state,
        reason,
        warnings: Vec::new(),
    })
}

/// The containers of every named project, from one list call.
pub async fn node_facts(
    engine: &Engine,
    projects: &[&str],
    detail: crate::module::status::Detail,
) -> anyhow::Result<BTreeMap<String, Vec<ContainerFacts>>> {
    let list = if projects.len() == 1 {
        engine.compose_containers(Some(projects[0])).await?
    } else {
        engine.compose_containers(None).await?
    };
    let wanted: Vec<_> = list
        .into_iter()
        .filter(|s| {
            Identity::of_summary(s).is_some_and(|who| projects.contains(&who.project.as_str()))
        })
        .collect();
    let facts = engine
        .facts_with(wanted, detail)
        .await
        .context("read container state")?;
    let mut by_project: BTreeMap<String, Vec<ContainerFacts>> = BTreeMap::new();
    for f in facts {
        by_project.entry(f.project.clone()).or_default().push(f);
    }
    Ok(by_project)
}
