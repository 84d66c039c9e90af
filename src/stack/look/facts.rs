//! A container's facts from what the engine said of it: the list call alone when that is enough, else list and inspect.

use crate::stack::look::assess::ContainerFacts;
use anyhow::Context;
use futures_util::stream::StreamExt;

use crate::docker::engine::{Engine, Inspected, Listed};
use crate::docker::labels::Identity;
use crate::module::run_state::{ContainerRun, Health, RestartPolicy};
use crate::module::status::Detail;
use crate::stack::look::inspects::Inspects;
use crate::state::Store;
use crate::util::timefmt::Stamp;

/// How many inspects run at once when a status needs them.
const INSPECT_CONCURRENCY: usize = 16;

/// The facts of the given containers: the summary plus one inspect each (for
/// restart policy, restart count, exit code, health and start time).
pub(crate) async fn read(
    engine: &Engine,
    listed: Vec<Listed>,
) -> anyhow::Result<Vec<ContainerFacts>> {
    read_with(engine, listed, Detail::Full).await
}

/// The facts of the given containers. With [`Detail::Settled`], a container
/// that has been running for a while is described from its summary alone
/// (health from the list's own health field, start time from "Up …"); only
/// the others are inspected. That keeps a whole-node status near one engine call.
pub(crate) async fn read_with(
    engine: &Engine,
    listed: Vec<Listed>,
    detail: Detail,
) -> anyhow::Result<Vec<ContainerFacts>> {
    read_known(engine, listed, detail, &Inspects::default()).await
}

/// [`read_with`], each container inspected through `inspects` (once, for
/// all the reads of one snapshot).
pub(crate) async fn read_known(
    engine: &Engine,
    listed: Vec<Listed>,
    detail: Detail,
    inspects: &Inspects,
) -> anyhow::Result<Vec<ContainerFacts>> {
    let now = Stamp::now();
    let results: Vec<anyhow::Result<Option<ContainerFacts>>> = futures_util::stream::iter(listed)
        .map(|s| async move {
            if detail == Detail::Settled
                && let Some(f) = settled(&s, now)
            {
                return Ok(Some(f));
            }
            Ok(inspects.of(engine, &s.id).await?.map(|i| of(&s, i)))
        })
        .buffered(INSPECT_CONCURRENCY)
        .collect()
        .await;
    let mut out = Vec::with_capacity(results.len());
    for r in results {
        if let Some(f) = r.context("inspect container")? {
            out.push(f);
        }
    }
    out.sort_by(|a, b| (&a.project, &a.service, a.number).cmp(&(&b.project, &b.service, b.number)));
    Ok(out)
}

/// Facts of every container of `project`.
pub(crate) async fn of_project(
    engine: &Engine,
    project: &str,
) -> anyhow::Result<Vec<ContainerFacts>> {
    let list = engine.compose_containers(Some(project)).await?;
    read(engine, list).await
}

/// A running container's facts from its summary alone, when it has been up
/// long enough that restart count and exact start time cannot change its
/// verdict, and the list states its health in a field of its own (API 1.52
/// and later); `None` when it must be inspected. The status text's
/// "(unhealthy)" is display text, never read: an engine whose list has no
/// health field (Docker before 1.52, Podman) has its containers inspected,
/// or described from what an inspect of the same run said ([`InspectCache`]).
pub(crate) fn settled(s: &Listed, now: Stamp) -> Option<ContainerFacts> {
    if !s.is_running() {
        return None;
    }
    let health = s.health?;
    let text = s.status_text.as_deref()?;
    let up = crate::stack::look::assess::uptime_from_status(text)?;
    if up < crate::stack::look::assess::RESETTLE * 2 {
        return None;
    }
    // The text's uptime is whole seconds (or coarser): so is the start read from it.
    let started = now
        .whole_second()
        .minus(std::time::Duration::from_secs(up.as_secs()));
    Some(ContainerFacts {
        run: Some(ContainerRun::Running),
        health,
        started_at: Some(started),
        observed_at: Some(now),
        ..identity(s)
    })
}

