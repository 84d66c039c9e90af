//! How `hal logs` reads the stacks asked for: which containers' lines the engine keeps, and one journal query for the rest (by the compose labels, and by the id of every generation in the module's ledger).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use futures_util::stream::StreamExt;

use crate::docker::engine::Engine;
use crate::docker::engine::JOURNALD;
use crate::docker::labels::{self, Identity};
use crate::logs::journal::{self, Entry, Query};
use crate::logs::stream::{Source, Tagged, Window};
use crate::module::target::Target;
use crate::stack::logs::history::{KEEP_LABELS, field_of, labelled};
use crate::stack::look::seen;
use crate::state::Store;
use crate::util::timefmt::Stamp;

/// How a logs command reads the stacks asked for.
#[derive(Default)]
pub(crate) struct LogPlan {
    /// Containers whose lines the engine keeps (id, source, created).
    pub engine: Vec<(String, Source, Stamp)>,
    /// What to ask the journal; no group when nothing logs there.
    pub journal: Query,
    /// Sources of containers matched by id in the journal.
    by_id: HashMap<String, Source>,
    /// Modules whose every generation the journal query finds (by labels).
    labelled: HashSet<String>,
    /// Modules read in the journal by container id, with the oldest of
    /// those containers' creation times: hal never saw one older.
    by_id_oldest: HashMap<String, Stamp>,
}

impl LogPlan {
    /// Whether the journal already yields every container of `module` (a
    /// follower then reads no container of it from the engine).
    pub(crate) fn in_journal(&self, module: &str) -> bool {
        self.labelled.contains(module)
    }

    /// Whether the journal query reads this container by its id.
    pub(crate) fn reads_by_id(&self, id: &str) -> bool {
        self.by_id.contains_key(id)
    }

    /// The modules whose history is cut at their oldest container, with its
    /// creation time, when `window`'s `--since` reaches before it.
    pub(crate) fn cut(&self, window: Window) -> Vec<(String, Stamp)> {
        let mut oldest: HashMap<&str, Stamp> = HashMap::new();
        for (_, s, created) in &self.engine {
            let o = oldest.entry(&s.module).or_insert(*created);
            *o = (*o).min(*created);
        }
        before(oldest, window)
    }

    /// The modules read in the journal by the ids hal saw, with the creation
    /// of the oldest it saw, when `--since` reaches before it: a container
    /// hal never saw is not found.
    pub(crate) fn unseen_cut(&self, window: Window) -> Vec<(String, Stamp)> {
        let oldest = self
            .by_id_oldest
            .iter()
            .filter(|(m, _)| !self.labelled.contains(*m))
            .map(|(m, at)| (m.as_str(), *at))
            .collect();
        before(oldest, window)
    }

    /// The journal's lines for this plan, each with its source.
    pub(crate) fn journal_lines(&self, window: Window, follow: bool) -> Tagged {
        let q = Query {
            window,
            follow,
            ..self.journal.clone()
        };
        let by_id = self.by_id.clone();
        let mut known: HashMap<String, Arc<Source>> = HashMap::new();
        journal::read(q)
            .flat_map(move |item| {
                let out: Vec<anyhow::Result<crate::logs::stream::FromLine>> = match item {
                    Err(e) => vec![Err(e)],
                    Ok(entry) => match source_of_entry(&entry, &by_id) {
                        None => Vec::new(),
                        Some(s) => {
                            let s = known
                                .entry(s.label.clone())
                                .or_insert_with(|| Arc::new(s))
                                .clone();
                            entry
                                .lines
                                .into_iter()
                                .map(|l| Ok((s.clone(), l)))
                                .collect()
                        }
                    },
                };
                futures_util::stream::iter(out)
            })
            .boxed()
    }

    /// Reads a container in the journal by its id.
    fn by_id(&mut self, id: &str, source: Source, created: Stamp) {
        let o = self
            .by_id_oldest
            .entry(source.module.clone())
            .or_insert(created);
        *o = (*o).min(created);
        if self.by_id.insert(id.to_string(), source).is_none() {
            self.journal
                .groups
                .push(vec![format!("CONTAINER_ID_FULL={id}")]);
        }
    }
}

