//! `update --check`: asks the registry for each image's digest now (the Engine API's distribution inspect) and compares it with what the service runs; nothing is pulled.

use crate::module::warning::Warning;
use crate::stack::env::Env;
use crate::stack::start::Stack;
use crate::stack::update::gate::{self, ImageChange};
use crate::state::records::CheckRecord;
use crate::util::timefmt::Stamp;

/// Each service's image and whether the registry has another; a registry
/// that cannot be asked is a warning (that service reads unchanged). The
/// answer is remembered in hal's state.
pub(crate) async fn check_update(
    env: Env<'_>,
    stack: &Stack<'_>,
) -> anyhow::Result<(Vec<ImageChange>, Vec<Warning>)> {
    let (engine, images, list) = gate::project_now(env, &stack.project()).await?;
    let mut changes = Vec::new();
    let mut warnings = Vec::new();
    env.progress.step(stack.name, "asking the registry");
    for s in gate::pullable(&images) {
        let image = s.image.clone().unwrap_or_default();
        let running = list
            .iter()
            .filter(|c| !c.is_oneoff() && c.service() == Some(s.service.as_str()))
            .find_map(|c| c.image_id.clone());
        let local = engine.image_facts(&image).await?;
        // What the service runs, else what its reference names here.
        let now = match &running {
            Some(id) => engine.image_facts(id).await?,
            None => local.clone(),
        };
        let credentials = crate::docker::credentials::for_image(&image).await?;
        let remote = match engine.registry_digest(&image, credentials).await {
            Ok(d) => Some(d),
            Err(e) => {
                warnings.push(Warning::RegistryNotAsked {
                    image: image.clone(),
                    cause: Warning::cause(&e),
                });
                None
            }
        };
        let pulled_not_applied = matches!((&running, &local), (Some(r), Some(l)) if *r != l.id);
        let newer = match (&remote, &now) {
            (Some(d), Some(f)) => !f.repo_digests.iter().any(|r| r.ends_with(&format!("@{d}"))),
            (Some(_), None) => true,
            (None, _) => false,
        };
        changes.push(ImageChange {
            service: s.service.clone(),
            from: now.as_ref().map(|f| gate::digest_of(f, &image)),
            to: remote.or_else(|| now.as_ref().map(|f| gate::digest_of(f, &image))),
            image,
            changed: newer || pulled_not_applied,
        });
    }
    let record = CheckRecord {
        at: Stamp::now().whole_milli(),
        available: changes
            .iter()
            .filter(|c| c.changed)
            .map(|c| c.service.clone())
            .collect(),
        error: warnings.first().map(ToString::to_string),
    };
    let name = stack.name.to_string();
    env.store
        .update(move |s| s.modules.entry(name).or_default().update_check = Some(record))
        .await?;
    Ok((changes, warnings))
}
