//! A `container_name` another project's container already has: compose would create the services before it and then fail halfway, so `hal plan` lists it and a start refuses it before anything is made.

use crate::docker::compose::config_hash::Resolved;
use crate::docker::engine::Listed;

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
