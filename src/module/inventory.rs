//! Which modules exist on this node: stack directories under the services root, and host units from the config.

mod select;

use std::path::{Path, PathBuf};

use crate::module::compose_files::COMPOSE_FILES;
use crate::module::config::Config;
use crate::module::{Kind, Module};

/// Every module on the node, sorted by name.
#[derive(Clone, Debug, Default)]
pub(crate) struct Inventory {
    pub root: PathBuf,
    pub modules: Vec<Module>,
    /// Set when the services root could not be read (it is then treated as empty).
    pub root_problem: Option<String>,
    /// Stacks hal's state remembers whose directory is gone: never listed,
    /// but a name resolves to one, so `hal stop OLDNAME` can remove what
    /// still runs of it, and `status` shows it when something does.
    pub gone: Vec<Module>,
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

/// The compose file of a stack directory, in preference order.
pub(crate) fn compose_file(dir: &Path) -> Option<PathBuf> {
    COMPOSE_FILES
        .iter()
        .map(|f| dir.join(f))
        .find(|p| p.is_file())
}

/// The file that makes `dir` a stack: its default compose file, else the
/// first file `COMPOSE_FILE` names (in the environment or its `.env`), as
/// compose finds a project there. `None`: compose finds none, not a module;
/// `Err`: compose would look for one that hal cannot read (listed invalid).
pub(crate) fn stack_file(dir: &Path) -> Option<Result<PathBuf, String>> {
    if let Some(file) = compose_file(dir) {
        return Some(Ok(file));
    }
    crate::module::compose_files::named_files(dir).map(|r| {
        r.and_then(|files| {
            files
                .into_iter()
                .next()
                .ok_or_else(|| "COMPOSE_FILE names no file".to_string())
        })
    })
}

impl Inventory {
    /// Scans `root` and merges the host units declared in `config`.
    pub(crate) fn discover(root: &Path, config: &Config) -> Inventory {
        let mut modules = Vec::new();
        let mut root_problem = None;
        match std::fs::read_dir(root) {
            Ok(entries) => {
                for entry in entries.flatten() {
                    let path = entry.path();
                    // readdir's own file type costs no system call; only a
                    // link (or a file system that does not say) is followed.
                    let is_dir = match entry.file_type() {
                        Ok(t) if t.is_dir() => true,
                        Ok(t) if t.is_file() => false,
                        _ => path.is_dir(),
                    };
                    if !is_dir {
                        continue;
                    }
                    let file = match stack_file(&path) {
                        None => continue,
                        Some(Ok(file)) => file,
                        Some(Err(reason)) => {
                            let name = entry.file_name().to_string_lossy().into_owned();
                            modules.push(Module {
                                name,
                                kind: Kind::Invalid { reason },
                            });
                            continue;
                        }
                    };
                    let name = entry.file_name().to_string_lossy().into_owned();
                    let kind = match crate::module::name::problem(&name) {
                        Some(why) => Kind::Invalid {
                            reason: format!(
                                "directory name is not a valid compose project name: {why}"
                            ),
                        },
                        None => Kind::Stack { dir: path, file },
                    };
                    modules.push(Module { name, kind });
                }
            }
            Err(e) => {
                root_problem = Some(format!(
                    "services root {}: {}",
                    root.display(),
                    crate::error::io_words(&e)
                ));
            }
        }
        for (name, section) in &config.modules {
            let Some(unit) = &section.unit else { continue };
            let host = Kind::Host {
                unit: unit.clone(),
                scope: section.scope.unwrap_or_default(),
            };
            match modules.iter_mut().find(|m| &m.name == name) {
                Some(existing) => {
                    existing.kind = Kind::Invalid {
                        reason: format!(
                            "defined twice: a stack directory under {} and a host unit ({unit}) in the config",
                            root.display()
                        ),
                    }
                }
                None => modules.push(Module {
                    name: name.clone(),
                    kind: host,
                }),
            }
        }
        modules.sort_by(|a, b| a.name.cmp(&b.name));
        Inventory {
            root: root.to_path_buf(),
            modules,
            root_problem,
            gone: Vec::new(),
        }
    }

    /// Takes note of the stacks hal once ran (the names its state remembers)
    /// that are no module now: their directory under the root is gone.
    pub(crate) fn remember<'a>(&mut self, names: impl IntoIterator<Item = &'a String>) {
        if self.root_problem.is_some() {
            return;
        }
        for name in names {
            if self.get(name).is_some() || crate::module::name::problem(name).is_some() {
                continue;
            }
            let dir = self.root.join(name);
            if dir.exists() {
                continue;
            }
            let file = dir.join(COMPOSE_FILES[0]);
            self.gone.push(Module {
                name: name.clone(),
                kind: Kind::Stack { dir, file },
            });
        }
    }

    /// A module by name; one whose directory is gone too (see [`Inventory::gone`]).
    pub(crate) fn get(&self, name: &str) -> Option<&Module> {
        self.modules
            .iter()
            .chain(&self.gone)
            .find(|m| m.name == name)
    }

