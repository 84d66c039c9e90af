//! Verbs on stack modules: compose creates and removes containers, the Engine API watches them.

pub mod assess;
pub mod compose;
pub mod credentials;
pub mod digest;
pub mod engine;
pub mod fastpath;
pub mod pull;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::Context;
use bollard::models::ContainerSummary;

use crate::cmd::ctx::Ctx;
use crate::error::Detailed;
use crate::module::config::PullPolicy;
use crate::module::status::State;
use crate::stack::assess::{ContainerFacts, SETTLE, assess, hopeless, settles_in};
use crate::stack::compose::{Project, ServiceImage};
use crate::stack::engine::Engine;

const POLL: Duration = Duration::from_millis(250);
/// Polled this long after containers should have settled, so one poll sees it.
const SETTLE_MARGIN: Duration = Duration::from_millis(20);
/// Log lines shown for a service that did not come up.
const DIAG_LINES: u64 = 5;

/// What a verb left behind.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub state: State,
    pub reason: Option<String>,
    pub warnings: Vec<String>,
}

/// How a start behaves.
#[derive(Clone, Debug)]
pub struct StartOpts {
    pub pull: Option<PullPolicy>,
    pub wait: bool,
    pub timeout: Option<Duration>,
}

/// `compose up -d --remove-orphans`, then wait for `active`.
pub async fn start(
    ctx: &Ctx,
    name: &str,
    dir: &Path,
    file: &Path,
    opts: &StartOpts,
) -> anyhow::Result<Outcome> {
    let settings = ctx.config.settings(name);
    let engine = ctx.engine().await?;
    let policy = opts.pull.unwrap_or(settings.pull);
    let timeout = opts.timeout.unwrap_or(settings.timeout);
    let digest = crate::stack::digest::of_module(dir);
    if let Some(services) = remembered(ctx, name, digest.as_deref()) {
        let known = crate::stack::fastpath::Known {
            services: &services,
            policy,
            pull_timeout: settings.pull_timeout,
        };
        if let Some((outcome, containers)) =
            crate::stack::fastpath::try_start(ctx, &engine, name, &known).await?
        {
            if outcome.state == State::Active || !opts.wait {
                return Ok(outcome);
            }
            crate::run::release_slot();
            let mut waited = wait_active(ctx, &engine, name, timeout, containers).await?;
            waited.warnings.extend(outcome.warnings);
            return Ok(waited);
        }
    }
    let compose = ctx.compose().await?;
    let project = Project { name, dir, file };
    // hal pulls through the Engine API, so a failed pull can fall back to a
    // cached image; compose then only creates containers.
    let images = compose.images(&project, ctx.host.as_deref()).await?;
    let warnings = crate::stack::pull::pull(
        &engine,
        &ctx.ui,
        name,
        &images,
        policy,
        settings.pull_timeout,
    )
    .await?;
    ctx.store
        .set_pull_warning(name, warnings.first().cloned())?;
    let spinner = ctx.ui.spinner(format!("{name}: starting"));
    let up = compose
        .up(&project, ctx.host.as_deref(), Some("never"))
        .await;
    spinner.finish_and_clear();
    up?;
    // The containers now reflect these files: remember them for the fast path.
    ctx.store.remember(name, digest, images)?;
    if !opts.wait {
        let facts = engine.project_facts(name).await?;
        let (state, reason) = assess(&facts.iter().collect::<Vec<_>>());
        return Ok(Outcome {
            state,
            reason,
            warnings,
        });
    }
    crate::run::release_slot();
    let mut outcome = wait_active(ctx, &engine, name, timeout, Vec::new()).await?;
    outcome.warnings.extend(warnings);
    Ok(outcome)
}

/// The services compose resolved the last time, if the files are the same now.
fn remembered(ctx: &Ctx, name: &str, digest: Option<&str>) -> Option<Vec<ServiceImage>> {
    let digest = digest?;
    let (state, _) = ctx.store.read();
    let rec = state.modules.get(name)?;
    if rec.digest.as_deref() != Some(digest) {
        return None;
    }
    rec.services.clone()
}

/// Polls the project until every service is up (healthy where it has a
/// healthcheck), something fails for good, or `timeout` passes.
///
/// `containers` are the project's containers as just listed (empty: list them
/// here). Each poll inspects those alone: no compose process creates any while
/// hal waits, and a list call costs the engine several inspects when many
/// modules start at once. One that went away makes the next poll list again.
pub async fn wait_active(
    ctx: &Ctx,
    engine: &Engine,
    name: &str,
    timeout: Duration,
    mut containers: Vec<ContainerSummary>,
) -> anyhow::Result<Outcome> {
    let began = Instant::now();
    let spinner = ctx.ui.spinner(format!("{name}: waiting"));
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
            spinner.finish_and_clear();
            return Ok(Outcome {
                state,
                reason,
                warnings: Vec::new(),
            });
        }
        let give_up = hopeless(&refs);
        if give_up || began.elapsed() >= timeout {
            spinner.finish_and_clear();
            let why = reason.unwrap_or_else(|| state.as_str().to_string());
            let summary = if give_up {
                format!("did not start: {why}")
            } else {
                format!(
                    "not active after {}: {why}",
                    crate::util::duration::format(timeout)
                )
            };
            let details = diagnose(engine, &refs).await;
            return Err(Detailed { summary, details }.into());
        }
        spinner.set_message(format!(
            "{name}: waiting ({})",
            reason.as_deref().unwrap_or(state.as_str())
        ));
        // Running containers that only have to stay up a moment are not asked
        // about again before they can have: fewer calls while other modules start.
        let pause =
            settles_in(&refs).map_or(POLL, |left| (left + SETTLE_MARGIN).clamp(POLL, SETTLE));
        tokio::time::sleep(pause.min(timeout.saturating_sub(began.elapsed()))).await;
    }
}

/// For each service that is not up: its state, exit code, health and last log lines.
async fn diagnose(engine: &Engine, containers: &[&ContainerFacts]) -> Vec<String> {
    use crate::stack::assess::Verdict;
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
pub async fn stop(ctx: &Ctx, name: &str, dir: &Path, file: &Path) -> anyhow::Result<Outcome> {
    let compose = ctx.compose().await?;
    let engine = ctx.engine().await?;
    let project = Project { name, dir, file };
    let spinner = ctx.ui.spinner(format!("{name}: stopping"));
    let down = compose.down(&project, ctx.host.as_deref()).await;
    spinner.finish_and_clear();
    down?;
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
    detail: crate::stack::engine::Detail,
) -> anyhow::Result<BTreeMap<String, Vec<ContainerFacts>>> {
    let list = if projects.len() == 1 {
        engine.compose_containers(Some(projects[0])).await?
    } else {
        engine.compose_containers(None).await?
    };
    let wanted: Vec<_> = list
        .into_iter()
        .filter(|s| {
            s.labels
                .as_ref()
                .and_then(|l| l.get(crate::stack::engine::PROJECT_LABEL))
                .is_some_and(|p| projects.contains(&p.as_str()))
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
