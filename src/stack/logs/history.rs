//! Where a stack's log history lives: per container in the engine, or across container generations in the node's journal (the `journald` log driver), and the journal fields that find it.
//!
//! Docker's `journald` driver writes `CONTAINER_NAME`, `CONTAINER_ID_FULL` and,
//! with the `labels=` log-opt, one field per named label
//! (`com.docker.compose.project` → `COM_DOCKER_COMPOSE_PROJECT`). The project and
//! its working directory survive every recreate and never match another
//! project's containers (a same-named project elsewhere has another
//! directory), so they are what a module's history is read by. A container
//! that logs to the journal without those labels (and every container on
//! Podman, whose driver writes none) is read by its id: the current ones, and
//! every earlier generation hal saw (`state::ledger`).

use crate::docker::engine::{Engine, EngineKind, JOURNALD};
use crate::docker::labels;

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
        "\"log-driver\": \"{JOURNALD}\", \"log-opts\": {{\"labels\": \"{}\"}}",
        KEEP_LABELS.join(",")
    )
}

/// The `containers.conf` line that keeps Podman's containers' lines in the journal.
pub(crate) const CONTAINERS_CONF_FIX: &str = "log_driver = \"journald\"";

/// Whether the engine keeps module history across container generations.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Keeping {
    /// Its default driver writes to the journal, with the compose labels (or
    /// hal could not read `daemon.json` to tell).
    Journal,
    /// Docker writes to the journal, but `daemon.json`'s `labels` lack the
    /// compose project or working directory: hal finds the containers it saw.
    JournalUnlabelled,
    /// Podman writes to the journal, whose driver writes no labels: hal finds
    /// the containers it saw, by their ids.
    JournalById,
    /// Per container (`json-file`, `local`, Podman's `k8s-file`…): history
    /// ends at each recreate. `podman`: the fix is Podman's.
    PerContainer { driver: String, podman: bool },
}

impl Keeping {
    /// What doctor and adopt say, and the fix (`None` when history is kept).
    pub(crate) fn advice(&self) -> (String, Option<String>) {
        let docker_fix = format!(
            "in /etc/docker/daemon.json set {}, then restart the engine (sudo systemctl restart docker); each container uses it from its next recreate (hal restart MODULE)",
            daemon_json_fix()
        );
        match self {
            Keeping::Journal => (
                "module history is kept: the engine logs to the journal (journald), across restarts, recreates and reboots".into(),
                None,
            ),
            Keeping::JournalUnlabelled => (
                "module history reaches only the containers hal saw: the engine logs to the journal, but without the compose labels hal finds a module's earlier containers by".into(),
                Some(docker_fix),
            ),
            Keeping::JournalById => (
                "module history is kept for the containers hal saw: Podman logs to the journal (journald), whose lines name no compose labels, so hal reads each container it saw by its id".into(),
                None,
            ),
            Keeping::PerContainer { driver, podman } => {
                let what = if driver.is_empty() {
                    "module history may not be kept: the engine did not say which log driver it uses".to_string()
                } else {
                    format!("module history is not kept: the engine keeps logs per container ({driver}), and drops them at each restart, recreate and stop")
                };
                let fix = if *podman {
                    format!("in Podman's containers.conf (/etc/containers/containers.conf or a file in /etc/containers/containers.conf.d/; ~/.config/containers/containers.conf for rootless Podman) set {CONTAINERS_CONF_FIX} under [containers], then restart the Podman service; each container uses it from its next recreate (hal restart MODULE)")
                } else {
                    docker_fix
                };
                (what, Some(fix))
            }
        }
    }
}

/// What doctor says of services that log to the journal without the compose
/// labels (`module/service`), and the fix.
pub(crate) fn unlabelled_advice(services: &[String]) -> (String, String) {
    (
        format!(
            "{} {} to the journal without the compose labels: {} history reaches only the containers hal saw (it reads each by its id)",
            services.join(", "),
            if services.len() == 1 { "logs" } else { "log" },
            if services.len() == 1 { "its" } else { "their" },
        ),
        format!(
            "in each one's compose file add the labels option: logging: {{driver: journald, options: {{labels: \"{}\"}}}}, then hal restart MODULE",
            KEEP_LABELS.join(",")
        ),
    )
}

/// Whether a container's log config (its `labels` option's names) copies
/// the labels hal reads history by.
pub(crate) fn labelled(names: &[String]) -> bool {
    [labels::PROJECT, labels::WORKING_DIR]
        .iter()
        .all(|k| names.iter().any(|x| x == k))
}

/// The services of `modules` with a container that logs to the journal
/// without the compose labels (`module/service`, sorted): one list call and
/// an inspect per container. None on Podman, whose driver writes no labels.
pub(crate) async fn unlabelled(engine: &Engine, modules: &[&str]) -> anyhow::Result<Vec<String>> {
    let mut out = std::collections::BTreeSet::new();
    if engine.kind() == EngineKind::Podman || modules.is_empty() {
        return Ok(Vec::new());
    }
    let single = (modules.len() == 1).then(|| modules[0]);
    for c in engine.compose_containers(single).await? {
        let Some(who) = c
            .identity
            .filter(|w| !w.oneoff && modules.contains(&w.project.as_str()))
        else {
            continue;
        };
        let log = engine.inspect(&c.id).await?.and_then(|i| i.log);
        if log.is_some_and(|l| l.to_journal() && !labelled(&l.labels)) {
            out.insert(format!("{}/{}", who.project, who.service));
        }
    }
    Ok(out.into_iter().collect())
}

/// How the engine keeps its containers' lines by default.
pub(crate) async fn keeping(
    engine: &Engine,
    daemon_json: &std::path::Path,
) -> anyhow::Result<Keeping> {
    let driver = engine.logging_driver().await?.unwrap_or_default();
    let podman = engine.kind() == EngineKind::Podman;
    if driver != JOURNALD {
        return Ok(Keeping::PerContainer { driver, podman });
    }
    if podman {
        return Ok(Keeping::JournalById);
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
    fn podmans_advice_names_its_driver_and_its_own_fix() {
        let k = Keeping::PerContainer {
            driver: "k8s-file".into(),
            podman: true,
        };
        let (detail, fix) = k.advice();
        assert!(detail.contains("(k8s-file)"), "{detail}");
        let fix = fix.unwrap();
        assert!(fix.contains("log_driver = \"journald\""), "{fix}");
        assert!(!fix.contains("daemon.json"), "{fix}");
        let unnamed = Keeping::PerContainer {
            driver: String::new(),
            podman: false,
        };
        assert!(!unnamed.advice().0.contains("()"));
        assert_eq!(Keeping::JournalById.advice().1, None);
    }

    #[test]
    fn services_without_labels_are_named_with_the_option_that_fixes_them() {
        let (one, fix) = unlabelled_advice(&["web/app".to_string()]);
        assert!(one.starts_with("web/app logs to the journal"), "{one}");
        assert!(fix.contains(&KEEP_LABELS.join(",")), "{fix}");
        let (two, _) = unlabelled_advice(&["a/x".to_string(), "b/y".to_string()]);
        assert!(two.starts_with("a/x, b/y log to"), "{two}");
    }
}
