//! What a start would fail on halfway, found before anything starts: a `container_name` another project's container has, a host port another container publishes, an external network that does not exist. `hal plan` lists them; a start refuses them before it makes anything (compose would start the services before the one that fails).

use crate::docker::compose::config_hash::Resolved;
use crate::docker::engine::{Engine, Listed};
use crate::stack::forecast::missing_network::{NetworkMissing, missing_networks};
use crate::stack::forecast::port_clash::{PortTaken, taken_ports};

/// One thing the start would fail on halfway.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Clash {
    #[error(transparent)]
    Name(#[from] NameTaken),
    #[error(transparent)]
    Port(#[from] PortTaken),
    #[error(transparent)]
    Network(#[from] NetworkMissing),
}

impl Clash {
    /// The plan's word for it (`fails[].what`).
    pub(crate) fn what(&self) -> &'static str {
        match self {
            Clash::Name(_) => "container_name",
            Clash::Port(_) => "port",
            Clash::Network(_) => "network",
        }
    }
}

/// Every clash of the services `resolved` of `project` with what the engine
/// holds now (list calls only, each made only when a service needs it).
pub(crate) async fn clashes(
    engine: &Engine,
    resolved: &[Resolved],
    project: &str,
) -> anyhow::Result<Vec<Clash>> {
    let mut out: Vec<Clash> = Vec::new();
    let has = |key: &str| resolved.iter().any(|r| r.config.get(key).is_some());
    if has("container_name") {
        let all = engine.compose_containers(None).await?;
        out.extend(
            taken_names(resolved, project, &all)
                .into_iter()
                .map(Clash::from),
        );
    }
    if has("ports") {
        let running = engine.running_containers().await?;
        out.extend(
            taken_ports(resolved, project, &running)
                .into_iter()
                .map(Clash::from),
        );
    }
    if resolved.iter().any(|r| !r.external_networks.is_empty()) {
        let networks = engine.networks().await?;
        out.extend(
            missing_networks(resolved, &networks)
                .into_iter()
                .map(Clash::from),
        );
    }
    Ok(out)
}

/// A service's `container_name` held by a container of another project.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "container_name {name} (service {service}) is taken by {holder}; rename one of them (compose would start the services before it and fail halfway)"
)]
pub(crate) struct NameTaken {
    pub service: String,
    pub name: String,
    /// The container's project (`project PROJ`) or `a container made by hand`.
    pub holder: String,
}

/// The `container_name`s of `resolved` that a container of another project
/// (or one made outside compose) already has, from the engine's list.
pub(crate) fn taken_names(resolved: &[Resolved], project: &str, all: &[Listed]) -> Vec<NameTaken> {
    let mut out = Vec::new();
    for r in resolved {
        let Some(name) = r.config.get("container_name").and_then(|n| n.as_str()) else {
            continue;
        };
        let Some(c) = all.iter().find(|c| c.name == name) else {
            continue;
        };
        let holder = match &c.identity {
            Some(id) if id.project == project => continue,
            Some(id) => format!("a container of project {}", id.project),
            None => "a container made outside compose".to_string(),
        };
        out.push(NameTaken {
            service: r.service.clone(),
            name: name.to_string(),
            holder,
        });
    }
    out
}
