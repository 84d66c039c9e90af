//! Which modules exist on this node: stack directories under the services root, and host units from the config.

mod select;

use std::path::{Path, PathBuf};

use crate::error::io_words;
use crate::module::compose_files::COMPOSE_FILES;
use crate::module::config::Config;
use crate::module::dotenv::DotenvError;
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

/// A directory under the services root that compose finds a project in, as
/// [`load::inventory`](crate::module::load::inventory) read it: its name, its
/// path, and the file that makes it a stack (`Err`: one compose would look
/// for and hal cannot read, listed invalid with that reason).
#[derive(Debug)]
pub(crate) struct Found {
    pub name: String,
    pub dir: PathBuf,
    pub file: Result<PathBuf, NoStackFile>,
}

/// Why a directory compose would find a project in has no compose file hal
/// can read: the reason the module is listed invalid with.
#[derive(Debug, thiserror::Error)]
pub(crate) enum NoStackFile {
    /// `COMPOSE_FILE` is set and names nothing.
    #[error("COMPOSE_FILE names no file")]
    NamesNoFile,
    /// The directory's `.env` could not be read.
    #[error("{}: {}", dotenv.display(), io_words(why))]
    Unreadable {
        dotenv: PathBuf,
        why: std::io::Error,
    },
    /// Compose would refuse the directory's `.env`.
    #[error("{}:{}: {}", dotenv.display(), refused.line, refused.why)]
    Refused {
        dotenv: PathBuf,
        refused: DotenvError,
    },
    /// A file `COMPOSE_FILE` names is not there.
    #[error("COMPOSE_FILE in {} names {part}, which is not a file", dotenv.display())]
    NotAFile { dotenv: PathBuf, part: String },
}

impl Inventory {
    /// The modules of `found` (what the services root `root` holds, or why it
    /// could not be read: it is then treated as empty) and the host units
    /// declared in `config`, sorted by name. Reads nothing: `load::inventory` does.
    pub(crate) fn of(
        root: &Path,
        found: Result<Vec<Found>, std::io::Error>,
        config: &Config,
    ) -> Inventory {
        let (found, root_problem) = match found {
            Ok(found) => (found, None),
            Err(e) => {
                let why = format!("services root {}: {}", root.display(), io_words(&e));
                (Vec::new(), Some(why))
            }
        };
        let mut modules: Vec<Module> = found
            .into_iter()
            .map(|Found { name, dir, file }| {
                let kind = match file {
                    Err(why) => Kind::Invalid {
                        reason: why.to_string(),
                    },
                    Ok(file) => match crate::module::name::problem(&name) {
                        Some(why) => Kind::Invalid {
                            reason: format!(
                                "directory name is not a valid compose project name: {why}"
                            ),
                        },
                        None => Kind::Stack { dir, file },
                    },
                };
                Module { name, kind }
            })
            .collect();
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
    /// that are no module now: their directory under the root is gone, as
    /// `gone` says of it (`load::remember` asks the file system).
    pub(crate) fn remember<'a>(
        &mut self,
        names: impl IntoIterator<Item = &'a String>,
        gone: impl Fn(&Path) -> bool,
    ) {
        if self.root_problem.is_some() {
            return;
        }
        for name in names {
            if self.get(name).is_some() || crate::module::name::problem(name).is_some() {
                continue;
            }
            let dir = self.root.join(name);
            if !gone(&dir) {
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

    #[test]
    fn the_inventory_is_built_from_what_was_found_without_reading_a_file() {
        let found = |name: &str, file: Result<&str, NoStackFile>| Found {
            name: name.into(),
            dir: PathBuf::from("/s").join(name),
            file: file.map(PathBuf::from),
        };
        let cfg = Config::parse(
            "[module.notifier]\nunit = \"n.service\"\n[module.web]\nunit = \"w.service\"\n",
            Path::new("hal.toml"),
        )
        .unwrap();
        let found = vec![
            found("web", Ok("/s/web/compose.yaml")),
            found("Bad Name", Ok("/s/Bad Name/compose.yaml")),
            found("env", Err(NoStackFile::NamesNoFile)),
        ];
        let inv = Inventory::of(Path::new("/s"), Ok(found), &cfg);
        let names: Vec<_> = inv.names().collect();
        assert_eq!(names, ["Bad Name", "env", "notifier", "web"]);
        let reason = |name: &str| match &inv.get(name).unwrap().kind {
            Kind::Invalid { reason } => reason.clone(),
            k => panic!("{k:?}"),
        };
        assert!(reason("Bad Name").starts_with("directory name is not a valid"));
        assert_eq!(reason("env"), "COMPOSE_FILE names no file");
        assert!(reason("web").starts_with("defined twice: a stack directory under /s"));
        assert!(inv.root_problem.is_none());

        let gone = std::io::Error::other("gone");
        let unread = Inventory::of(Path::new("/s"), Err(gone), &cfg);
        assert_eq!(unread.names().collect::<Vec<_>>(), ["notifier", "web"]);
        assert_eq!(
            unread.root_problem.as_deref(),
            Some("services root /s: gone")
        );
    }

    #[test]
    fn why_a_directory_has_no_stack_file_reads_as_it_did() {
        use crate::module::dotenv::Refusal;
        let dotenv = || PathBuf::from("/s/web/.env");
        for (why, said) in [
            (NoStackFile::NamesNoFile, "COMPOSE_FILE names no file"),
            (
                NoStackFile::Unreadable {
                    dotenv: dotenv(),
                    why: std::io::Error::from_raw_os_error(13),
                },
                "/s/web/.env: permission denied",
            ),
            (
                NoStackFile::Refused {
                    dotenv: dotenv(),
                    refused: DotenvError {
                        line: 3,
                        why: Refusal::NoName,
                    },
                },
                "/s/web/.env:3: no variable name",
            ),
            (
                NoStackFile::NotAFile {
                    dotenv: dotenv(),
                    part: "app.yaml".into(),
                },
                "COMPOSE_FILE in /s/web/.env names app.yaml, which is not a file",
            ),
        ] {
            assert_eq!(why.to_string(), said);
        }
    }

    #[test]
    fn a_remembered_stack_is_kept_only_when_its_directory_is_gone() {
        let mut inv = inventory();
        let names = ["web", "old", "kept", "../x"].map(String::from);
        inv.remember(&names, |dir| dir != Path::new("/services/kept"));
        let gone: Vec<_> = inv.gone.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(gone, ["old"]);
        assert!(inv.get("old").is_some());
        let mut unread = inventory();
        unread.root_problem = Some("unreadable".into());
        unread.remember(&names, |_| true);
        assert!(unread.gone.is_empty());
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
}
