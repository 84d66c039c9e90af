//! The list and inspect answers as hal reads them off the wire: every field optional, every word a string, so one engine's word hal does not know (Podman's `stopped`) never fails a call.

use std::collections::HashMap;

use serde::Deserialize;

use super::model::{Inspected, Listed, LogConfig, Published};
use crate::docker::labels::Identity;
use crate::module::run_state::ContainerRun as RunState;
use crate::module::run_state::{Health, RestartPolicy};
use crate::util::timefmt::{self, Stamp};

/// One entry of `GET /containers/json`.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub(super) struct Summary {
    pub id: Option<String>,
    pub names: Option<Vec<String>>,
    pub image: Option<String>,
    #[serde(rename = "ImageID")]
    pub image_id: Option<String>,
    pub labels: Option<HashMap<String, String>>,
    pub state: Option<String>,
    pub status: Option<String>,
    pub health: Option<HealthField>,
    pub created: Option<i64>,
    pub network_settings: Option<Networks>,
    pub host_config: Option<ListedHostConfig>,
    pub ports: Option<Vec<PortRow>>,
}

/// One entry of the list's `Ports`: a port published on the host has a `PublicPort`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct PortRow {
    #[serde(rename = "IP")]
    pub ip: Option<String>,
    #[serde(rename = "PublicPort")]
    pub public_port: Option<u16>,
    #[serde(rename = "Type")]
    pub typ: Option<String>,
}