/// Only a range asked for (`--since`) can reach past what is kept.
fn before(oldest: HashMap<&str, Stamp>, window: Window) -> Vec<(String, Stamp)> {
    let Some(since) = window.since else {
        return Vec::new();
    };
    let mut out: Vec<(String, Stamp)> = oldest
        .into_iter()
        .filter(|(_, at)| since < *at)
        .map(|(m, at)| (m.to_string(), at))
        .collect();
    out.sort();
    out
}

/// Which module and service wrote a journal entry.
fn source_of_entry(e: &Entry, by_id: &HashMap<String, Source>) -> Option<Source> {
    if let Some(s) = e
        .fields
        .get("CONTAINER_ID_FULL")
        .and_then(|id| by_id.get(id))
    {
        return Some(s.clone());
    }
    let mut labels = HashMap::new();
    for l in KEEP_LABELS {
        if let Some(v) = e.fields.get(&field_of(l)) {
            labels.insert(l.to_string(), v.clone());
        }
    }
    let who = Identity::of(&labels)?;
    let name = who.replica_name();
    Some(Source {
        label: format!("{}/{name}", who.project),
        module: who.project,
        name,
    })
}

/// The journal fields every entry is read with.
fn fields() -> Vec<String> {
    let mut f: Vec<String> = KEEP_LABELS.iter().map(|l| field_of(l)).collect();
    f.push("CONTAINER_ID_FULL".into());
    f
}

/// Where each of the targets' containers keeps its lines: one list call, an
/// inspect per container, the engine's default driver, and the ledger of
/// each module (what it learns of the drivers goes back into it).
pub(crate) async fn plan(
    engine: &Engine,
    store: &Store,
    targets: &[Target],
) -> anyhow::Result<LogPlan> {
    let first = targets.first().map(|t| t.module.name.as_str());
    let single = first.filter(|f| targets.iter().all(|t| t.module.name == *f));
    let list = engine.compose_containers(single).await?;
    let default = engine.logging_driver().await?.unwrap_or_default();
    let mut plan = LogPlan {
        journal: Query {
            fields: fields(),
            ..Query::default()
        },
        ..LogPlan::default()
    };
    // The module's directory, and each directory its containers name.
    let mut dirs: Vec<(Target, String)> = Vec::new();
    let mut in_journal: Vec<&Target> = Vec::new();
    if default == JOURNALD {
        in_journal.extend(targets);
    }
    let mut learned = Vec::new();
    let mut listed = HashSet::new();
    for c in list {
        let Some(source) = crate::stack::logs::source_of(&c.labels, targets) else {
            continue;
        };
        let Some(t) = targets.iter().find(|t| t.module.name == source.module) else {
            continue;
        };
        listed.insert(c.id.clone());
        let log = engine.inspect(&c.id).await?.and_then(|i| i.log);
        let driver = log.as_ref().map_or(default.as_str(), |l| l.driver.as_str());
        learned.extend(seen::of_listed(&c, Some(driver == JOURNALD)));
        if driver != JOURNALD {
            plan.engine.push((c.id.clone(), source, c.created));
            continue;
        }
        in_journal.push(t);
        let labelled = log.as_ref().is_some_and(|l| labelled(&l.labels));
        match (labelled, c.labels.get(labels::WORKING_DIR)) {
            (true, Some(dir)) => dirs.push((t.clone(), dir.clone())),
            _ => plan.by_id(&c.id, source, c.created),
        }
    }
    for t in in_journal {
        if let Some(dir) = t.module.stack_dir() {
            dirs.push((t.clone(), dir.display().to_string()));
        }
    }
    by_labels(&mut plan, dirs);
    // Best effort: a reader who cannot write the state still reads the logs.
    let _ = store.saw(seen::seen_by_module(learned)).await;
    for t in targets {
        by_ledger(&mut plan, store, t, &listed, default == JOURNALD);
    }
    Ok(plan)
}

