//! A container's facts from what the engine said of it: the list call alone when that is enough, else list and inspect.

use bollard::models::{ContainerInspectResponse, ContainerSummary};

use crate::stack::assess::{ContainerFacts, health_from_status_text};
use crate::stack::labels::Identity;
use crate::util::timefmt::Stamp;

/// A running container's facts from its summary alone, when it has been up
/// long enough that restart count and exact start time cannot change its
/// verdict; `None` when it must be inspected.
pub fn settled(s: &ContainerSummary, now: Stamp) -> Option<ContainerFacts> {
    use bollard::models::ContainerSummaryStateEnum as S;
    if s.state != Some(S::RUNNING) {
        return None;
    }
    let text = s.status.as_deref()?;
    let up = crate::stack::assess::uptime_from_status(text)?;
    if up < crate::stack::assess::RESETTLE * 2 {
        return None;
    }
    let started = Stamp {
        secs: now.secs - i64::try_from(up.as_secs()).unwrap_or(0),
        nanos: 0,
    };
    Some(ContainerFacts {
        status: "running".into(),
        health: health_from_status_text(text).map(str::to_string),
        started_at: Some(started.rfc3339()),
        observed_at: Some(now),
        ..identity(s)
    })
}

/// Builds the facts of one container from its summary and its inspect.
pub fn of(s: &ContainerSummary, i: &ContainerInspectResponse) -> ContainerFacts {
    let state = i.state.clone().unwrap_or_default();
    let status = state
        .status
        .map(|st| st.to_string())
        .or_else(|| s.state.map(|st| st.to_string()))
        .unwrap_or_default();
    let health = state
        .health
        .as_ref()
        .and_then(|h| h.status)
        .map(|h| h.to_string())
        .filter(|h| !h.is_empty() && h != "none")
        .or_else(|| {
            s.status
                .as_deref()
                .and_then(health_from_status_text)
                .map(str::to_string)
        });
    let policy = i
        .host_config
        .as_ref()
        .and_then(|h| h.restart_policy.as_ref());
    let restart_policy = policy
        .and_then(|p| p.name)
        .map(|n| n.to_string())
        .unwrap_or_default();
    let max_retries = policy.and_then(|p| p.maximum_retry_count).unwrap_or(0);
    let time = |t: Option<String>| t.filter(|t| !t.starts_with("0001-"));
    ContainerFacts {
        status,
        health,
        exit_code: state.exit_code,
        restart_policy,
        max_retries,
        restart_count: i.restart_count.unwrap_or(0),
        started_at: time(state.started_at),
        finished_at: time(state.finished_at),
        oom_killed: state.oom_killed.unwrap_or(false),
        error: state.error.filter(|e| !e.is_empty()),
        observed_at: Some(Stamp::now()),
        ..identity(s)
    }
}

/// What the list call alone says of a container: who it is, never how it is.
fn identity(s: &ContainerSummary) -> ContainerFacts {
    let who = Identity::of_summary(s).unwrap_or(Identity {
        project: String::new(),
        service: String::new(),
        number: 1,
        oneoff: false,
    });
    ContainerFacts {
        id: s.id.clone().unwrap_or_default(),
        name: s
            .names
            .as_ref()
            .and_then(|n| n.first())
            .map(|n| n.trim_start_matches('/').to_string())
            .unwrap_or_default(),
        project: who.project,
        service: who.service,
        number: who.number,
        oneoff: who.oneoff,
        image: s.image.clone().unwrap_or_default(),
        ..Default::default()
    }
}

/// What hal remembers of running containers between runs: the parts of an
/// inspect that stay the same for as long as the container keeps running
/// (start time, restart count, restart policy, last exit). An entry holds for
/// one *run* of a container: its id and the ids of its network endpoints,
/// which the engine makes anew at every start (a restart by policy, `docker
/// restart`, an engine restart without live-restore) and lists with the
/// container. So the list call alone says whether an entry still holds; a
/// container without an endpoint (`network_mode: container:…`) is always
/// inspected. Health is never remembered: the list's status text says it.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct Known {
    /// The engine these containers are on (`-H`, `DOCKER_HOST` or the socket).
    endpoint: String,
    containers: std::collections::BTreeMap<String, KnownRun>,
    #[serde(skip)]
    changed: bool,
}

/// One run of a container, as an inspect during that run described it.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
struct KnownRun {
    /// The container's endpoint ids, sorted and joined: new at every start.
    run: String,
    exit_code: Option<i64>,
    restart_policy: String,
    restart_count: i64,
    started_at: Option<String>,
    finished_at: Option<String>,
    oom_killed: bool,
}

/// The file in the state directory that holds [`Known`].
pub const KNOWN_FILE: &str = "containers.json";

