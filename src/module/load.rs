//! The one reader of the node's own files in `module/`: the config file, the services root, and what compose reads
//! in a stack directory before any compose file (its `.env`, the files `COMPOSE_FILE` names), with the environment
//! variables that choose them. Everything else in `module/` is rules over the values read here (the rule
//! `MODULE_IO` of the architecture test).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::error::{HalError, io_words};
use crate::module::compose_files::{self, COMPOSE_FILES};
use crate::module::config::Config;
use crate::module::dotenv;
use crate::module::inventory::{Found, Inventory, NoStackFile};

/// Loads the config from `explicit`, else `HAL_CONFIG`, else the per-user or
/// system path. A missing file is an empty config, unless it was named
/// explicitly on the command line.
pub(crate) fn config(explicit: Option<&Path>) -> Result<Config, HalError> {
    let (path, must_exist) = match explicit {
        Some(p) => (p.to_path_buf(), true),
        None => match std::env::var_os("HAL_CONFIG").filter(|v| !v.is_empty()) {
            Some(p) => (PathBuf::from(p), true),
            None => (default_config_path(), false),
        },
    };
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && !must_exist => {
            return Ok(Config::default());
        }
        Err(e) => {
            return Err(HalError::Config {
                path: path.display().to_string(),
                message: io_words(&e),
            });
        }
    };
    Config::parse(&text, &path)
}

/// `~/.config/hal/hal.toml` for a user, `/etc/hal/hal.toml` for root.
fn default_config_path() -> PathBuf {
    if crate::util::sys::is_root() {
        return PathBuf::from("/etc/hal/hal.toml");
    }
    crate::util::sys::user_dir("XDG_CONFIG_HOME", ".config", "hal/hal.toml")
        .unwrap_or_else(|| PathBuf::from("/etc/hal/hal.toml"))
}

/// The services root: the flag, else `HAL_SERVICES_DIR`, else the config, else `/services`.
pub(crate) fn services_root(flag: Option<&Path>, config: &Config) -> PathBuf {
    if let Some(p) = flag {
        return p.to_path_buf();
    }
    if let Some(p) = std::env::var_os("HAL_SERVICES_DIR").filter(|v| !v.is_empty()) {
        return PathBuf::from(p);
    }
    config
        .services_dir
        .clone()
        .unwrap_or_else(|| PathBuf::from("/services"))
}

/// Every module on the node: the stack directories under `root`, read, and
/// the host units declared in `config` ([`Inventory::of`] puts them together).
pub(crate) fn inventory(root: &Path, config: &Config) -> Inventory {
    inventory_listed(root, config, &|_| None)
}

/// A directory's listing as a cache knows it: the names compose looks for
/// that are regular files in it (`None`: unknown, so each name is probed).
pub(crate) type KnownListing<'a> = &'a dyn Fn(&Path) -> Option<Vec<String>>;

/// [`inventory`], each stack directory's compose file found in its
/// `listing` (one read of it, or none when kept) rather than probed name by name.
pub(crate) fn inventory_listed(
    root: &Path,
    config: &Config,
    listing: KnownListing<'_>,
) -> Inventory {
    let found = std::fs::read_dir(root).map(|entries| {
        entries
            .flatten()
            .filter_map(|entry| {
                let dir = entry.path();
                // readdir's own file type costs no system call; only a
                // link (or a file system that does not say) is followed.
                let is_dir = match entry.file_type() {
                    Ok(t) if t.is_dir() => true,
                    Ok(t) if t.is_file() => false,
                    _ => dir.is_dir(),
                };
                if !is_dir {
                    return None;
                }
                let file = stack_file(&dir, listing(&dir).as_deref())?;
                let name = entry.file_name().to_string_lossy().into_owned();
                Some(Found { name, dir, file })
            })
            .collect()
    });
    Inventory::of(root, found, config)
}

/// Takes note of the stacks hal once ran (`names`, the ones its state
/// remembers) whose directory is gone from under the root.
pub(crate) fn remember<'a>(inventory: &mut Inventory, names: impl IntoIterator<Item = &'a String>) {
    inventory.remember(names, |dir| !dir.exists());
}

/// The compose file of a stack directory, in preference order: looked up in
/// its `listing` when known, else probed.
fn compose_file(dir: &Path, listing: Option<&[String]>) -> Option<PathBuf> {
    match listing {
        Some(names) => COMPOSE_FILES
            .iter()
            .find(|f| names.iter().any(|n| n == *f))
            .map(|f| dir.join(f)),
        None => COMPOSE_FILES
            .iter()
            .map(|f| dir.join(f))
            .find(|p| p.is_file()),
    }
}

