//! Starting an unchanged stack without compose: nothing to do when it is already up, the Engine API when it was only stopped.

use std::time::Duration;

use bollard::models::{ContainerSummary, ContainerSummaryStateEnum as S};

use crate::module::ServiceImage;
use crate::module::config::PullPolicy;
use crate::module::outcome::Outcome;
use crate::module::status::State;
use crate::stack::assess::health_from_status_text;
use crate::stack::engine::Engine;
use crate::stack::env::Env;
use crate::stack::labels::Identity;

/// What the fast path may use, all of it remembered from the last compose run
/// for the same files.
pub struct Known<'a> {
    pub services: &'a [ServiceImage],
    pub policy: PullPolicy,
    pub pull_timeout: Duration,
    /// Only this service's containers (`MODULE/SERVICE`); `services` then
    /// holds that service alone.
    pub only: Option<&'a str>,
}

/// Starts `name` without compose when that is certainly what compose would do;
/// `None` means "go through compose". With the outcome come the module's
/// containers as listed, for the caller's wait.
pub async fn try_start(
    env: Env<'_>,
    engine: &Engine,
    name: &str,
    known: &Known<'_>,
) -> anyhow::Result<Option<(Outcome, Vec<ContainerSummary>)>> {
    let list = engine.compose_containers(Some(name)).await?;
    let main: Vec<&ContainerSummary> = list
        .iter()
        .filter(|c| !is_oneoff(c))
        .filter(|c| known.only.is_none() || service_of(c).as_deref() == known.only)
        .collect();
    if main.is_empty() || !same_services(&main, known.services) {
        return Ok(None);
    }
    let all_up = main.iter().all(|c| settled_running(c));
    let all_stopped = main
        .iter()
        .all(|c| matches!(c.state, Some(S::EXITED | S::CREATED)));
    if !all_up && !all_stopped {
        return Ok(None);
    }
    // Under `always` the pull comes first; a new image means compose must recreate.
    let mut warnings = Vec::new();
    if known.policy == PullPolicy::Always {
        warnings = crate::stack::pull::pull(
            engine,
            env.progress,
            name,
            known.services,
            known.policy,
            known.pull_timeout,
        )
        .await?;
        env.store
            .set_pull_warning(name, warnings.first().cloned())
            .await?;
        for c in &main {
            let Some(s) = known
                .services
                .iter()
                .find(|s| service_of(c).as_deref() == Some(s.service.as_str()))
            else {
                return Ok(None);
            };
            if let (Some(image), false) = (&s.image, s.build)
                && engine.image_id(image).await? != c.image_id
            {
                return Ok(None);
            }
        }
    }
    if all_up {
        let outcome = Outcome {
            state: State::Active,
            reason: None,
            warnings,
        };
        return Ok(Some((outcome, Vec::new())));
    }
    // Stopped (`docker stop`): start the same containers, in the order compose
    // created them, unless a service must wait for another's condition.
    if known.services.iter().any(|s| s.gated) {
        return Ok(None);
    }
    let mut order = main.clone();
    order.sort_by_key(|c| c.created.unwrap_or_default());
    for c in order {
        engine
            .start_container(c.id.as_deref().unwrap_or_default())
            .await?;
    }
    // The caller waits for active, with its `--jobs` slot given back.
    let outcome = Outcome {
        state: State::Starting,
        reason: None,
        warnings,
    };
    let containers = main.into_iter().cloned().collect();
    Ok(Some((outcome, containers)))
}

fn is_oneoff(c: &ContainerSummary) -> bool {
    Identity::of_summary(c).is_some_and(|who| who.oneoff)
}

fn service_of(c: &ContainerSummary) -> Option<String> {
    Identity::of_summary(c).map(|who| who.service)
}

/// Every service has a container and no container belongs to an unknown service.
fn same_services(main: &[&ContainerSummary], services: &[ServiceImage]) -> bool {
    services.iter().all(|s| {
        main.iter()
            .any(|c| service_of(c).as_deref() == Some(s.service.as_str()))
    }) && main.iter().all(|c| {
        services
            .iter()
            .any(|s| service_of(c).as_deref() == Some(s.service.as_str()))
    })
}

/// Running, not unhealthy or still starting, and up for more than a moment.
fn settled_running(c: &ContainerSummary) -> bool {
    let text = c.status.as_deref().unwrap_or_default();
    c.state == Some(S::RUNNING)
        && !matches!(
            health_from_status_text(text),
            Some("starting" | "unhealthy")
        )
        && !text.contains("Less than a second")
}
