//! Compose's container labels, read in one place: which project, service and replica a container is, and whether it is a one-off `run`.

use std::collections::HashMap;

/// The compose project (hal's module name).
pub(crate) const PROJECT: &str = "com.docker.compose.project";
/// The compose service.
pub(crate) const SERVICE: &str = "com.docker.compose.service";
/// Compose's hash of the service's configuration the container was made from.
pub(crate) const CONFIG_HASH: &str = "com.docker.compose.config-hash";
/// The id of the image compose made the container from (compose v2).
pub(crate) const IMAGE: &str = "com.docker.compose.image";
/// The directory compose ran the project from (absolute).
pub(crate) const WORKING_DIR: &str = "com.docker.compose.project.working_dir";
/// `True` on a container made by `compose run`.
const ONEOFF: &str = "com.docker.compose.oneoff";
/// The replica number, from 1.
pub(crate) const NUMBER: &str = "com.docker.compose.container-number";
/// Compose v2's record of `depends_on`: `db:service_healthy:true,cache:service_started:false`
/// (service, condition, restart).
const DEPENDS_ON: &str = "com.docker.compose.depends_on";

/// Who a compose container is, as its labels say.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Identity {
    pub project: String,
    /// Empty when the label is missing.
    pub service: String,
    pub number: u32,
    pub oneoff: bool,
}

impl Identity {
    /// The identity in a label map (a container's labels, or an event's
    /// attributes); `None` when the container belongs to no compose project.
    pub(crate) fn of(labels: &HashMap<String, String>) -> Option<Identity> {
        Some(Identity {
            project: labels.get(PROJECT)?.clone(),
            service: labels.get(SERVICE).cloned().unwrap_or_default(),
            number: labels.get(NUMBER).and_then(|n| n.parse().ok()).unwrap_or(1),
            oneoff: labels
                .get(ONEOFF)
                .is_some_and(|v| v.eq_ignore_ascii_case("true")),
        })
    }

    /// `service`, or `service-N` for the second replica on: the name a log
    /// line and a status row use.
    pub(crate) fn replica_name(&self) -> String {
        replica_name(&self.service, self.number)
    }
}

/// `service`, or `service-N` for the second replica on: the name a log line,
/// a status row and the ledger use, written here alone.
pub(crate) fn replica_name(service: &str, number: u32) -> String {
    if number > 1 {
        format!("{service}-{number}")
    } else {
        service.to_string()
    }
}

/// Compose v2's `depends_on` label, entry by entry: the service, its
/// condition word and its `restart` flag (`db:service_healthy:true`).
fn depends_on_entries(labels: &HashMap<String, String>) -> Vec<(&str, Option<&str>, bool)> {
    let Some(deps) = labels.get(DEPENDS_ON) else {
        return Vec::new();
    };
    deps.split(',')
        .filter_map(|d| {
            let mut parts = d.trim().split(':');
            let service = parts.next()?.trim();
            let condition = parts.next();
            let restart = parts
                .next()
                .is_some_and(|r| r.trim().eq_ignore_ascii_case("true"));
            (!service.is_empty()).then_some((service, condition, restart))
        })
        .collect()
}

/// The services a container must be restarted with, as compose would: those
/// its service names in `depends_on` with `restart: true`.
pub(crate) fn restarts_with(labels: &HashMap<String, String>) -> Vec<String> {
    depends_on_entries(labels)
        .into_iter()
        .filter(|(_, _, restart)| *restart)
        .map(|(service, _, _)| service.to_string())
        .collect()
}

/// What a container's service starts after, as compose v2 recorded it
/// (implicit dependencies, such as `network_mode: service:X`, included);
/// empty without the label (compose v1).
pub(crate) fn depends_on(labels: &HashMap<String, String>) -> Vec<crate::module::Dependency> {
    use crate::module::{Condition, Dependency};
    depends_on_entries(labels)
        .into_iter()
        .map(|(service, condition, _)| Dependency {
            service: service.to_string(),
            condition: condition
                .and_then(Condition::parse)
                .unwrap_or(Condition::ServiceStarted),
        })
        .collect()
}

/// The directory compose ran a container's project from, when it says.
pub(crate) fn working_dir(labels: &HashMap<String, String>) -> Option<&str> {
    labels
        .get(WORKING_DIR)
        .map(String::as_str)
        .filter(|d| !d.is_empty())
}

/// The list filter for one project's containers, or every compose container.
pub(crate) fn project_filter(project: Option<&str>) -> String {
    match project {
        Some(p) => format!("{PROJECT}={p}"),
        None => PROJECT.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
            .collect()
    }

    #[test]
    fn labels_become_an_identity() {
        let id = Identity::of(&map(&[
            (PROJECT, "web"),
            (SERVICE, "www"),
            (NUMBER, "2"),
            (ONEOFF, "False"),
        ]))
        .unwrap();
        assert_eq!(id.project, "web");
        assert_eq!(id.replica_name(), "www-2");
        assert!(!id.oneoff);
        let run = Identity::of(&map(&[(PROJECT, "web"), (ONEOFF, "True")])).unwrap();
        assert!(run.oneoff);
        assert_eq!(run.number, 1);
        assert_eq!(Identity::of(&map(&[(SERVICE, "x")])), None);
    }

    #[test]
    fn depends_on_restart_true_is_read_from_the_label() {
        let l = map(&[(
            DEPENDS_ON,
            "db:service_healthy:true,cache:service_started:false,queue:service_started:True",
        )]);
        assert_eq!(restarts_with(&l), ["db", "queue"]);
        assert!(restarts_with(&map(&[(DEPENDS_ON, "")])).is_empty());
        assert!(restarts_with(&map(&[])).is_empty());
        let deps = depends_on(&l);
        assert_eq!(deps.len(), 3);
        assert_eq!(deps[0].service, "db");
        assert_eq!(deps[0].condition, crate::module::Condition::ServiceHealthy);
        assert!(depends_on(&map(&[(DEPENDS_ON, "")])).is_empty());
    }
}
