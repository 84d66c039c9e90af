//! Where a stack's log history lives: per container in the engine, or across container generations in the node's journal (the `journald` log driver), and the journal fields that find it.
//!
//! Docker's `journald` driver writes `CONTAINER_NAME`, `CONTAINER_ID_FULL` and,
//! with the `labels=` log-opt, one field per named label
//! (`com.docker.compose.project` → `COM_DOCKER_COMPOSE_PROJECT`). The project and
//! its working directory survive every recreate and never match another
//! project's containers (a same-named project elsewhere has another
//! directory), so they are what a module's history is read by. A container
//! that logs to the journal without those labels is read by its own id: that
//! generation only.

use std::collections::HashMap;
use std::sync::Arc;

use futures_util::stream::StreamExt;

use crate::logs::journal::{self, Entry, Query};
use crate::logs::stream::{Source, Tagged, Window};
use crate::module::Kind;
use crate::module::target::Target;
use crate::stack::engine::Engine;
use crate::stack::labels::{self, Identity};

/// The log driver that keeps lines in the node's journal.
pub(crate) const JOURNALD: &str = "journald";

/// The labels the journald driver must copy into each line for hal to find
/// every generation of a module's containers: the `labels=` log-opt.
pub(crate) const KEEP_LABELS: [&str; 4] = [
    labels::PROJECT,
    labels::SERVICE,
    labels::WORKING_DIR,
    labels::NUMBER,
];

/// The journal field the journald driver names a label by.
pub(crate) fn field_of(label: &str) -> String {
    label
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect::<String>()
        .trim_start_matches('_')
        .to_string()
}

/// The `daemon.json` lines that keep every module's history in the journal.
pub(crate) fn daemon_json_fix() -> String {
    format!(
        "\"log-driver\": \"journald\", \"log-opts\": {{\"labels\": \"{}\"}}",
        KEEP_LABELS.join(",")
    )
}

/// Whether the engine keeps module history across container generations.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Keeping {
    /// Its default driver writes to the journal, with the compose labels (or
    /// hal could not read `daemon.json` to tell).
    Journal,
    /// It writes to the journal, but `daemon.json`'s `labels` lack the compose
    /// project or working directory: hal finds each container's own lines only.
    JournalUnlabelled,
    /// Per container (`json-file`, `local`…): history ends at each recreate.
    PerContainer(String),
}

impl Keeping {
    /// What doctor and adopt say, and the fix (`None` when history is kept).
    pub(crate) fn advice(&self) -> (String, Option<String>) {
        let fix = format!(
            "in /etc/docker/daemon.json set {}, then restart the engine (sudo systemctl restart docker); each container uses it from its next recreate (hal restart MODULE)",
            daemon_json_fix()
        );
        match self {
            Keeping::Journal => (
                "module history is kept: the engine logs to the journal (journald), across restarts, recreates and reboots".into(),
                None,
            ),
            Keeping::JournalUnlabelled => (
                "module history is cut at each recreate: the engine logs to the journal, but without the compose labels hal finds a module's earlier containers by".into(),
                Some(fix),
            ),
            Keeping::PerContainer(d) => (
                format!("module history is not kept: the engine keeps logs per container ({d}), and drops them at each restart, recreate and stop"),
                Some(fix),
            ),
        }
    }
}

