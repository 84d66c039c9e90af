//! The order compose starts a project's containers in (dependencies first, ties by service name), for starts that do not go through compose.

use std::collections::{BTreeMap, BTreeSet};

use crate::docker::engine::Listed;
use crate::docker::labels;
use crate::module::{Dependency, ServiceImage};

/// Every service's dependencies: what compose's configuration said when hal
/// last ran it (`services`), and what compose wrote on the containers.
pub(crate) fn dependencies(
    containers: &[&Listed],
    services: &[ServiceImage],
) -> BTreeMap<String, Vec<Dependency>> {
    let mut out: BTreeMap<String, Vec<Dependency>> = BTreeMap::new();
    let mut add = |service: &str, dep: Dependency| {
        let deps = out.entry(service.to_string()).or_default();
        match deps.iter_mut().find(|d| d.service == dep.service) {
            Some(d) if d.condition == crate::module::Condition::ServiceStarted => {
                d.condition = dep.condition;
            }
            Some(_) => {}
            None => deps.push(dep),
        }
    };
    for s in services {
        for d in &s.after {
            add(&s.service, d.clone());
        }
    }
    for c in containers {
        if let Some(service) = c.service() {
            for d in labels::depends_on(&c.labels) {
                add(service, d);
            }
        }
    }
    out
}

/// The services in start order: each after every service it depends on
/// (among `present`), the first by name among those ready; a cycle (which
/// compose refuses) is broken at the first by name.
pub(crate) fn services(
    present: &BTreeSet<String>,
    deps: &BTreeMap<String, Vec<Dependency>>,
) -> Vec<String> {
    let mut left = present.clone();
    let mut out = Vec::new();
    while !left.is_empty() {
        let waits = |s: &String| {
            deps.get(s).is_some_and(|ds| {
                ds.iter()
                    .any(|d| d.service != *s && left.contains(&d.service))
            })
        };
        let next = left
            .iter()
            .find(|s| !waits(s))
            .or_else(|| left.iter().next())
            .cloned();
        let Some(next) = next else { break };
        left.remove(&next);
        out.push(next);
    }
    out
}

/// The containers in start order: by their service's place in
/// [`services`], then replica number.
pub(crate) fn containers<'a>(
    containers: &[&'a Listed],
    deps: &BTreeMap<String, Vec<Dependency>>,
) -> Vec<&'a Listed> {
    let present: BTreeSet<String> = containers
        .iter()
        .filter_map(|c| c.service())
        .map(str::to_string)
        .collect();
    let rank: BTreeMap<String, usize> = services(&present, deps)
        .into_iter()
        .enumerate()
        .map(|(i, s)| (s, i))
        .collect();
    let mut out = containers.to_vec();
    out.sort_by_key(|c| {
        let rank = c.service().and_then(|s| rank.get(s)).copied();
        let number = c.identity.as_ref().map_or(0, |who| who.number);
        (rank.unwrap_or(usize::MAX), number)
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::docker::labels::Identity;
    use crate::module::Condition;

    fn dep(service: &str) -> Dependency {
        Dependency {
            service: service.to_string(),
            condition: Condition::ServiceStarted,
        }
    }

    fn deps(pairs: &[(&str, &[&str])]) -> BTreeMap<String, Vec<Dependency>> {
        pairs
            .iter()
            .map(|(s, ds)| (s.to_string(), ds.iter().map(|d| dep(d)).collect()))
            .collect()
    }

    fn set(names: &[&str]) -> BTreeSet<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn dependencies_come_first_and_ties_go_by_name() {
        let d = deps(&[("app", &["db"]), ("web", &["app", "cache"])]);
        let order = services(&set(&["web", "db", "cache", "app", "zz"]), &d);
        assert_eq!(order, ["cache", "db", "app", "web", "zz"]);
    }

    #[test]
    fn an_absent_dependency_and_a_cycle_do_not_block() {
        let d = deps(&[("app", &["gone"]), ("a", &["b"]), ("b", &["a"])]);
        assert_eq!(services(&set(&["app", "a", "b"]), &d), ["app", "a", "b"]);
    }

    fn listed(service: &str, number: u32, label: Option<&str>) -> Listed {
        let mut c = Listed {
            id: format!("{service}-{number}"),
            identity: Some(Identity {
                project: "p".into(),
                service: service.into(),
                number,
                oneoff: false,
            }),
            ..Listed::default()
        };
        if let Some(l) = label {
            c.labels
                .insert("com.docker.compose.depends_on".into(), l.into());
        }
        c
    }

    #[test]
    fn containers_follow_labels_and_records_then_replica_number() {
        // Newest first, as the list gives them.
        let web2 = listed("web", 2, None);
        let web1 = listed("web", 1, None);
        let side = listed("side", 1, Some("db:service_started:true"));
        let db = listed("db", 1, None);
        let all = [&web2, &web1, &side, &db];
        let recorded = [ServiceImage {
            service: "db".into(),
            image: None,
            build: false,
            gated: false,
            replicas: 1,
            after: vec![dep("web")],
        }];
        let d = dependencies(&all, &recorded);
        let ids: Vec<&str> = containers(&all, &d).iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["web-1", "web-2", "db-1", "side-1"]);
    }
}