    /// The stacks among the modules, in the inventory's order.
    pub(crate) fn stacks(&self) -> impl Iterator<Item = &Module> {
        self.modules.iter().filter(|m| m.is_stack())
    }

    /// Names of the stacks (the compose projects hal knows).
    pub(crate) fn stack_names(&self) -> Vec<&str> {
        self.stacks().map(|m| m.name.as_str()).collect()
    }

    /// Names of every module, for completion.
    pub(crate) fn names(&self) -> impl Iterator<Item = &str> {
        self.modules.iter().map(|m| m.name.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::HalError;
    use crate::module::target::Target;

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
        let inv = Inventory::discover(&root, &Config::default());
        let names: Vec<_> = inv.names().collect();
        assert_eq!(names, ["linked"]);
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
        let inv = Inventory::discover(&root, &cfg);
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
    fn resolve_refuses_bad_and_unknown_names() {
        let inv = Inventory::default();
        assert!(matches!(
            inv.resolve(&["../etc".into()]),
            Err(HalError::InvalidName { .. })
        ));
        assert!(matches!(
            inv.resolve(&["ghost".into()]),
            Err(HalError::NoSuchModule { .. })
        ));
    }

    fn inventory() -> Inventory {
        let stack = |name: &str| Module {
            name: name.into(),
            kind: Kind::Stack {
                dir: PathBuf::from(name),
                file: PathBuf::from(name).join("compose.yaml"),
            },
        };
        Inventory {
            root: PathBuf::from("/services"),
            modules: vec![
                stack("mail"),
                stack("mailu"),
                Module {
                    name: "notifier".into(),
                    kind: Kind::Host {
                        unit: "n.service".into(),
                        scope: crate::module::config::Scope::User,
                    },
                },
                stack("web"),
            ],
            root_problem: None,
            gone: Vec::new(),
        }
    }

    fn labels(t: &[Target]) -> Vec<String> {
        t.iter().map(Target::label).collect()
    }

    #[test]
    fn patterns_select_every_match_once_in_order() {
        let inv = inventory();
        let words = ["web".to_string(), "mail*".into(), "mailu".into()];
        assert_eq!(
            labels(&inv.targets(&words).unwrap()),
            ["web", "mail", "mailu"]
        );
        assert_eq!(
            labels(&inv.targets(&["[nw]*".into()]).unwrap()),
            ["notifier", "web"]
        );
        match inv.targets(&["db*".into()]) {
            Err(HalError::NoMatch { pattern, .. }) => assert_eq!(pattern, "db*"),
            other => panic!("{other:?}"),
        }
        assert_eq!(
            HalError::NoMatch {
                pattern: "db*".into(),
                root: "/s".into()
            }
            .exit(),
            crate::error::Exit::NoSuchModule
        );
    }

    #[test]
    fn a_pattern_takes_invalid_modules_only_to_show_them() {
        let mut inv = inventory();
        inv.modules.push(Module {
            name: "web.old".into(),
            kind: Kind::Invalid {
                reason: "bad name".into(),
            },
        });
        assert_eq!(labels(&inv.targets(&["web*".into()]).unwrap()), ["web"]);
        assert_eq!(
            labels(&inv.targets_to_show(&["web*".into()]).unwrap()),
            ["web", "web.old"]
        );
        assert!(matches!(
            inv.targets(&["web.*".into()]),
            Err(HalError::NoMatch { .. })
        ));
        // Named, it is still found.
        assert_eq!(
            labels(&inv.targets(&["web.old".into()]).unwrap()),
            ["web.old"]
        );
    }

    #[test]
    fn module_slash_service() {
        let inv = inventory();
        let t = inv.targets(&["web/worker".into(), "web".into()]).unwrap();
        assert_eq!(labels(&t), ["web/worker", "web"]);
        assert_eq!(t[0].service.as_deref(), Some("worker"));
        assert!(matches!(
            inv.targets(&["notifier/x".into()]),
            Err(HalError::NoServices { .. })
        ));
        assert!(matches!(
            inv.targets(&["ghost/x".into()]),
            Err(HalError::NoSuchModule { .. })
        ));
        assert!(matches!(
            inv.targets(&["web/".into()]),
            Err(HalError::InvalidName { .. })
        ));
        assert!(matches!(
            inv.targets(&["web/a b".into()]),
            Err(HalError::InvalidName { .. })
        ));
        assert!(matches!(
            inv.targets(&["w*/x".into()]),
            Err(HalError::Usage(_))
        ));
        // Whole-module verbs refuse a service.
        assert!(matches!(
            inv.resolve(&["web/worker".into()]),
            Err(HalError::Usage(_))
        ));
        assert_eq!(inv.resolve(&["m?il".into()]).unwrap()[0].name, "mail");
    }

    #[test]
    fn missing_root_is_reported_not_fatal() {
        let inv = Inventory::discover(Path::new("/nonexistent/hal"), &Config::default());
        assert!(inv.modules.is_empty());
        assert!(inv.root_problem.is_some());
    }
}
