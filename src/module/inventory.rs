//! Which modules exist on this node: stack directories under the services root, and host units from the config.

use std::path::{Path, PathBuf};

use crate::error::HalError;
use crate::module::config::Config;
use crate::module::{Kind, Module};

/// Compose file names, in the order compose itself prefers them.
pub const COMPOSE_FILES: [&str; 4] = [
    "compose.yaml",
    "compose.yml",
    "docker-compose.yaml",
    "docker-compose.yml",
];

/// Every module on the node, sorted by name.
#[derive(Clone, Debug, Default)]
pub struct Inventory {
    pub root: PathBuf,
    pub modules: Vec<Module>,
    /// Set when the services root could not be read (it is then treated as empty).
    pub root_problem: Option<String>,
}

/// The services root: the flag, else `HAL_SERVICES_DIR`, else the config, else `/services`.
pub fn services_root(flag: Option<&Path>, config: &Config) -> PathBuf {
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
pub fn compose_file(dir: &Path) -> Option<PathBuf> {
    COMPOSE_FILES
        .iter()
        .map(|f| dir.join(f))
        .find(|p| p.is_file())
}

impl Inventory {
    /// Scans `root` and merges the host units declared in `config`.
    pub fn discover(root: &Path, config: &Config) -> Inventory {
        let mut modules = Vec::new();
        let mut root_problem = None;
        match std::fs::read_dir(root) {
            Ok(entries) => {
                for entry in entries.flatten() {
                    let path = entry.path();
                    if !path.is_dir() {
                        continue;
                    }
                    let Some(file) = compose_file(&path) else {
                        continue;
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
            Err(e) => root_problem = Some(format!("services root {}: {e}", root.display())),
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
        }
    }

    pub fn get(&self, name: &str) -> Option<&Module> {
        self.modules.iter().find(|m| m.name == name)
    }

    /// Resolves names given on the command line, in order, without duplicates.
    /// An unusable name is refused before anything is touched.
    pub fn resolve(&self, names: &[String]) -> Result<Vec<Module>, HalError> {
        let mut out: Vec<Module> = Vec::new();
        for name in names {
            if out.iter().any(|m| &m.name == name) {
                continue;
            }
            match self.get(name) {
                Some(m) => out.push(m.clone()),
                None => {
                    if let Some(reason) = crate::module::name::problem(name) {
                        return Err(HalError::InvalidName {
                            name: name.clone(),
                            reason,
                        });
                    }
                    return Err(HalError::NoSuchModule {
                        name: name.clone(),
                        root: self.root.display().to_string(),
                    });
                }
            }
        }
        Ok(out)
    }

    /// Names of every module, for completion.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.modules.iter().map(|m| m.name.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tempdir(tag: &str) -> PathBuf {
        let p = std::env::temp_dir().join(format!("hal-disc-{}-{tag}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        p
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

    #[test]
    fn missing_root_is_reported_not_fatal() {
        let inv = Inventory::discover(Path::new("/nonexistent/hal"), &Config::default());
        assert!(inv.modules.is_empty());
        assert!(inv.root_problem.is_some());
    }
}
