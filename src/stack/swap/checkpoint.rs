//! An update's checkpoint of a module's data (issue 48): which named volumes and bind mounts it holds (`checkpoint` in the config, or the default), how big they are, the copy taken with the services stopped, and the copy put back by a rollback.
//!
//! Checkpoints live under the state directory, `checkpoints/MODULE/` (entry
//! `i` in `checkpoints/MODULE/i`), hal's own and outside the module's
//! directory; a copy in progress is `checkpoints/.MODULE.partial` and becomes
//! the checkpoint only once complete. The copy is GNU `cp -a --reflink=auto
//! --sparse=always` (`copy.rs`): contents, modes, owners, symlinks, hard
//! links, sparse files and xattrs.

mod copy;

use std::path::{Component, Path, PathBuf};

use anyhow::Context;

use crate::docker::compose::Project;
use crate::stack::env::Env;
use crate::stack::one_stack::Stack;
use crate::state::txn::{CheckpointEntry, CheckpointRecord};
use crate::util::timefmt::Stamp;

pub(crate) use copy::disk_usage;

/// Something a checkpoint may hold, and the services that mount it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct DataSource {
    pub entry: CheckpointEntry,
    /// The services that mount it (every service for an entry the config names).
    pub services: Vec<String>,
    /// Named by the config's `checkpoint` key: kept whatever is recreated.
    pub named: bool,
}

/// An update refused for its checkpoint (over `checkpoint_max`, or a copy
/// that failed): the module runs as it did, so its record says no failed start.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct CheckpointRefused(pub String);

/// Why the sources could not be read.
#[derive(Debug)]
pub(crate) enum SourcesError {
    /// A `checkpoint` entry names no volume and no bind mount of the module.
    Unmatched(String),
    Other(anyhow::Error),
}

impl From<crate::error::HalError> for SourcesError {
    fn from(e: crate::error::HalError) -> Self {
        SourcesError::Other(e.into())
    }
}

impl From<anyhow::Error> for SourcesError {
    fn from(e: anyhow::Error) -> Self {
        SourcesError::Other(e)
    }
}

/// One mount of one service, as compose resolves the files.
struct Mount {
    service: String,
    /// `volume` (the compose key) or `bind` (the absolute source).
    volume: bool,
    source: String,
    /// Its service runs an image by tag, not built: one an update can recreate.
    updatable: bool,
}

/// What an update of `stack` may checkpoint: the config's `entries`, or
/// (`None`) every local named volume the stack declares and every bind
/// mount inside its directory, with the services that mount each.
pub(crate) async fn sources(
    env: Env<'_>,
    stack: &Stack<'_>,
    entries: Option<&[String]>,
) -> Result<Vec<DataSource>, SourcesError> {
    if entries.is_some_and(<[String]>::is_empty) {
        return Ok(Vec::new());
    }
    let compose = env.stacks.compose().await?;
    let project = Project {
        name: stack.name,
        dir: stack.dir,
    };
    let doc = compose
        .resolved_doc(&project, env.stacks.endpoint()?)
        .await?;
    let engine = env.stacks.engine().await?;
    let seen = ResolvedMounts {
        mounts: mounts_of(&doc),
        doc,
        name: stack.name,
        dir: stack.dir,
        engine: &engine,
    };
    match entries {
        Some(entries) => seen.named(entries).await,
        None => seen.default().await.map_err(SourcesError::Other),
    }
}

/// What compose resolved for a stack, and the engine to ask about its volumes.
struct ResolvedMounts<'a> {
    doc: serde_json::Value,
    mounts: Vec<Mount>,
    name: &'a str,
    dir: &'a Path,
    engine: &'a crate::docker::engine::Engine,
}

impl ResolvedMounts<'_> {
    /// A volume key's engine name, and whether it is `external`.
    fn volume_name(&self, key: &str) -> (String, bool) {
        let v = self.doc.get("volumes").and_then(|v| v.get(key));
        let name = v
            .and_then(|v| v.get("name"))
            .and_then(|n| n.as_str())
            .map_or_else(|| format!("{}_{key}", self.name), str::to_string);
        let external = v
            .and_then(|v| v.get("external"))
            .is_some_and(|e| e.as_bool().unwrap_or(!e.is_null()));
        (name, external)
    }

    /// The sources the config's `checkpoint` entries name.
    async fn named(&self, entries: &[String]) -> Result<Vec<DataSource>, SourcesError> {
        let mut out = Vec::new();
        for e in entries {
            let mut found = false;
            for m in &self.mounts {
                let path = if m.volume && m.source == *e {
                    found = true;
                    let (name, _) = self.volume_name(&m.source);
                    // A volume not made yet holds nothing to keep.
                    self.engine
                        .volume(&name)
                        .await?
                        .map(|v| PathBuf::from(v.mountpoint))
                } else if !m.volume && same_path(&self.dir.join(e), Path::new(&m.source)) {
                    Some(PathBuf::from(&m.source))
                } else {
                    None
                };
                if let Some(path) = path {
                    found = true;
                    let entry = CheckpointEntry {
                        name: e.clone(),
                        path,
                    };
                    add(&mut out, entry, &m.service, true);
                }
            }
            if !found {
                return Err(SourcesError::Unmatched(e.clone()));
            }
        }
        Ok(out)
    }

    /// Every local named volume (not `external`) and every bind mount inside
    /// the directory, that a service an update can recreate mounts.
    async fn default(&self) -> anyhow::Result<Vec<DataSource>> {
        let mut out = Vec::new();
        for m in self.mounts.iter().filter(|m| m.updatable) {
            let source = Path::new(&m.source);
            if m.volume {
                let (name, external) = self.volume_name(&m.source);
                if external {
                    continue;
                }
                let Some(v) = self.engine.volume(&name).await? else {
                    continue;
                };
                if v.driver != "local" {
                    continue;
                }
                let entry = CheckpointEntry {
                    name: m.source.clone(),
                    path: PathBuf::from(v.mountpoint),
                };
                add(&mut out, entry, &m.service, false);
            } else if inside(source, self.dir) && source.exists() {
                let rel = source
                    .strip_prefix(self.dir)
                    .map_or_else(|_| m.source.clone(), |r| r.display().to_string());
                let entry = CheckpointEntry {
                    name: rel,
                    path: source.to_path_buf(),
                };
                add(&mut out, entry, &m.service, false);
            }
        }
        Ok(out)
    }
}

