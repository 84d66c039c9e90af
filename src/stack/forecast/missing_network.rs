//! An external network that does not exist and that no module makes: compose would fail on it ("network X not found"), so `hal plan` lists it and a start refuses it first, in the plan's words (naming the service and the fix). A network a module makes is that module's requirement (inferred): a wait, not a fail.

use crate::docker::compose::config_hash::Resolved;
use crate::docker::compose::{Compose, Project};
use crate::docker::endpoint::Endpoint;
use crate::docker::engine::NetworkFacts;

/// A network a service joins, declared `external`, that the engine does not have.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "network {network} (service {service}) is declared external but does not exist, and no module makes it; create it (docker network create {network})"
)]
pub(crate) struct NetworkMissing {
    pub service: String,
    pub network: String,
}

/// The external networks of `resolved` the engine does not have, each with
/// the first service that joins it.
pub(crate) fn missing_networks(
    resolved: &[Resolved],
    have: &[NetworkFacts],
) -> Vec<NetworkMissing> {
    let mut out: Vec<NetworkMissing> = Vec::new();
    for r in resolved {
        for network in &r.external_networks {
            if have.iter().any(|n| n.name == *network) || out.iter().any(|m| m.network == *network)
            {
                continue;
            }
            out.push(NetworkMissing {
                service: r.service.clone(),
                network: network.clone(),
            });
        }
    }
    out
}

/// The module among `required` (what the module requires, transitively)
/// whose files make `network` (a network not `external` whose engine name
/// it is): the start starts that module first, so the network is a wait, not
/// a fail. Asked of compose (`config`, which reads only), and only when a
/// network is missing.
pub(crate) async fn provider(
    compose: &Compose,
    endpoint: &Endpoint,
    required: &[Project<'_>],
    network: &str,
) -> anyhow::Result<Option<String>> {
    for project in required {
        let doc = compose.resolved_doc(project, endpoint).await?;
        let makes = doc
            .get("networks")
            .and_then(|n| n.as_object())
            .is_some_and(|n| {
                n.values().any(|n| {
                    n.get("name").and_then(|v| v.as_str()) == Some(network)
                        && n.get("external").and_then(serde_json::Value::as_bool) != Some(true)
                })
            });
        if makes {
            return Ok(Some(project.name.to_string()));
        }
    }
    Ok(None)
}
