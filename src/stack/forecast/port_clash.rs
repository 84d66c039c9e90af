//! A host port a running container of another project (or one made by hand) already publishes: the engine would refuse the container at its start ("port is already allocated") after compose started what came before it.

use crate::docker::compose::config_hash::Resolved;
use crate::docker::engine::Listed;

/// A service's published host port that another container holds.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "port {port} (service {service}) is already published by {holder}; free it or publish another (the engine would refuse the container after compose started the ones before it)"
)]
pub(crate) struct PortTaken {
    pub service: String,
    /// `IP:PORT/PROTOCOL` as the service asks for it.
    pub port: String,
    /// `module M's service S (container C)` or `container C (made outside compose)`.
    pub holder: String,
}

/// One host port (or range) a service publishes.
struct PortAsked<'a> {
    ip: &'a str,
    first: u16,
    last: u16,
    protocol: &'a str,
}

/// The host ports of `resolved` that a running container of another project
/// (or one made outside compose) publishes, from the engine's list of running
/// containers. A range clashes only when every port of it is held (the
/// engine takes a free one of it). Addresses overlap when equal or when
/// either is unspecified (`0.0.0.0`, `::`, none).
pub(crate) fn taken_ports(
    resolved: &[Resolved],
    project: &str,
    running: &[Listed],
) -> Vec<PortTaken> {
    let mut out = Vec::new();
    for r in resolved {
        for w in wanted(&r.config) {
            let holder = |port: u16| {
                running.iter().find_map(|c| {
                    let mine = c.identity.as_ref().is_some_and(|id| id.project == project);
                    let holds = c.ports.iter().any(|p| {
                        p.port == port && p.protocol == w.protocol && overlap(&p.ip, w.ip)
                    });
                    (!mine && holds).then(|| whose(c))
                })
            };
            let held: Vec<Option<String>> = (w.first..=w.last).map(holder).collect();
            if held.iter().all(Option::is_some)
                && let Some(Some(who)) = held.into_iter().next()
            {
                let ip = if w.ip.is_empty() { "0.0.0.0" } else { w.ip };
                let ports = match w.first == w.last {
                    true => w.first.to_string(),
                    false => format!("{}-{}", w.first, w.last),
                };
                out.push(PortTaken {
                    service: r.service.clone(),
                    port: format!("{ip}:{ports}/{}", w.protocol),
                    holder: who,
                });
            }
        }
    }
    out
}

/// The published ports of a service as `config --format json` resolves them.
fn wanted(config: &serde_json::Value) -> Vec<PortAsked<'_>> {
    let Some(ports) = config.get("ports").and_then(|p| p.as_array()) else {
        return Vec::new();
    };
    ports
        .iter()
        .filter_map(|p| {
            let published = match p.get("published")? {
                serde_json::Value::String(s) => s.as_str(),
                _ => return None,
            };
            let (first, last) = match published.split_once('-') {
                Some((a, b)) => (a.parse().ok()?, b.parse().ok()?),
                None => {
                    let n = published.parse().ok()?;
                    (n, n)
                }
            };
            Some(PortAsked {
                ip: p.get("host_ip").and_then(|i| i.as_str()).unwrap_or(""),
                first,
                last,
                protocol: p.get("protocol").and_then(|i| i.as_str()).unwrap_or("tcp"),
            })
        })
        .filter(|w| w.first != 0 && w.first <= w.last)
        .collect()
}

fn overlap(a: &str, b: &str) -> bool {
    let any = |ip: &str| matches!(ip, "" | "0.0.0.0" | "::");
    any(a) || any(b) || a == b
}

fn whose(c: &Listed) -> String {
    match &c.identity {
        Some(id) => format!(
            "module {}'s service {} (container {})",
            id.project, id.service, c.name
        ),
        None => format!("container {} (made outside compose)", c.name),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::docker::engine::Published;

    fn service(ports: serde_json::Value) -> Resolved {
        Resolved {
            service: "web".into(),
            hash: String::new(),
            image: None,
            replicas: 1,
            depends_on: Vec::new(),
            config: serde_json::json!({ "ports": ports }),
            external_networks: Vec::new(),
            doc: crate::docker::compose::config_hash::Ordered::Null,
        }
    }

    fn holding(ip: &str, port: u16) -> Listed {
        Listed {
            name: "other".into(),
            ports: vec![Published {
                ip: ip.into(),
                port,
                protocol: "tcp".into(),
            }],
            ..Listed::default()
        }
    }

    #[test]
    fn addresses_overlap_when_one_is_unspecified_and_a_range_when_all_is_held() {
        let one = |ip: &str| {
            service(serde_json::json!([{"host_ip": ip, "published": "8080", "protocol": "tcp"}]))
        };
        assert_eq!(
            taken_ports(&[one("127.0.0.1")], "p", &[holding("0.0.0.0", 8080)]).len(),
            1
        );
        assert_eq!(
            taken_ports(&[one("0.0.0.0")], "p", &[holding("127.0.0.1", 8080)]).len(),
            1
        );
        assert!(taken_ports(&[one("127.0.0.1")], "p", &[holding("127.0.0.2", 8080)]).is_empty());
        assert!(taken_ports(&[one("127.0.0.1")], "p", &[holding("0.0.0.0", 8081)]).is_empty());
        let udp = service(serde_json::json!([{"published": "8080", "protocol": "udp"}]));
        assert!(taken_ports(&[udp], "p", &[holding("0.0.0.0", 8080)]).is_empty());
        let range = service(serde_json::json!([{"published": "8080-8081", "protocol": "tcp"}]));
        assert!(taken_ports(std::slice::from_ref(&range), "p", &[holding("", 8080)]).is_empty());
        let both = [holding("", 8080), holding("", 8081)];
        assert_eq!(
            taken_ports(&[range], "p", &both)[0].port,
            "0.0.0.0:8080-8081/tcp"
        );
    }
}