/// How the engine keeps its containers' lines by default.
pub(crate) async fn keeping(
    engine: &Engine,
    daemon_json: &std::path::Path,
) -> anyhow::Result<Keeping> {
    let driver = engine.logging_driver().await?.unwrap_or_default();
    if driver != JOURNALD {
        return Ok(Keeping::PerContainer(driver));
    }
    let labels = std::fs::read_to_string(daemon_json)
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .map(|v| {
            v["log-opts"]["labels"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        });
    Ok(match labels {
        Some(l)
            if ![labels::PROJECT, labels::WORKING_DIR]
                .iter()
                .all(|k| l.split(',').any(|x| x.trim() == *k)) =>
        {
            Keeping::JournalUnlabelled
        }
        _ => Keeping::Journal,
    })
}

/// How a logs command reads the stacks asked for.
#[derive(Default)]
pub(crate) struct Plan {
    /// Containers whose lines the engine keeps (id, source, created).
    pub engine: Vec<(String, Source, i64)>,
    /// What to ask the journal; no group when nothing logs there.
    pub journal: Query,
    /// Sources of containers matched by id in the journal.
    by_id: HashMap<String, Source>,
    /// Modules whose every generation the journal query finds (by labels).
    labelled: std::collections::HashSet<String>,
}

impl Plan {
    /// Whether the journal already yields every container of `module` (a
    /// follower then reads no container of it from the engine).
    pub(crate) fn in_journal(&self, module: &str) -> bool {
        self.labelled.contains(module)
    }

    /// The modules whose history is cut at their oldest container, with its
    /// creation time, when `window`'s `--since` reaches before it.
    pub(crate) fn cut(&self, window: Window) -> Vec<(String, i64)> {
        // Only a range asked for (`--since`) can reach past what is kept.
        let Some(since) = window.since else {
            return Vec::new();
        };
        let mut oldest: HashMap<&str, i64> = HashMap::new();
        for (_, s, created) in &self.engine {
            let o = oldest.entry(&s.module).or_insert(*created);
            *o = (*o).min(*created);
        }
        let mut out: Vec<(String, i64)> = oldest
            .into_iter()
            .filter(|(_, at)| since < *at)
            .map(|(m, at)| (m.to_string(), at))
            .collect();
        out.sort();
        out
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
/// inspect per container, and the engine's default driver.
pub(crate) async fn plan(engine: &Engine, targets: &[Target]) -> anyhow::Result<Plan> {
    let first = targets.first().map(|t| t.module.name.as_str());
    let single = first.filter(|f| targets.iter().all(|t| t.module.name == *f));
    let list = engine.compose_containers(single).await?;
    let default = engine.logging_driver().await?.unwrap_or_default();
    let mut plan = Plan {
        journal: Query {
            fields: fields(),
            ..Query::default()
        },
        ..Plan::default()
    };
    // The module's directory, and each directory its containers name.
    let mut dirs: Vec<(Target, String)> = Vec::new();
    let mut in_journal: Vec<&Target> = Vec::new();
    if default == JOURNALD {
        in_journal.extend(targets);
    }
    for c in list {
        let Some(source) = crate::stack::logs::source_of(&c.labels, targets) else {
            continue;
        };
        let Some(t) = targets.iter().find(|t| t.module.name == source.module) else {
            continue;
        };
        let log = engine.inspect(&c.id).await?.and_then(|i| i.log);
        let driver = log.as_ref().map_or(default.as_str(), |l| l.driver.as_str());
        if driver != JOURNALD {
            plan.engine.push((c.id.clone(), source, c.created));
            continue;
        }
        in_journal.push(t);
        let labelled = log.as_ref().is_some_and(|l| {
            [labels::PROJECT, labels::WORKING_DIR]
                .iter()
                .all(|k| l.labels.iter().any(|x| x == k))
        });
        match (labelled, c.labels.get(labels::WORKING_DIR)) {
            (true, Some(dir)) => dirs.push((t.clone(), dir.clone())),
            _ => {
                plan.journal
                    .groups
                    .push(vec![format!("CONTAINER_ID_FULL={}", c.id)]);
                plan.by_id.insert(c.id.clone(), source);
            }
        }
    }
    for t in in_journal {
        if let Kind::Stack { dir, .. } = &t.module.kind {
            dirs.push((t.clone(), dir.display().to_string()));
        }
    }
    dirs.sort_by(|a, b| {
        (&a.0.module.name, &a.0.service, &a.1).cmp(&(&b.0.module.name, &b.0.service, &b.1))
    });
    dirs.dedup_by(|a, b| {
        a.0.module.name == b.0.module.name && a.0.service == b.0.service && a.1 == b.1
    });
    for (t, dir) in dirs {
        plan.labelled.insert(t.module.name.clone());
        let mut g = vec![
            format!("{}={}", field_of(labels::PROJECT), t.module.name),
            format!("{}={dir}", field_of(labels::WORKING_DIR)),
        ];
        if let Some(s) = &t.service {
            g.push(format!("{}={s}", field_of(labels::SERVICE)));
        }
        plan.journal.groups.push(g);
    }
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_as_the_driver_names_them() {
        assert_eq!(field_of(labels::PROJECT), "COM_DOCKER_COMPOSE_PROJECT");
        assert_eq!(
            field_of(labels::WORKING_DIR),
            "COM_DOCKER_COMPOSE_PROJECT_WORKING_DIR"
        );
        assert_eq!(
            field_of(labels::NUMBER),
            "COM_DOCKER_COMPOSE_CONTAINER_NUMBER"
        );
        assert!(daemon_json_fix().contains("com.docker.compose.project.working_dir"));
    }

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
}