/// Adds `entry` as mounted by `service` (once per place).
fn add(out: &mut Vec<DataSource>, entry: CheckpointEntry, service: &str, named: bool) {
    match out.iter_mut().find(|s| s.entry.path == entry.path) {
        Some(s) if !s.services.iter().any(|x| x == service) => s.services.push(service.to_string()),
        Some(_) => {}
        None => out.push(DataSource {
            entry,
            services: vec![service.to_string()],
            named,
        }),
    }
}

/// The sources an update that recreates `services` checkpoints: those the
/// config names, and those the recreated services mount.
pub(crate) fn for_services(sources: &[DataSource], services: &[&str]) -> Vec<CheckpointEntry> {
    sources
        .iter()
        .filter(|s| s.named || s.services.iter().any(|x| services.contains(&x.as_str())))
        .map(|s| s.entry.clone())
        .collect()
}

/// How much disk the sources hold, together.
pub(crate) async fn size_of(sources: &[DataSource]) -> anyhow::Result<u64> {
    let paths: Vec<PathBuf> = sources.iter().map(|s| s.entry.path.clone()).collect();
    tokio::task::spawn_blocking(move || {
        paths
            .iter()
            .try_fold(0u64, |acc, p| disk_usage(p).map(|n| acc.saturating_add(n)))
    })
    .await
    .context("measure the checkpoint")?
}

/// Where module `name`'s checkpoint lives, under the state directory `state`.
pub(crate) fn place(state: &Path, name: &str) -> PathBuf {
    state.join("checkpoints").join(name)
}

/// Where a copy in progress lives: removed unless complete.
pub(crate) fn partial(state: &Path, name: &str) -> PathBuf {
    state.join("checkpoints").join(format!(".{name}.partial"))
}

/// Copies `entries` into module `name`'s checkpoint (its services stopped),
/// replacing the one there once the copy is complete. A copy that fails
/// (storage unwritable or full) is removed; the old checkpoint stays.
pub(crate) async fn take(
    state: &Path,
    name: &str,
    entries: Vec<CheckpointEntry>,
) -> anyhow::Result<CheckpointRecord> {
    let (home, work) = (place(state, name), partial(state, name));
    let at = Stamp::now().whole_milli();
    let copied = async {
        copy::fresh_dir(&work)?;
        for (i, e) in entries.iter().enumerate() {
            copy::copy(&e.path, &work.join(i.to_string())).await?;
        }
        anyhow::Ok(())
    }
    .await;
    if let Err(e) = copied {
        let _ = std::fs::remove_dir_all(&work);
        return Err(e.context(format!(
            "checkpoint into {} failed, the partial copy removed",
            work.display()
        )));
    }
    if home.exists() {
        std::fs::remove_dir_all(&home)
            .with_context(|| format!("remove the old checkpoint {}", home.display()))?;
    }
    std::fs::rename(&work, &home)
        .with_context(|| format!("move the checkpoint into {}", home.display()))?;
    let bytes = disk_usage(&home)?;
    Ok(CheckpointRecord { at, bytes, entries })
}

/// Puts module `name`'s checkpoint back over its sources (the services
/// stopped): each becomes byte for byte what was copied, contents, modes
/// and owners; what was written since is gone.
pub(crate) async fn restore(
    state: &Path,
    name: &str,
    record: &CheckpointRecord,
) -> anyhow::Result<()> {
    let home = place(state, name);
    for (i, e) in record.entries.iter().enumerate() {
        copy::put_back(&home.join(i.to_string()), &e.path)
            .await
            .with_context(|| format!("restore {} from the checkpoint", e.name))?;
    }
    Ok(())
}

/// Removes a copy an interrupted update left half made.
pub(crate) fn drop_partial(state: &Path, name: &str) {
    let _ = std::fs::remove_dir_all(partial(state, name));
}

