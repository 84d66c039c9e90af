//! Starting an unchanged stack without compose: nothing to do when it is already up, the Engine API when it was only stopped.

use std::time::Duration;

use crate::module::ServiceImage;
use crate::module::config::PullPolicy;
use crate::module::outcome::Outcome;
use crate::module::status::State;
use crate::stack::assess::health_from_status_text;
use crate::stack::engine::{Engine, Listed, RunState as S};
use crate::stack::env::Env;

/// What the fast path may use, all of it remembered from the last compose run
/// for the same files.
pub struct FastInputs<'a> {
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
    known: &FastInputs<'_>,
) -> anyhow::Result<Option<(Outcome, Vec<Listed>)>> {
    let list = engine.compose_containers(Some(name)).await?;
    let main: Vec<&Listed> = list
        .iter()
        .filter(|c| !c.is_oneoff())
        .filter(|c| known.only.is_none() || c.service() == known.only)
        .collect();
    if main.is_empty() || !same_services(&main, known.services) {
        return Ok(None);
    }
    let all_up = main.iter().all(|c| settled_running(c));
    let all_stopped = main
        .iter()
        .all(|c| matches!(c.state, Some(S::Exited | S::Created)));
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
        if !same_images(engine, &main, known.services).await? {
            return Ok(None);
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
    order.sort_by_key(|c| c.created);
    for c in order {
        engine.start_container(&c.id).await?;
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

/// Whether every container runs the image its service's reference names now
/// (after a pull); a service built from source is never compared.
async fn same_images(
    engine: &Engine,
    main: &[&Listed],
    services: &[ServiceImage],
) -> anyhow::Result<bool> {
    for c in main {
        let Some(s) = services
            .iter()
            .find(|s| c.service() == Some(s.service.as_str()))
        else {
            return Ok(false);
        };
        if let (Some(image), false) = (&s.image, s.build)
            && engine.image_id(image).await? != c.image_id
        {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Every service has a container and no container belongs to an unknown service.
fn same_services(main: &[&Listed], services: &[ServiceImage]) -> bool {
    services
        .iter()
        .all(|s| main.iter().any(|c| c.service() == Some(s.service.as_str())))
        && main.iter().all(|c| {
            services
                .iter()
                .any(|s| c.service() == Some(s.service.as_str()))
        })
}

/// Running, not unhealthy or still starting, and up for more than a moment.
fn settled_running(c: &Listed) -> bool {
    let text = c.status_text.as_deref().unwrap_or_default();
    c.state == Some(S::Running)
        && !matches!(
            c.health
                .as_deref()
                .or_else(|| health_from_status_text(text)),
            Some("starting" | "unhealthy")
        )
        && !text.contains("Less than a second")
}
