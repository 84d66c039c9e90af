//! What the next start would do to each service of a stack (`hal plan`), decided as compose's `up` decides, on GETs alone.

mod decide;

use std::collections::HashMap;

use crate::docker::compose::config_hash::Resolved;
use crate::module::service_action::{ServicePlan, Why};
use crate::stack::env::Stacks;
use crate::stack::start::Stack;

/// The plan of one stack: compose resolves its files (`config`, which reads
/// and changes nothing), the engine lists its containers and names the local
/// image of each reference. Nothing is pulled, created or started.
pub(crate) async fn forecast(
    client: &Stacks,
    stack: &Stack<'_>,
) -> anyhow::Result<Vec<ServicePlan>> {
    let endpoint = client.endpoint()?;
    let engine = client.engine().await?;
    let compose = client.compose().await?;
    let resolved = compose.resolved(&stack.project(), endpoint).await?;
    let list = engine.compose_containers(Some(stack.name)).await?;
    let seen: Vec<decide::SeenContainer> =
        list.iter().filter_map(decide::SeenContainer::of).collect();
    let mut images = HashMap::new();
    for r in &resolved {
        if let Some(reference) = &r.image
            && !images.contains_key(reference)
            && let Some(id) = engine.image_id(reference).await?
        {
            images.insert(reference.clone(), id);
        }
    }
    let why = |r: &Resolved| config_reasons(r, &seen);
    Ok(decide::decide(&resolved, &seen, &images, &why))
}

/// Why a service's configuration differs from its containers': the hashes,
/// when hal has no record of the configuration they were made from.
fn config_reasons(r: &Resolved, seen: &[decide::SeenContainer]) -> Vec<Why> {
    let was = seen
        .iter()
        .find(|c| c.service == r.service && c.hash.as_deref() != Some(&r.hash))
        .and_then(|c| c.hash.as_deref())
        .unwrap_or("none");
    let short = |h: &str| h.get(..12).unwrap_or(h).to_string();
    vec![Why::new(
        "config",
        format!(
            "the configuration changed (config hash {} -> {}; no record of the old values)",
            short(was),
            short(&r.hash)
        ),
    )]
}
