//! The services a service starts after, read from compose's resolved configuration, so a start without compose keeps compose's order.

use std::collections::HashMap;

use serde_json::Value;

use crate::module::{Condition, Dependency};

/// A service's dependencies in compose's resolved configuration: its
/// `depends_on` (a list or a map with conditions), and the implicit ones
/// compose orders by too: `network_mode`, `ipc` and `pid` of `service:X`,
/// `volumes_from` (`X`, `X:ro`, `service:X:rw`; a `container:` is none),
/// `links` (`X`, `X:alias`). Sorted by name, each once, the strictest
/// condition kept.
pub(super) fn of_service(service: &Value) -> Vec<Dependency> {
    let mut out: Vec<Dependency> = Vec::new();
    let mut add = |name: &str, condition: Condition| {
        let name = name.trim();
        if name.is_empty() {
            return;
        }
        match out.iter_mut().find(|d| d.service == name) {
            Some(d) if d.condition == Condition::ServiceStarted => d.condition = condition,
            Some(_) => {}
            None => out.push(Dependency {
                service: name.to_string(),
                condition,
            }),
        }
    };
    match service.get("depends_on") {
        Some(Value::Array(list)) => {
            for name in list.iter().filter_map(Value::as_str) {
                add(name, Condition::ServiceStarted);
            }
        }
        Some(Value::Object(map)) => {
            for (name, how) in map {
                let condition = how
                    .get("condition")
                    .and_then(Value::as_str)
                    .and_then(Condition::parse)
                    .unwrap_or(Condition::ServiceStarted);
                add(name, condition);
            }
        }
        _ => {}
    }
    for key in ["network_mode", "ipc", "pid"] {
        if let Some(name) = service
            .get(key)
            .and_then(Value::as_str)
            .and_then(|m| m.strip_prefix("service:"))
        {
            add(name, Condition::ServiceStarted);
        }
    }
    for spec in strings(service.get("volumes_from")) {
        let spec = spec.strip_prefix("service:").unwrap_or(spec);
        if !spec.starts_with("container:") {
            add(
                spec.split(':').next().unwrap_or_default(),
                Condition::ServiceStarted,
            );
        }
    }
    for link in strings(service.get("links")) {
        add(
            link.split(':').next().unwrap_or_default(),
            Condition::ServiceStarted,
        );
    }
    out.sort_by(|a, b| a.service.cmp(&b.service));
    out
}

/// Every service's dependencies in `docker-compose config`'s YAML (v1);
/// empty when it cannot be read.
pub(super) fn of_v1_yaml(text: &str) -> HashMap<String, Vec<Dependency>> {
    let Ok(doc) = yaml_serde::from_str::<Value>(text) else {
        return HashMap::new();
    };
    doc.get("services")
        .and_then(Value::as_object)
        .map(|services| {
            services
                .iter()
                .map(|(name, s)| (name.clone(), of_service(s)))
                .collect()
        })
        .unwrap_or_default()
}

fn strings(v: Option<&Value>) -> impl Iterator<Item = &str> {
    v.and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(deps: &[Dependency]) -> Vec<(&str, Condition)> {
        deps.iter()
            .map(|d| (d.service.as_str(), d.condition))
            .collect()
    }

    #[test]
    fn every_kind_of_dependency_is_read() {
        let s: Value = serde_json::json!({
            "depends_on": {"db": {"condition": "service_healthy"}, "job": {"condition": "service_completed_successfully"}},
            "network_mode": "service:net",
            "ipc": "service:db",
            "pid": "host",
            "volumes_from": ["service:data:rw", "files:ro", "container:other"],
            "links": ["cache:c", "db"],
        });
        use Condition::*;
        assert_eq!(
            names(&of_service(&s)),
            [
                ("cache", ServiceStarted),
                ("data", ServiceStarted),
                ("db", ServiceHealthy),
                ("files", ServiceStarted),
                ("job", ServiceCompletedSuccessfully),
                ("net", ServiceStarted),
            ]
        );
        assert!(of_service(&serde_json::json!({"image": "x"})).is_empty());
    }

    #[test]
    fn v1_config_yaml_is_read() {
        let yaml = "services:\n  app:\n    depends_on:\n      db:\n        condition: service_healthy\n    image: busybox\n  db:\n    image: busybox\n  web:\n    depends_on:\n    - db\n    pid: service:app\nversion: '2.4'\n";
        let deps = of_v1_yaml(yaml);
        assert_eq!(names(&deps["app"]), [("db", Condition::ServiceHealthy)]);
        assert!(deps["db"].is_empty());
        assert_eq!(
            names(&deps["web"]),
            [
                ("app", Condition::ServiceStarted),
                ("db", Condition::ServiceStarted)
            ]
        );
        assert!(of_v1_yaml("not: [yaml").is_empty());
    }
}
