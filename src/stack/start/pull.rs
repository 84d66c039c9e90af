//! Pull policy: which images a start pulls through the Engine API, and the fallback to a cached image.

use crate::module::warning::Warning;
use std::time::Duration;

use anyhow::Context;
use futures_util::StreamExt;

use crate::docker::engine::Engine;
use crate::module::ServiceImage;
use crate::module::config::PullPolicy;
use crate::module::progress::Progress;
use crate::stack::env::Env;

/// What a pull is asked for: a module's images, under a policy, each within a timeout.
pub(crate) struct Ask<'a> {
    pub module: &'a str,
    pub services: &'a [ServiceImage],
    pub policy: PullPolicy,
    pub timeout: Duration,
}

/// Pulls what the policy asks for, then records the first warning as the
/// module's pull warning (`status` shows it); with `clears`, also when there
/// is none, so that an old one goes. Returns the warnings (a pull failed but
/// a cached image is present); fails when an image is absent and cannot be pulled.
pub(crate) async fn pull(
    env: Env<'_>,
    engine: &Engine,
    ask: &Ask<'_>,
    clears: bool,
) -> anyhow::Result<Vec<Warning>> {
    let warnings = pull_all(engine, env.progress, ask).await?;
    if clears || !warnings.is_empty() {
        let first = warnings.first().map(ToString::to_string);
        env.store.set_pull_warning(ask.module, first).await?;
    }
    Ok(warnings)
}

async fn pull_all(
    engine: &Engine,
    progress: &dyn Progress,
    ask: &Ask<'_>,
) -> anyhow::Result<Vec<Warning>> {
    let Ask {
        module,
        services,
        policy,
        timeout,
    } = *ask;
    let mut warnings = Vec::new();
    if policy == PullPolicy::Never {
        return Ok(warnings);
    }
    let mut seen = std::collections::HashSet::new();
    for s in services.iter().filter(|s| !s.build) {
        let Some(image) = &s.image else { continue };
        if !seen.insert(image.clone()) {
            continue;
        }
        let present = engine.image_present(image).await?;
        if policy == PullPolicy::Missing && present {
            continue;
        }
        match pull_one(engine, progress, module, image, timeout).await {
            Ok(()) => {}
            Err(e) if present => warnings.push(Warning::PullFailed {
                image: image.clone(),
                cause: Warning::cause(&e),
            }),
            Err(e) => {
                return Err(e.context(format!(
                    "image {image} (service {}) is not present locally and could not be pulled",
                    s.service
                )));
            }
        }
    }
    Ok(warnings)
}

async fn pull_one(
    engine: &Engine,
    progress: &dyn Progress,
    module: &str,
    image: &str,
    timeout: Duration,
) -> anyhow::Result<()> {
    let (repo, tag) = crate::docker::image_ref::split_ref(image);
    let credentials = crate::docker::credentials::for_image(image)
        .await
        .context("registry credentials")?;
    let mut stream = engine.pull(&repo, tag.as_deref(), credentials);
    let work = async {
        while let Some(item) = stream.next().await {
            let info = item.map_err(anyhow::Error::from)?;
            let (Some(id), Some(status)) = (info.id, info.status) else {
                continue;
            };
            let bytes = match (info.current, info.total) {
                (Some(cur), Some(total)) => Some((
                    u64::try_from(cur).unwrap_or(0),
                    u64::try_from(total).unwrap_or(0),
                )),
                _ => None,
            };
            progress.layer(module, &id, &status.to_lowercase(), bytes);
        }
        anyhow::Ok(())
    };
    match tokio::time::timeout(timeout, work).await {
        Ok(r) => r,
        Err(_) => anyhow::bail!(
            "pull of {image} did not finish within {}",
            crate::util::duration::format(timeout)
        ),
    }
}