/// The list's `HostConfig`: only its network mode (`container:ID` for a shared namespace).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub(super) struct ListedHostConfig {
    pub network_mode: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub(super) struct HealthField {
    pub status: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub(super) struct Networks {
    pub networks: Option<HashMap<String, NetworkEndpoint>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct NetworkEndpoint {
    #[serde(rename = "EndpointID")]
    pub endpoint_id: Option<String>,
}

/// `GET /containers/ID/json`, the parts hal reads.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub(super) struct Inspect {
    pub state: Option<ContainerState>,
    pub host_config: Option<HostConfig>,
    pub restart_count: Option<i64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub(super) struct ContainerState {
    pub status: Option<String>,
    pub health: Option<HealthField>,
    pub exit_code: Option<i64>,
    pub started_at: Option<String>,
    pub finished_at: Option<String>,
    #[serde(rename = "OOMKilled")]
    pub oom_killed: Option<bool>,
    pub error: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub(super) struct HostConfig {
    pub restart_policy: Option<Policy>,
    pub log_config: Option<LogCfg>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub(super) struct LogCfg {
    #[serde(rename = "Type")]
    pub typ: Option<String>,
    pub config: Option<std::collections::HashMap<String, String>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub(super) struct Policy {
    pub name: Option<String>,
    pub maximum_retry_count: Option<i64>,
}

/// One entry of Podman's own list (`/libpod/containers/json`): its `Status` is
/// the health word (`healthy`, `unhealthy`, `starting`; empty without a healthcheck),
/// which its Docker-compatible list leaves out.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub(super) struct LibpodRow {
    pub id: Option<String>,
    pub status: Option<String>,
}

/// Gives each listed container the health Podman's own list states for it.
pub(super) fn add_health(listed: &mut [Listed], rows: Vec<LibpodRow>) {
    let words: HashMap<String, Option<Health>> = rows
        .into_iter()
        .filter_map(|r| Some((r.id?, r.status.filter(|w| !w.is_empty())?)))
        .map(|(id, w)| (id, Health::from_word(&w)))
        .collect();
    for l in listed.iter_mut().filter(|l| l.health.is_none()) {
        l.health = words.get(&l.id).copied();
    }
}

impl Summary {
    pub(super) fn listed(self) -> Listed {
        let labels = self.labels.unwrap_or_default();
        let state = self.state.as_deref().and_then(RunState::from_word);
        let run = match (&self.network_settings, state) {
            (Some(n), Some(RunState::Running)) => n
                .networks
                .as_ref()
                .and_then(|nets| run_of(nets.values().map(|e| e.endpoint_id.as_deref()))),
            _ => None,
        };
        Listed {
            id: self.id.unwrap_or_default(),
            name: first_name(self.names.as_ref()),
            image: self.image.unwrap_or_default(),
            image_id: self.image_id,
            identity: Identity::of(&labels),
            labels,
            state,
            status_text: self.status,
            health: self
                .health
                .and_then(|h| h.status)
                .filter(|h| !h.is_empty())
                .map(|h| Health::from_word(&h)),
            created: self.created.map_or(Stamp::EPOCH, Stamp::from_secs),
            run,
            netns_of: self
                .host_config
                .and_then(|h| h.network_mode)
                .and_then(|m| m.strip_prefix("container:").map(str::to_string))
                .filter(|id| !id.is_empty()),
            ports: self
                .ports
                .unwrap_or_default()
                .into_iter()
                .filter_map(|p| {
                    Some(Published {
                        ip: p.ip.unwrap_or_default(),
                        port: p.public_port?,
                        protocol: p.typ.unwrap_or_else(|| "tcp".to_string()),
                    })
                })
                .collect(),
        }
    }
}

impl Inspect {
    pub(super) fn inspected(self) -> Inspected {
        let state = self.state.unwrap_or_default();
        let (policy, log) = match self.host_config {
            Some(h) => (h.restart_policy, h.log_config),
            None => (None, None),
        };
        let log = log.map(|l| LogConfig::of(l.typ, l.config.as_ref()));
        Inspected {
            log,
            state: state.status.as_deref().and_then(RunState::from_word),
            health: state
                .health
                .and_then(|h| h.status)
                .map(|h| Health::from_word(&h)),
            exit_code: state.exit_code,
            restart: policy.map_or(RestartPolicy::No, |p| {
                RestartPolicy::from_word(
                    p.name.as_deref().unwrap_or_default(),
                    p.maximum_retry_count.unwrap_or(0),
                )
            }),
            restart_count: self.restart_count,
            started_at: state.started_at.as_deref().and_then(timefmt::parse_set),
            finished_at: state.finished_at.as_deref().and_then(timefmt::parse_set),
            oom_killed: state.oom_killed.unwrap_or(false),
            error: state.error.filter(|e| !e.is_empty()),
        }
    }
}

/// A listed container's name: the first of its names, without the leading `/`.
fn first_name(names: Option<&Vec<String>>) -> String {
    names
        .and_then(|n| n.first())
        .map(|n| n.trim_start_matches('/').to_string())
        .unwrap_or_default()
}

/// The endpoint ids joined, sorted; `None` when there is none or one is empty.
fn run_of<'a>(endpoints: impl Iterator<Item = Option<&'a str>>) -> Option<String> {
    let mut ids: Vec<&str> = Vec::new();
    for id in endpoints {
        match id {
            Some(id) if !id.is_empty() => ids.push(id),
            _ => return None,
        }
    }
    if ids.is_empty() {
        return None;
    }
    ids.sort_unstable();
    Some(ids.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn podmans_stopped_is_read_as_exited_in_list_and_inspect() {
        let list: Vec<Summary> = serde_json::from_str(
            r#"[{"Id":"c1","Names":["/j-job-1"],"Image":"localhost/hal-fixture:latest",
                "State":"stopped","Status":"Exited (0) Less than a second ago","Created":1,
                "Labels":{"com.docker.compose.project":"j","com.docker.compose.service":"job"},
                "NetworkSettings":{"Networks":{"j_default":{"EndpointID":""}}},"Unknown":[1]},
               {"Id":"c2","Names":["/j-web-1"],"State":"running","Labels":null,
                "NetworkSettings":{"Networks":{"j_default":{"EndpointID":"e1"}}}}]"#,
        )
        .unwrap();
        let listed: Vec<Listed> = list.into_iter().map(Summary::listed).collect();
        assert_eq!(listed[0].state, Some(RunState::Exited));
        assert_eq!(listed[0].name, "j-job-1");
        assert_eq!(listed[0].service(), Some("job"));
        assert_eq!(listed[1].run.as_deref(), Some("e1"));
        let inspect: Inspect = serde_json::from_str(
            r#"{"State":{"Status":"stopped","ExitCode":3,"Health":{"Status":"unhealthy"}},
                "HostConfig":{"RestartPolicy":{"Name":"always","MaximumRetryCount":0}},
                "RestartCount":null}"#,
        )
        .unwrap();
        let i = inspect.inspected();
        assert_eq!(i.state, Some(RunState::Exited));
        assert_eq!(i.health, Some(Some(Health::Unhealthy)));
        assert_eq!(i.restart, RestartPolicy::Always);
        assert_eq!(i.restart_count, None);
    }

    fn one(state: &str, networks: &str) -> Listed {
        let json = format!(
            r#"{{"Id":"c1","Names":["/m-web-1"],"State":"{state}","NetworkSettings":{{"Networks":{networks}}}}}"#
        );
        serde_json::from_str::<Summary>(&json).unwrap().listed()
    }

    #[test]
    fn a_run_is_the_endpoint_ids_of_a_running_container() {
        let l = one(
            "running",
            r#"{"b_net":{"EndpointID":"e2"},"a_net":{"EndpointID":"e1"}}"#,
        );
        assert_eq!(l.run.as_deref(), Some("e1,e2"));
        assert_eq!(l.name, "m-web-1");
        assert_eq!(one("exited", r#"{"n":{"EndpointID":"e1"}}"#).run, None);
        assert_eq!(one("running", "{}").run, None, "no endpoint");
        assert_eq!(one("running", r#"{"n":{"EndpointID":""}}"#).run, None);
    }

    #[test]
    fn created_is_the_engines_second_and_none_is_the_epoch() {
        let l = serde_json::from_str::<Summary>(r#"{"Id":"c1","Created":1764900000}"#)
            .unwrap()
            .listed();
        assert_eq!((l.created.secs(), l.created.nanos()), (1_764_900_000, 0));
        assert_eq!(one("running", "{}").created, Stamp::EPOCH);
    }

    #[test]
    fn podmans_own_list_adds_health() {
        let mut listed = vec![
            Listed {
                id: "a".into(),
                ..Listed::default()
            },
            Listed {
                id: "b".into(),
                ..Listed::default()
            },
        ];
        let rows: Vec<LibpodRow> = serde_json::from_str(
            r#"[{"Id":"a","Status":"unhealthy","State":"running"},{"Id":"b","Status":""}]"#,
        )
        .unwrap();
        add_health(&mut listed, rows);
        assert_eq!(listed[0].health, Some(Some(Health::Unhealthy)));
        assert_eq!(listed[1].health, None);
    }
}