/// The run of a listed running container: its endpoint ids, or `None` when it
/// has none to tell one run from the next.
pub fn run_of(s: &ContainerSummary) -> Option<String> {
    use bollard::models::ContainerSummaryStateEnum as S;
    if s.state != Some(S::RUNNING) {
        return None;
    }
    let nets = s.network_settings.as_ref()?.networks.as_ref()?;
    let mut ids: Vec<&str> = Vec::with_capacity(nets.len());
    for n in nets.values() {
        match n.endpoint_id.as_deref() {
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

impl Known {
    /// What the file in `dir` remembers of `endpoint`'s containers (nothing
    /// when it is missing, unreadable, of another engine or not hal's).
    pub fn load(dir: &std::path::Path, endpoint: &str) -> Known {
        let empty = || Known {
            endpoint: endpoint.to_string(),
            ..Known::default()
        };
        let Ok(text) = std::fs::read(dir.join(KNOWN_FILE)) else {
            return empty();
        };
        match serde_json::from_slice::<Known>(&text) {
            Ok(k) if k.endpoint == endpoint => k,
            _ => empty(),
        }
    }

    /// A running container's facts from what an inspect during this same run
    /// said, when one did; `None` when it must be inspected. Only for a
    /// container up long enough that its status text shows it settled (the
    /// engine's word, not the cache's, says it is still in that run).
    pub fn facts(&self, s: &ContainerSummary, now: Stamp) -> Option<ContainerFacts> {
        let text = s.status.as_deref()?;
        let up = crate::stack::assess::uptime_from_status(text)?;
        if up < crate::stack::assess::RESETTLE * 2 {
            return None;
        }
        let id = s.id.as_deref()?;
        let k = self.containers.get(id)?;
        if Some(&k.run) != run_of(s).as_ref() {
            return None;
        }
        Some(ContainerFacts {
            status: "running".into(),
            health: health_from_status_text(text).map(str::to_string),
            exit_code: k.exit_code,
            restart_policy: k.restart_policy.clone(),
            restart_count: k.restart_count,
            started_at: k.started_at.clone(),
            finished_at: k.finished_at.clone(),
            oom_killed: k.oom_killed,
            error: None,
            observed_at: Some(now),
            ..identity(s)
        })
    }

    /// Remembers what an inspect said of a running container in run `run`.
    pub fn learn(&mut self, f: &ContainerFacts, run: String) {
        if f.status != "running" || f.error.is_some() {
            return;
        }
        let k = KnownRun {
            run,
            exit_code: f.exit_code,
            restart_policy: f.restart_policy.clone(),
            restart_count: f.restart_count,
            started_at: f.started_at.clone(),
            finished_at: f.finished_at.clone(),
            oom_killed: f.oom_killed,
        };
        if self.containers.get(&f.id) != Some(&k) {
            self.containers.insert(f.id.clone(), k);
            self.changed = true;
        }
    }

    /// Forgets every container but those listed (after a list of every
    /// compose container of the engine, so no entry outlives its container).
    pub fn keep_only(&mut self, listed: &std::collections::HashSet<&str>) {
        let before = self.containers.len();
        self.containers.retain(|id, _| listed.contains(id.as_str()));
        self.changed |= self.containers.len() != before;
    }

    /// Writes the file again if anything changed, by an atomic rename; only
    /// into an existing state directory that is not a symlink and that others
    /// cannot write to. A cache: failing to write it loses nothing.
    pub fn save(&self, dir: &std::path::Path) {
        use std::io::Write;
        use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
        if !self.changed {
            return;
        }
        let Ok(meta) = std::fs::symlink_metadata(dir) else {
            return;
        };
        if !meta.is_dir() || meta.permissions().mode() & 0o022 != 0 {
            return;
        }
        let Ok(text) = serde_json::to_vec(self) else {
            return;
        };
        let tmp = dir.join(format!("{KNOWN_FILE}.tmp.{}", std::process::id()));
        let _ = std::fs::remove_file(&tmp);
        let written = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&tmp)
            .and_then(|mut f| f.write_all(&text));
        if written.is_err() || std::fs::rename(&tmp, dir.join(KNOWN_FILE)).is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bollard::models::{
        ContainerSummaryNetworkSettings, ContainerSummaryStateEnum, EndpointSettings,
    };
    use std::collections::HashMap;

    fn summary(state: ContainerSummaryStateEnum, endpoints: &[(&str, &str)]) -> ContainerSummary {
        let networks: HashMap<String, EndpointSettings> = endpoints
            .iter()
            .map(|(net, id)| {
                (
                    net.to_string(),
                    EndpointSettings {
                        endpoint_id: Some(id.to_string()),
                        ..Default::default()
                    },
                )
            })
            .collect();
        ContainerSummary {
            id: Some("c1".into()),
            state: Some(state),
            status: Some("Up 5 minutes".into()),
            network_settings: Some(ContainerSummaryNetworkSettings {
                networks: Some(networks),
            }),
            ..Default::default()
        }
    }

    #[test]
    fn a_run_is_the_endpoint_ids_of_a_running_container() {
        use ContainerSummaryStateEnum as S;
        let s = summary(S::RUNNING, &[("b_net", "e2"), ("a_net", "e1")]);
        assert_eq!(run_of(&s).as_deref(), Some("e1,e2"));
        assert_eq!(run_of(&summary(S::EXITED, &[("n", "e1")])), None);
        assert_eq!(run_of(&summary(S::RUNNING, &[])), None, "no endpoint");
        assert_eq!(run_of(&summary(S::RUNNING, &[("n", "")])), None);
    }

    #[test]
    fn known_facts_hold_for_the_same_run_only() {
        use ContainerSummaryStateEnum as S;
        let now = Stamp::now();
        let learnt = ContainerFacts {
            id: "c1".into(),
            status: "running".into(),
            restart_count: 2,
            restart_policy: "always".into(),
            started_at: Some("2026-01-01T00:00:00.5Z".into()),
            ..Default::default()
        };
        let mut known = Known::default();
        known.learn(&learnt, "e1".into());
        let same = known
            .facts(&summary(S::RUNNING, &[("n", "e1")]), now)
            .unwrap();
        assert_eq!(same.restart_count, 2);
        assert_eq!(same.started_at, learnt.started_at);
        assert!(
            known
                .facts(&summary(S::RUNNING, &[("n", "e9")]), now)
                .is_none()
        );
        let mut young = summary(S::RUNNING, &[("n", "e1")]);
        young.status = Some("Up 3 seconds".into());
        assert!(known.facts(&young, now).is_none(), "young: inspect");
        known.keep_only(&std::collections::HashSet::new());
        assert!(
            known
                .facts(&summary(S::RUNNING, &[("n", "e1")]), now)
                .is_none()
        );
    }
}