/// The file that makes `dir` a stack: its default compose file, else the
/// first file `COMPOSE_FILE` names (in the environment or its `.env`), as
/// compose finds a project there. `None`: compose finds none, not a module;
/// `Err`: compose would look for one that hal cannot read (listed invalid).
fn stack_file(dir: &Path, listing: Option<&[String]>) -> Option<Result<PathBuf, NoStackFile>> {
    if let Some(file) = compose_file(dir, listing) {
        return Some(Ok(file));
    }
    // With no `.env` and no `COMPOSE_FILE` in the environment, nothing names a file.
    if listing.is_some_and(|names| !names.iter().any(|n| n == ".env"))
        && std::env::var_os("COMPOSE_FILE").is_none()
    {
        return None;
    }
    named_files(dir)
        .map(|r| r.and_then(|files| files.into_iter().next().ok_or(NoStackFile::NamesNoFile)))
}

/// The compose files `COMPOSE_FILE` names for a project run in `dir` (the
/// environment, else the directory's `.env`), as compose finds a project
/// with no default file: `None` when it names none, `Err` with the reason
/// when `.env` cannot be read (or compose would refuse it) or a file it
/// names is missing. Reads `.env` only (interpolated as compose reads it):
/// cheap enough for discovery and completion.
fn named_files(dir: &Path) -> Option<Result<Vec<PathBuf>, NoStackFile>> {
    let dotenv_path = dir.join(".env");
    let dotenv = match std::fs::read_to_string(&dotenv_path) {
        Ok(text) => match dotenv::parse(&text, &mut |k| std::env::var(k).ok()) {
            Ok(vars) => vars,
            Err(refused) => {
                let dotenv = dotenv_path;
                return Some(Err(NoStackFile::Refused { dotenv, refused }));
            }
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => BTreeMap::new(),
        Err(why) => {
            let dotenv = dotenv_path;
            return Some(Err(NoStackFile::Unreadable { dotenv, why }));
        }
    };
    let parts = compose_files::named(|k| std::env::var(k).ok().or_else(|| dotenv.get(k).cloned()))?;
    // Named by this process's environment, it names files for every
    // directory: one where they are not is no project, not a broken one.
    let ours = std::env::var_os("COMPOSE_FILE").is_none();
    let mut out = Vec::new();
    for part in parts {
        let path = dir.join(&part);
        if !path.is_file() {
            let dotenv = dotenv_path;
            return ours.then_some(Err(NoStackFile::NotAFile { dotenv, part }));
        }
        out.push(path);
    }
    (!out.is_empty()).then_some(Ok(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::module::Kind;

    fn tempdir(tag: &str) -> PathBuf {
        let p = std::env::temp_dir().join(format!("hal-disc-{}-{tag}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        p
    }

    #[test]
    fn a_linked_stack_directory_is_found_and_a_link_to_a_file_is_not() {
        let root = tempdir("links");
        let real = tempdir("links-real");
        std::fs::write(real.join("compose.yaml"), "services: {}").unwrap();
        std::os::unix::fs::symlink(&real, root.join("linked")).unwrap();
        std::fs::write(root.join("plain"), "").unwrap();
        std::os::unix::fs::symlink(root.join("plain"), root.join("to-file")).unwrap();
        let inv = inventory(&root, &Config::default());
        let names: Vec<_> = inv.names().collect();
        assert_eq!(names, ["linked"]);
        std::fs::remove_dir_all(&root).unwrap();
        std::fs::remove_dir_all(&real).unwrap();
    }

    #[test]
    fn finds_stacks_in_preference_order_and_lists_invalid() {
        let root = tempdir("order");
        std::fs::create_dir_all(root.join("web")).unwrap();
        std::fs::write(root.join("web/docker-compose.yml"), "services: {}").unwrap();
        std::fs::write(root.join("web/compose.yml"), "services: {}").unwrap();
        std::fs::create_dir_all(root.join("Bad Name")).unwrap();
        std::fs::write(root.join("Bad Name/compose.yaml"), "").unwrap();
        std::fs::create_dir_all(root.join("notes")).unwrap();
        std::fs::write(root.join("README"), "").unwrap();

        let cfg = Config::parse(
            "[module.notifier]\nunit = \"n.service\"\n",
            Path::new("hal.toml"),
        )
        .unwrap();
        let inv = inventory(&root, &cfg);
        let names: Vec<_> = inv.names().collect();
        assert_eq!(names, ["Bad Name", "notifier", "web"]);
        match &inv.get("web").unwrap().kind {
            Kind::Stack { file, .. } => assert!(file.ends_with("compose.yml")),
            k => panic!("{k:?}"),
        }
        assert!(matches!(
            inv.get("Bad Name").unwrap().kind,
            Kind::Invalid { .. }
        ));
        assert_eq!(
            inv.get("notifier").unwrap().kind,
            Kind::Host {
                unit: "n.service".into(),
                scope: crate::module::config::Scope::User
            }
        );
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn missing_root_is_reported_not_fatal() {
        let inv = inventory(Path::new("/nonexistent/hal"), &Config::default());
        assert!(inv.modules.is_empty());
        assert!(inv.root_problem.is_some());
    }
}