/// Every mount of every service, as `compose config --format json` writes them.
fn mounts_of(doc: &serde_json::Value) -> Vec<Mount> {
    let mut out = Vec::new();
    let Some(services) = doc.get("services").and_then(|s| s.as_object()) else {
        return out;
    };
    for (service, s) in services {
        // As `gate::pullable`: an image by tag, not built.
        let updatable = s.get("build").is_none()
            && s.get("image")
                .and_then(|i| i.as_str())
                .is_some_and(|i| !i.contains('@'));
        let volumes = s.get("volumes").and_then(|v| v.as_array());
        for v in volumes.into_iter().flatten() {
            if let Some(short) = v.as_str() {
                // compose v1: `SOURCE:TARGET[:MODE]`; a lone target is anonymous.
                let Some((source, _)) = short.split_once(':') else {
                    continue;
                };
                out.push(Mount {
                    service: service.clone(),
                    volume: !(source.starts_with('/') || source.starts_with('.')),
                    source: source.to_string(),
                    updatable,
                });
                continue;
            }
            let kind = v.get("type").and_then(|t| t.as_str()).unwrap_or("");
            let Some(source) = v.get("source").and_then(|t| t.as_str()) else {
                continue;
            };
            if kind == "volume" || kind == "bind" {
                out.push(Mount {
                    service: service.clone(),
                    volume: kind == "volume",
                    source: source.to_string(),
                    updatable,
                });
            }
        }
    }
    out
}

/// `a` and `b` name one place (`.` and `..` taken out, symlinks followed where they exist).
fn same_path(a: &Path, b: &Path) -> bool {
    let (a, b) = (tidy(a), tidy(b));
    a == b || matches!((a.canonicalize(), b.canonicalize()), (Ok(x), Ok(y)) if x == y)
}

/// `path` is `dir` or below it.
fn inside(path: &Path, dir: &Path) -> bool {
    let (p, d) = (tidy(path), tidy(dir));
    if p.starts_with(&d) {
        return true;
    }
    matches!((p.canonicalize(), d.canonicalize()), (Ok(x), Ok(y)) if x.starts_with(&y))
}

/// `path` without `.` components and with `..` applied.
fn tidy(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mounts_are_read_from_compose_s_json() {
        let doc = serde_json::json!({
            "services": {"db": {"volumes": [
                {"type": "volume", "source": "data", "target": "/data"},
                {"type": "bind", "source": "/srv/db/files", "target": "/files"},
                {"type": "tmpfs", "target": "/tmp"}
            ]}}
        });
        let m = mounts_of(&doc);
        assert_eq!(m.len(), 2);
        assert!(m[0].volume && m[0].source == "data");
        assert!(!m[1].volume && m[1].source == "/srv/db/files");
        let v1 = serde_json::json!({
            "services": {"db": {"volumes": ["data:/data:rw", "/srv/db/files:/files:rw", "/anon"]}}
        });
        let m = mounts_of(&v1);
        assert_eq!(m.len(), 2);
        assert!(m[0].volume && m[0].source == "data");
        assert!(!m[1].volume && m[1].source == "/srv/db/files");
    }

    #[test]
    fn only_a_service_an_update_recreates_has_its_mounts_checkpointed() {
        let mount = serde_json::json!([{"type": "volume", "source": "data", "target": "/data"}]);
        let doc = serde_json::json!({"services": {
            "app": {"image": "reg/app:1", "volumes": mount},
            "built": {"image": "built:1", "build": {"context": "."}, "volumes": mount},
            "pinned": {"image": "reg/db@sha256:00", "volumes": mount},
            "none": {"volumes": mount}
        }});
        let m = mounts_of(&doc);
        let updatable: Vec<(&str, bool)> = m.iter().map(|m| (&*m.service, m.updatable)).collect();
        let want = [("app", true), ("built", false)];
        assert_eq!(updatable[..2], want);
        assert!(updatable[2..].iter().all(|(_, u)| !u), "{updatable:?}");
    }

    #[test]
    fn a_bind_mount_inside_the_directory_is_the_module_s() {
        assert!(inside(Path::new("/srv/db/./files"), Path::new("/srv/db")));
        assert!(!inside(Path::new("/srv/other"), Path::new("/srv/db")));
        assert!(same_path(
            Path::new("/srv/db/./files"),
            Path::new("/srv/db/files")
        ));
    }

    #[test]
    fn the_recreated_services_data_is_kept_and_what_the_config_names() {
        let src = |path: &str, services: &[&str], named| DataSource {
            entry: CheckpointEntry {
                name: path.into(),
                path: path.into(),
            },
            services: services.iter().map(|s| s.to_string()).collect(),
            named,
        };
        let all = [
            src("/a", &["db"], false),
            src("/b", &["web"], false),
            src("/c", &["web"], true),
        ];
        let kept: Vec<PathBuf> = for_services(&all, &["db"])
            .into_iter()
            .map(|e| e.path)
            .collect();
        assert_eq!(kept, [PathBuf::from("/a"), PathBuf::from("/c")]);
    }
}
