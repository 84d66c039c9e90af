//! What the next start would do to each service of a stack (`hal plan`), decided as compose's `up` decides, on GETs alone.

pub(crate) mod clashes;
mod config_keys;
mod decide;
pub(crate) mod missing_network;
pub(crate) mod port_clash;

use std::collections::HashMap;

use crate::docker::compose::Compose;
use crate::docker::compose::config_hash::{self, Resolved};
use crate::docker::endpoint::Endpoint;
use crate::docker::engine::Engine;
use crate::docker::engine::images::ImageFacts;
use crate::module::config::PullPolicy;
use crate::module::service_action::{ServicePlan, Why};
use crate::stack::env::Stacks;
use crate::stack::one_stack::Stack;
use crate::stack::project::inputs::InputError;
use crate::stack::project::known::Models;
use crate::state::Store;
use crate::state::applied::{self, Applied};
use config_keys::ConfigSources;

/// The plan of one stack: compose resolves its files (`config`, which reads
/// and changes nothing), the engine lists its containers and names the local
/// image of each reference. Nothing is pulled, created or started.
pub(crate) async fn forecast(
    client: &Stacks,
    store: &Store,
    stack: &Stack<'_>,
    pull: PullPolicy,
    required: &[Stack<'_>],
    models: &Models,
) -> anyhow::Result<Forecast> {
    // A file compose would need is missing: the start's own refusal, in its words.
    if let Err(e @ (InputError::Missing { .. } | InputError::NoComposeFile(_))) =
        crate::stack::project::digest::digest_of_module(stack.dir).await?
    {
        return Err(e.into());
    }
    let endpoint = client.endpoint()?;
    let engine = client.engine().await?;
    let compose = client.compose().await?;
    let mut resolved = resolve(&compose, endpoint, stack, models).await?;
    let list = engine.compose_containers(Some(stack.name)).await?;
    // `network_mode: service:X` and the like are hashed with X's container id.
    let id_of = |service: &str| {
        list.iter()
            .filter(|c| {
                c.identity
                    .as_ref()
                    .is_some_and(|i| i.service == service && !i.oneoff)
            })
            .min_by(|a, b| a.name.cmp(&b.name))
            .map(|c| c.id.clone())
    };
    for r in &mut resolved {
        r.resolve_refs(&id_of);
    }
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
    // Under `always` the start pulls first: what the registry has now.
    let newer = match pull {
        PullPolicy::Always => registry_newer(&engine, &resolved).await?,
        PullPolicy::Missing | PullPolicy::Never => HashMap::new(),
    };
    // The record of the last start, and the files now, name the keys changed.
    let record = applied::read(store.dir(), stack.name);
    let sources = ConfigSources::of_module(stack.dir);
    // What would fail, said before anything starts.
    let mut fails = sources.unset();
    let required: Vec<_> = required.iter().map(Stack::project).collect();
    let mut waits = Vec::new();
    for c in clashes::clashes(&engine, &resolved, stack.name).await? {
        // A network a module it requires makes: the start starts that one first.
        if let clashes::Clash::Network(m) = &c
            && let Some(by) =
                missing_network::provider(&compose, endpoint, &required, &m.network).await?
        {
            let detail = format!(
                "network {} (service {}) is made by {by}, which the start starts first",
                m.network, m.service
            );
            waits.push(Why::new("network", detail));
            continue;
        }
        fails.push(Why::new(c.what(), c.to_string()));
    }
    let why = |r: &Resolved| config_reasons(r, &seen, record.as_ref(), &sources);
    let services = decide::decide(&resolved, &seen, &images, &newer, &why);
    Ok(Forecast {
        services,
        fails,
        waits,
    })
}

/// What the next start would do to each service of a stack, what it would
/// fail on halfway, and what it would wait for that its files say (a network
/// a required module makes).
pub(crate) struct Forecast {
    pub services: Vec<ServicePlan>,
    pub fails: Vec<Why>,
    pub waits: Vec<Why>,
}

/// Each service as compose resolves it: what `config` said last, kept in
/// the cache of what compose reads while none of it changed (stamped before
/// compose is asked, so a change while it runs is seen next time), else asked.
async fn resolve(
    compose: &Compose,
    endpoint: &Endpoint,
    stack: &Stack<'_>,
    models: &Models,
) -> anyhow::Result<Vec<Resolved>> {
    let id = compose.identity();
    if let Some(text) = models.compose_said(stack.dir, &id, stack.name) {
        return config_hash::resolved(&text);
    }
    let _ = models.inputs(stack.dir);
    let text = compose.resolved_text(&stack.project(), endpoint).await?;
    let resolved = config_hash::resolved(&text)?;
    models.keep_compose_said(stack.dir, &id, stack.name, text);
    Ok(resolved)
}

/// The references whose registry has another image than the local one (the
/// start's pull would bring it, and compose recreate on it): the reference
/// and both digests. Asked as `update --check` asks (the distribution
/// inspect, a GET); nothing is pulled. A registry that cannot be asked
/// leaves the cached image, as the start's pull does.
async fn registry_newer(
    engine: &Engine,
    resolved: &[Resolved],
) -> anyhow::Result<HashMap<String, Why>> {
    let mut out = HashMap::new();
    for r in resolved {
        let Some(reference) = &r.image else { continue };
        let built = r.config.get("build").is_some_and(|b| !b.is_null());
        if built || out.contains_key(reference) {
            continue;
        }
        let credentials = crate::docker::credentials::for_image(reference).await?;
        let Ok(remote) = engine.registry_digest(reference, credentials).await else {
            continue;
        };
        let local = engine.image_facts(reference).await?;
        let has = |f: &ImageFacts| {
            f.repo_digests
                .iter()
                .any(|d| d.ends_with(&format!("@{remote}")))
        };
        if local.as_ref().is_some_and(has) {
            continue;
        }
        let was = local
            .as_ref()
            .and_then(|f| f.repo_digests.first())
            .and_then(|d| d.split_once('@').map(|(_, d)| d.to_string()))
            .unwrap_or_else(|| "none".to_string());
        out.insert(
            reference.clone(),
            Why::new(
                "image",
                format!("{reference}: {was} -> {remote} (the registry's; pull always)"),
            ),
        );
    }
    Ok(out)
}

/// Why a service's configuration differs from its containers': each key
/// changed since the start that made them (the applied record), or, with no
/// record of that start (a container hal did not make), the hashes alone.
fn config_reasons(
    r: &Resolved,
    seen: &[decide::SeenContainer],
    record: Option<&Applied>,
    sources: &ConfigSources,
) -> Vec<Why> {
    let stale = seen
        .iter()
        .find(|c| c.service == r.service && c.hash.as_deref() != Some(&r.hash));
    let was = stale.and_then(|c| c.hash.as_deref());
    if let Some(was) = was
        && let Some(applied) = record.and_then(|a| a.services.get(&r.service))
        && applied.hash == was
    {
        let keys = config_keys::changed_keys(&applied.config, &r.config, sources);
        if !keys.is_empty() {
            return keys;
        }
    }
    let short = |h: &str| h.get(..12).unwrap_or(h).to_string();
    let whose = stale.map_or_else(|| "its container".to_string(), |c| c.name.clone());
    vec![Why::new(
        "config",
        format!(
            "the configuration changed (config hash {} -> {}; hal has no record of the configuration {whose} was made from)",
            short(was.unwrap_or("none")),
            short(&r.hash)
        ),
    )]
}
