//! Which compose project is which module: a project is the module only when compose ran it from the module's directory (its `working_dir` label), so hal never takes another directory's project of the same name for its own, and finds the containers of a module whose directory is gone.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::docker::engine::{Engine, Listed};
use crate::docker::labels;
use crate::error::HalError;
use crate::module::Module;
use crate::stack::env::Stacks;
use crate::stack::look::inspects::Inspects;

/// Whether compose's `working_dir` is the module's directory `dir` (or a
/// folder in it: compose takes the first `COMPOSE_FILE`'s folder), the
/// directory's links resolved.
pub(crate) fn from_dir(working_dir: &str, dir: &Path) -> bool {
    let wd = Path::new(working_dir);
    if wd.starts_with(dir) {
        return true;
    }
    let Ok(real) = std::fs::canonicalize(dir) else {
        return false;
    };
    wd.starts_with(&real) || std::fs::canonicalize(wd).is_ok_and(|w| w.starts_with(&real))
}

/// The other directory a project named like the module runs from, when
/// one of the directories its containers name is not the module's.
pub(crate) fn other_dir<'a>(dirs: impl IntoIterator<Item = &'a str>, dir: &Path) -> Option<String> {
    dirs.into_iter()
        .find(|d| !from_dir(d, dir))
        .map(str::to_string)
}

/// The directories a project's containers were run from.
fn dirs_of<'a>(containers: impl IntoIterator<Item = &'a Listed>) -> BTreeSet<String> {
    containers
        .into_iter()
        .filter_map(|c| labels::working_dir(&c.labels))
        .map(str::to_string)
        .collect()
}

/// The directories each project's containers were run from, by project
/// (containers compose did not label are left out): one grouping for
/// `status`, doctor's `identity` check and the start's refusal.
pub(crate) fn dirs_by_project<'a>(
    containers: impl IntoIterator<Item = &'a Listed>,
) -> BTreeMap<String, BTreeSet<String>> {
    let mut by_project: BTreeMap<String, Vec<&Listed>> = BTreeMap::new();
    for c in containers {
        if let Some(who) = &c.identity {
            by_project.entry(who.project.clone()).or_default().push(c);
        }
    }
    by_project
        .into_iter()
        .map(|(project, containers)| (project, dirs_of(containers)))
        .collect()
}

/// A status reason for a project of the module's name from `other`.
pub(crate) fn conflict_reason(other: &str) -> String {
    format!(
        "a project of this name runs from {other}: it is not this module, and hal leaves it alone"
    )
}

/// A status reason for a module whose directory is gone while containers run.
pub(crate) fn orphan_reason(name: &str, dirs: &BTreeSet<String>, dir: &Path) -> String {
    let from = dirs
        .iter()
        .next()
        .cloned()
        .unwrap_or_else(|| dir.display().to_string());
    format!(
        "its directory {from} is gone (renamed or removed); `hal stop {name}` removes its containers"
    )
}

/// The project's containers, or [`HalError::Conflict`] when a project of
/// the module's name runs from another directory: refused before anything
/// is touched.
pub(crate) async fn own_containers(
    engine: &Engine,
    name: &str,
    dir: &Path,
) -> anyhow::Result<Vec<Listed>> {
    let list = engine.compose_containers(Some(name)).await?;
    refuse_other(name, dir, &list)?;
    Ok(list)
}

/// [`HalError::Conflict`] when the listed containers of a project of the
/// module's name run from another directory than `dir`.
pub(crate) fn refuse_other(name: &str, dir: &Path, list: &[Listed]) -> Result<(), HalError> {
    let dirs = dirs_of(list);
    match other_dir(dirs.iter().map(String::as_str), dir) {
        Some(other) => Err(HalError::Conflict {
            module: name.to_string(),
            dir: dir.display().to_string(),
            other,
        }),
        None => Ok(()),
    }
}

/// A project's containers as listed at one moment, handed down a start
/// instead of listed again while nothing has changed them: what the refusal
/// saw is what the fast path, the gate and the evidence read.
pub(crate) struct Snapshot {
    pub(crate) list: Vec<Listed>,
    /// What inspects of those containers said since: a stop's state read,
    /// its evidence and its ledger inspect each container once.
    pub(crate) inspects: Inspects,
}

impl Snapshot {
    /// The containers as just listed, none inspected yet.
    pub(crate) fn of(list: Vec<Listed>) -> Snapshot {
        Snapshot {
            list,
            inspects: Inspects::default(),
        }
    }

    /// A stack module's project containers, listed once for a verb that reads
    /// its state from them and then hands them down (a stop). `None`: not a
    /// stack, or the engine did not answer (the verb then lists them itself,
    /// and says why it could not).
    pub(crate) async fn take(stacks: &Stacks, m: &Module) -> Option<Snapshot> {
        m.stack_dir()?;
        let engine = stacks.engine().await.ok()?;
        let list = engine.compose_containers(Some(&m.name)).await.ok()?;
        Some(Snapshot::of(list))
    }
}

/// Refuses a start of a stack before anything is touched: one whose
/// directory is gone (only `stop` applies to what still runs of it), or
/// whose project name another directory's project holds. Other kinds pass.
/// Returns the stack's containers as it listed them (`None`: not a stack).
pub(crate) async fn refuse_start(stacks: &Stacks, m: &Module) -> anyhow::Result<Option<Snapshot>> {
    let Some(dir) = m.stack_dir() else {
        return Ok(None);
    };
    if !dir.is_dir() {
        return Err(m.dir_gone().into());
    }
    let engine = stacks.engine().await?;
    let list = own_containers(&engine, &m.name, dir).await?;
    Ok(Some(Snapshot::of(list)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_module_directory_and_its_folders_are_its_own() {
        let dir = Path::new("/nonexistent/services/web");
        assert!(from_dir("/nonexistent/services/web", dir));
        assert!(from_dir("/nonexistent/services/web/sub", dir));
        assert!(!from_dir("/nonexistent/elsewhere/web", dir));
        assert!(!from_dir("/nonexistent/services/webby", dir));
        assert_eq!(
            other_dir(["/nonexistent/services/web", "/srv/web"], dir).as_deref(),
            Some("/srv/web")
        );
        assert_eq!(other_dir(["/nonexistent/services/web"], dir), None);
    }
}
