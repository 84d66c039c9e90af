//! The stacks of a whole node read at once: one container-list call for every project, inspects only where the list and the cache cannot say.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use anyhow::Context;

use crate::docker::engine::{Engine, Listed};
use crate::module::run_state::ContainerRun;
use crate::module::status::Detail;
use crate::stack::look::assess::ContainerFacts;
use crate::stack::look::facts::{self, InspectCache};
use crate::stack::look::inspects::Inspects;
use crate::state::Store;
use crate::util::timefmt::Stamp;

/// The containers of a node's projects, and the directories compose ran each from.
#[derive(Debug, Default)]
pub(crate) struct NodeFacts {
    pub containers: BTreeMap<String, Vec<ContainerFacts>>,
    /// Per project, the `working_dir` its containers name.
    pub dirs: BTreeMap<String, BTreeSet<String>>,
}

/// The facts of the given projects' containers, grouped by project: one list
/// call, then, for each container, what hal remembers of its current run
/// ([`InspectCache`], in the state directory) or else an inspect. With
/// [`Detail::Settled`] a settled running container that hal has no memory of
/// is described from the list alone. What the inspects teach is remembered.
pub(crate) async fn node_facts(
    engine: &Engine,
    store: &Store,
    projects: &[&str],
    detail: Detail,
) -> anyhow::Result<NodeFacts> {
    let list = engine
        .compose_containers((projects.len() == 1).then(|| projects[0]))
        .await?;
    facts_of_listed(engine, store, projects, detail, list, &Inspects::default()).await
}

/// [`node_facts`] of containers already listed (a start's one list), each
/// inspected through `inspects` (what the list's snapshot was told already).
pub(crate) async fn facts_of_listed(
    engine: &Engine,
    store: &Store,
    projects: &[&str],
    detail: Detail,
    list: Vec<Listed>,
    inspects: &Inspects,
) -> anyhow::Result<NodeFacts> {
    let node_wide = projects.len() != 1;
    // The ledger learns from this listing (no call of its own); a status
    // that cannot write it still answers.
    let _ = crate::stack::look::seen::listed(store, &list, |p| projects.contains(&p)).await;
    let now = Stamp::now();
    let mut cache = InspectCache::load(store, &engine.endpoint);
    if node_wide {
        cache.keep_only(&list.iter().map(|s| s.id.as_str()).collect());
    }
    let mut facts = Vec::with_capacity(list.len());
    let mut ask = Vec::new();
    let mut runs: HashMap<String, String> = HashMap::new();
    let dirs = crate::stack::look::identity::dirs_by_project(list.iter().filter(|s| {
        s.identity
            .as_ref()
            .is_some_and(|w| projects.contains(&w.project.as_str()))
    }));
    for s in list {
        if !s
            .identity
            .as_ref()
            .is_some_and(|who| projects.contains(&who.project.as_str()))
        {
            continue;
        }
        let settled = detail == Detail::Settled;
        if let Some(f) = cache.facts(&s, now).or_else(|| {
            settled
                .then(|| facts::settled(&s, now).or_else(|| cache.exited(&s, now)))
                .flatten()
        }) {
            facts.push(f);
            continue;
        }
        if let Some(run) = s.run.clone() {
            runs.insert(s.id.clone(), run);
        } else if s.state == Some(ContainerRun::Exited) {
            // Remembered for the next status (an exited container has no run).
            runs.insert(s.id.clone(), String::new());
        }
        ask.push(s);
    }
    if !ask.is_empty() {
        let inspected = facts::read_known(engine, ask, Detail::Full, inspects)
            .await
            .context("read container state")?;
        for f in inspected {
            if let Some(run) = runs.remove(&f.id) {
                cache.learn(&f, run);
            }
            facts.push(f);
        }
    }
    cache.save(store);
    crate::stack::look::netns::mark_stale(engine, &mut facts).await;
    let mut by_project: BTreeMap<String, Vec<ContainerFacts>> = BTreeMap::new();
    for f in facts {
        by_project.entry(f.project.clone()).or_default().push(f);
    }
    for list in by_project.values_mut() {
        list.sort_by(|a, b| (&a.service, a.number).cmp(&(&b.service, b.number)));
    }
    Ok(NodeFacts {
        containers: by_project,
        dirs,
    })
}

/// The compose projects with a running container (one list call).
pub(crate) async fn running_projects(engine: &Engine) -> anyhow::Result<BTreeSet<String>> {
    let list = engine.compose_containers(None).await?;
    Ok(list
        .into_iter()
        .filter(Listed::is_running)
        .filter_map(|c| c.identity.map(|who| who.project))
        .collect())
}