/// A group per module (or service) and directory: every generation that
/// wrote the compose labels.
fn by_labels(plan: &mut LogPlan, mut dirs: Vec<(Target, String)>) {
    dirs.sort_by(|a, b| {
        (&a.0.module.name, &a.0.service, &a.1).cmp(&(&b.0.module.name, &b.0.service, &b.1))
    });
    dirs.dedup_by(|a, b| {
        a.0.module.name == b.0.module.name && a.0.service == b.0.service && a.1 == b.1
    });
    for (t, dir) in dirs {
        // A module with a container that writes no labels is not all found by them.
        if !plan.by_id_oldest.contains_key(&t.module.name) {
            plan.labelled.insert(t.module.name.clone());
        }
        let mut g = vec![
            format!("{}={}", field_of(labels::PROJECT), t.module.name),
            format!("{}={dir}", field_of(labels::WORKING_DIR)),
        ];
        if let Some(s) = &t.service {
            g.push(format!("{}={s}", field_of(labels::SERVICE)));
        }
        plan.journal.groups.push(g);
    }
}

/// Every earlier generation of the target that hal saw, read by its id, when
/// the module logs to the journal (a container of it does, or the engine's
/// default driver, or the ledger says one did). One the ledger knows logged
/// elsewhere is not asked for.
fn by_ledger(
    plan: &mut LogPlan,
    store: &Store,
    t: &Target,
    listed: &HashSet<String>,
    default: bool,
) {
    let m = &t.module.name;
    let ledger = store.ledger(m);
    let journal = default
        || plan.labelled.contains(m)
        || plan.by_id_oldest.contains_key(m)
        || ledger.containers.iter().any(|g| g.journal == Some(true));
    if !journal {
        return;
    }
    for g in ledger.containers {
        let other = t.service.as_ref().is_some_and(|s| *s != g.service);
        if other || g.journal == Some(false) || listed.contains(&g.id) {
            continue;
        }
        let name = g.replica_name();
        let source = Source {
            label: format!("{m}/{name}"),
            module: m.clone(),
            name,
        };
        plan.by_id(&g.id, source, g.created);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_name_their_service() {
        let mut fields = HashMap::new();
        fields.insert("COM_DOCKER_COMPOSE_PROJECT".to_string(), "web".to_string());
        fields.insert("COM_DOCKER_COMPOSE_SERVICE".to_string(), "db".to_string());
        fields.insert(
            "COM_DOCKER_COMPOSE_CONTAINER_NUMBER".to_string(),
            "2".to_string(),
        );
        let e = Entry {
            fields,
            lines: Vec::new(),
        };
        let s = source_of_entry(&e, &HashMap::new()).unwrap();
        assert_eq!(s.label, "web/db-2");
        assert!(
            source_of_entry(
                &Entry {
                    fields: HashMap::new(),
                    lines: Vec::new()
                },
                &HashMap::new()
            )
            .is_none()
        );
    }

    #[test]
    fn a_container_read_by_id_is_asked_for_once_and_cuts_where_hal_began() {
        let mut p = LogPlan::default();
        let src = |m: &str| Source {
            label: format!("{m}/app"),
            module: m.into(),
            name: "app".into(),
        };
        let t = Stamp::from_secs;
        p.by_id("a", src("web"), t(200));
        p.by_id("a", src("web"), t(200));
        p.by_id("b", src("web"), t(100));
        assert_eq!(p.journal.groups.len(), 2);
        assert!(p.reads_by_id("b"));
        let w = |since| Window {
            since: Some(t(since)),
            ..Window::default()
        };
        assert_eq!(p.unseen_cut(w(50)), [("web".to_string(), t(100))]);
        assert!(p.unseen_cut(w(150)).is_empty());
        p.labelled.insert("web".into());
        assert!(
            p.unseen_cut(w(50)).is_empty(),
            "labels find every generation"
        );
    }
}