/// The facts of one container: its summary and its inspect merged (the
/// engine's words were read into hal's types where its answers are decoded).
pub(crate) fn of(s: &Listed, i: Inspected) -> ContainerFacts {
    ContainerFacts {
        run: i.state.or(s.state),
        // The inspect's own field, else the list's: never the status text.
        health: i.health.or(s.health).flatten(),
        exit_code: i.exit_code,
        restart: i.restart,
        restart_count: i.restart_count.unwrap_or(0),
        started_at: i.started_at,
        finished_at: i.finished_at,
        oom_killed: i.oom_killed,
        error: i.error,
        observed_at: Some(Stamp::now()),
        ..identity(s)
    }
}

/// What the list call alone says of a container: who it is, never how it is.
fn identity(s: &Listed) -> ContainerFacts {
    let who = s.identity.clone().unwrap_or(Identity {
        project: String::new(),
        service: String::new(),
        number: 1,
        oneoff: false,
    });
    ContainerFacts {
        id: s.id.clone(),
        name: s.name.clone(),
        project: who.project,
        service: who.service,
        number: who.number,
        oneoff: who.oneoff,
        image: s.image.clone(),
        netns_of: s.netns_of.clone(),
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
/// inspected. Health is never remembered, only whether the container has a
/// healthcheck: one that has is described with the list's own health field
/// where the engine has one, and inspected again where it has not.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
pub(crate) struct InspectCache {
    /// The engine these containers are on (`-H`, `DOCKER_HOST` or the socket).
    endpoint: String,
    containers: std::collections::BTreeMap<String, KnownRun>,
    #[serde(skip)]
    changed: bool,
}

/// One run of a container, as an inspect during that run described it.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(from = "OnDisk", into = "OnDisk")]
struct KnownRun {
    /// The container's endpoint ids, sorted and joined: new at every start.
    run: String,
    exit_code: Option<i64>,
    restart: RestartPolicy,
    restart_count: i64,
    started_at: Option<Stamp>,
    finished_at: Option<Stamp>,
    oom_killed: bool,
    /// Whether it has a healthcheck (`None`: not known, from an older hal).
    healthcheck: Option<bool>,
}

impl KnownRun {
    /// A listed container's facts from this remembered run: no inspect.
    fn facts(
        &self,
        s: &Listed,
        run: ContainerRun,
        health: Option<Health>,
        now: Stamp,
    ) -> ContainerFacts {
        ContainerFacts {
            run: Some(run),
            health,
            exit_code: self.exit_code,
            restart: self.restart,
            restart_count: self.restart_count,
            started_at: self.started_at,
            finished_at: self.finished_at,
            oom_killed: self.oom_killed,
            error: None,
            observed_at: Some(now),
            ..identity(s)
        }
    }
}

/// A [`KnownRun`] as `containers.json` words it: the engine's policy name
/// and RFC 3339 times, as hal has always written them (a file an older hal
/// wrote still reads; one that does not is ignored whole).
#[derive(Clone, serde::Serialize, serde::Deserialize)]
struct OnDisk {
    run: String,
    exit_code: Option<i64>,
    restart_policy: String,
    /// `on-failure`'s retry limit (absent: none, as an older hal wrote it).
    #[serde(default, skip_serializing_if = "is_zero")]
    max_retries: i64,
    restart_count: i64,
    /// As the engine printed it (an older hal wrote its zero time too).
    #[serde(default, with = "crate::util::stored::rfc3339_trimmed::option")]
    started_at: Option<Stamp>,
    #[serde(default, with = "crate::util::stored::rfc3339_trimmed::option")]
    finished_at: Option<Stamp>,
    oom_killed: bool,
    #[serde(default)]
    healthcheck: Option<bool>,
}

fn is_zero(n: &i64) -> bool {
    *n == 0
}

impl From<OnDisk> for KnownRun {
    fn from(d: OnDisk) -> KnownRun {
        KnownRun {
            run: d.run,
            exit_code: d.exit_code,
            restart: RestartPolicy::from_word(&d.restart_policy, d.max_retries),
            restart_count: d.restart_count,
            started_at: d.started_at,
            finished_at: d.finished_at,
            oom_killed: d.oom_killed,
            healthcheck: d.healthcheck,
        }
    }
}

impl From<KnownRun> for OnDisk {
    fn from(k: KnownRun) -> OnDisk {
        OnDisk {
            run: k.run,
            exit_code: k.exit_code,
            restart_policy: k.restart.as_str().to_string(),
            max_retries: k.restart.max_retries(),
            restart_count: k.restart_count,
            started_at: k.started_at,
            finished_at: k.finished_at,
            oom_killed: k.oom_killed,
            healthcheck: k.healthcheck,
        }
    }
}

/// The file in the state directory that holds [`InspectCache`].
pub(crate) const CACHE_FILE: &str = "containers.json";

impl InspectCache {
    /// What the state's file remembers of `endpoint`'s containers (nothing
    /// when it is missing, unreadable, of another engine or not hal's).
    pub(crate) fn load(store: &Store, endpoint: &str) -> InspectCache {
        match store.read_cache::<InspectCache>(CACHE_FILE) {
            Some(k) if k.endpoint == endpoint => k,
            _ => InspectCache {
                endpoint: endpoint.to_string(),
                ..InspectCache::default()
            },
        }
    }

    /// A running container's facts from what an inspect during this same run
    /// said, when one did; `None` when it must be inspected. Only for a
    /// container up long enough that its status text shows it settled (the
    /// engine's word, not the cache's, says it is still in that run).
    pub(crate) fn facts(&self, s: &Listed, now: Stamp) -> Option<ContainerFacts> {
        let text = s.status_text.as_deref()?;
        let up = crate::stack::look::assess::uptime_from_status(text)?;
        if up < crate::stack::look::assess::RESETTLE * 2 {
            return None;
        }
        let k = self.containers.get(&s.id)?;
        if Some(&k.run) != s.run.as_ref() {
            return None;
        }
        // A healthcheck's result changes within a run: the list's own field
        // says it, or an inspect must.
        let health = match (k.healthcheck, s.health) {
            (_, Some(h)) => h,
            (Some(false), None) => None,
            _ => return None,
        };
        Some(k.facts(s, ContainerRun::Running, health, now))
    }

    /// A one-shot job's facts, for a status that needs no exact figures
    /// ([`Detail::Settled`]): a container that exited 0, described by what an
    /// inspect said after it exited, while the list's text (`Exited (0) 3
    /// hours ago`) agrees with that exit code and finish time. A later run
    /// that also exited 0 within the same step of that text (a second, a
    /// minute, an hour…) passes for the remembered one: times as coarse as
    /// [`settled`]'s start times. Any other exit is inspected.
    pub(crate) fn exited(&self, s: &Listed, now: Stamp) -> Option<ContainerFacts> {
        if s.state != Some(ContainerRun::Exited) {
            return None;
        }
        let (code, age) =
            crate::stack::look::assess::exited_from_status(s.status_text.as_deref()?)?;
        let k = self.containers.get(&s.id)?;
        if code != 0 || k.exit_code != Some(0) || !k.run.is_empty() {
            return None;
        }
        let ago = now.secs() - k.finished_at?.secs();
        if ![ago - 1, ago, ago + 1]
            .into_iter()
            .any(|a| crate::stack::look::assess::engine_age(a) == age)
        {
            return None;
        }
        Some(k.facts(s, ContainerRun::Exited, None, now))
    }

    /// Remembers what an inspect said of a running container in run `run`,
    /// or of an exited one (`run` empty: it has none) for [`InspectCache::exited`].
    pub(crate) fn learn(&mut self, f: &ContainerFacts, run: String) {
        let exited = f.run == Some(ContainerRun::Exited) && run.is_empty();
        if !(f.run == Some(ContainerRun::Running) || exited) || f.error.is_some() {
            return;
        }
        let k = KnownRun {
            run,
            exit_code: f.exit_code,
            restart: f.restart,
            restart_count: f.restart_count,
            started_at: f.started_at,
            finished_at: f.finished_at,
            oom_killed: f.oom_killed,
            healthcheck: Some(f.health.is_some()),
        };
        if self.containers.get(&f.id) != Some(&k) {
            self.containers.insert(f.id.clone(), k);
            self.changed = true;
        }
    }

    /// Forgets every container but those listed (after a list of every
    /// compose container of the engine, so no entry outlives its container).
    pub(crate) fn keep_only(&mut self, listed: &std::collections::HashSet<&str>) {
        let before = self.containers.len();
        self.containers.retain(|id, _| listed.contains(id.as_str()));
        self.changed |= self.containers.len() != before;
    }

    /// Writes the file again if anything changed (`Store::keep_cache`: only
    /// into a private state directory, unsynced). A cache: failing to write
    /// it loses nothing.
    pub(crate) fn save(&self, store: &Store) {
        if self.changed {
            let _ = store.keep_cache(CACHE_FILE, self);
        }
    }
}

#[cfg(test)]
mod tests;
