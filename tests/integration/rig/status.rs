//! What `hal --json status MODULE` says of one module, as a typed document, so
//! a test asks `rig.status(&m).state()` instead of writing the query and
//! walking `["modules"][0]` by hand each time.

use std::cell::OnceCell;
use std::ops::Index;

use serde_json::Value;

use super::run::Hal;
use super::systemd::Scene;
use super::{Rig, Run, hal};

/// One module's entry in a `hal --json status MODULE` document, with the run
/// that printed it (its exit code and raw output stay at hand).
#[derive(Debug)]
pub(crate) struct ModuleDoc {
    /// The status run itself: exit code, stdout, stderr.
    pub run: Run,
    name: String,
    doc: OnceCell<Value>,
}

impl Rig {
    /// `hal --json status MODULE`, whatever its exit code; [`ModuleDoc::code`]
    /// asserts one. For `MODULE/SERVICE`, the module's entry (its one service's).
    pub(crate) fn status(&self, module: &str) -> ModuleDoc {
        hal(self).status(&[module])
    }

    /// `hal --json status ARGS…` (none: the whole node; a filter such as
    /// `--failed`; modules or patterns), whatever its exit code. Named for the
    /// first module given, if any ([`ModuleDoc::doc`] is the whole document).
    pub(crate) fn status_of(&self, args: &[&str]) -> ModuleDoc {
        hal(self).status(args)
    }

    /// `hal --json status` of every module (the node's own document), read
    /// for module `name` ([`ModuleDoc::module`] reads the others).
    pub(crate) fn status_all(&self, name: &str) -> ModuleDoc {
        ModuleDoc::of(hal(self).args(["--json", "status"]).run(), name)
    }
}

impl Hal {
    /// `hal … --json status ARGS…` on this command line as it stands (its
    /// environment, a `-H` or `-q` before, its time limit), whatever its exit
    /// code: the one place a test writes the query. Named for the first
    /// module in `args`, if any, as [`Rig::status_of`].
    pub(crate) fn status(self, args: &[&str]) -> ModuleDoc {
        let mut h = self.args(["--json", "status"]);
        for a in args {
            h = h.arg(a);
        }
        ModuleDoc::of(h.run(), first_module(args))
    }
}

/// The module a status query names first (`web` of `web/worker`), or "".
fn first_module<'a>(args: &[&'a str]) -> &'a str {
    args.iter()
        .find(|a| !a.starts_with('-'))
        .map_or("", |a| a.split_once('/').map_or(*a, |(m, _)| m))
}

impl Scene {
    /// `hal --json status MODULES…` in the scene's machine, named for the
    /// first module ([`ModuleDoc::module`] reads the others).
    pub(crate) fn status(&self, modules: &[&str]) -> ModuleDoc {
        self.status_with(&[], modules)
    }

    /// [`Scene::status`] run behind `prefix` (`env -u XDG_RUNTIME_DIR`, `runuser -u ana --`).
    pub(crate) fn status_with(&self, prefix: &[&str], modules: &[&str]) -> ModuleDoc {
        ModuleDoc::by(|args| self.hal_with(prefix, args), modules)
    }
}

impl ModuleDoc {
    /// Module `name`'s entry in the status document `run` printed.
    pub(crate) fn of(run: Run, name: &str) -> ModuleDoc {
        ModuleDoc {
            run,
            name: name.to_string(),
            doc: OnceCell::new(),
        }
    }

    /// `hal --json status ARGS…` run by `runner` (hal's arguments in, its run
    /// out), for a hal the rig's commands do not start: as another user, with
    /// the node's own state, through `setpriv`. Named as [`Rig::status_of`].
    pub(crate) fn by(runner: impl FnOnce(&[&str]) -> Run, args: &[&str]) -> ModuleDoc {
        let mut all = vec!["--json", "status"];
        all.extend(args);
        ModuleDoc::of(runner(&all), first_module(args))
    }

    /// Asserts the status run's exit code, printing its output if it differs.
    #[track_caller]
    pub(crate) fn code(self, want: i32) -> ModuleDoc {
        self.run.expect(want);
        self
    }

    /// The module's entry (`{"name": …, "state": …, …}`).
    pub(crate) fn entry(&self) -> &Value {
        self.module(&self.name)
    }

    /// Module `name`'s entry in the same document (a status of several
    /// modules, e.g. `hal --json status web db`).
    pub(crate) fn module(&self, name: &str) -> &Value {
        let doc = self.whole();
        doc["modules"]
            .as_array()
            .unwrap_or_else(|| panic!("no modules array: {}", self.run))
            .iter()
            .find(|m| m["name"] == name)
            .unwrap_or_else(|| panic!("{name} not in the status document: {}", self.run))
    }

    /// The whole document (`node`, `node_detail`, `modules`…).
    pub(crate) fn doc(&self) -> &Value {
        self.whole()
    }

    /// The whole document, parsed once.
    fn whole(&self) -> &Value {
        self.doc.get_or_init(|| self.run.json())
    }

    /// `state`: `active`, `failed`, `inactive`, ….
    pub(crate) fn state(&self) -> &str {
        self.entry()["state"]
            .as_str()
            .unwrap_or_else(|| panic!("no state: {}", self.run))
    }

    /// `reason`, or "" when it has none.
    pub(crate) fn reason(&self) -> &str {
        self.entry()["reason"].as_str().unwrap_or_default()
    }

    /// The service rows.
    pub(crate) fn services(&self) -> &[Value] {
        self.entry()["services"]
            .as_array()
            .unwrap_or_else(|| panic!("no services: {}", self.run))
    }

    /// Any other field of the entry (`Value::Null` when absent), e.g. `get("limit")["used"]`.
    pub(crate) fn get(&self, key: &str) -> &Value {
        &self.entry()[key]
    }
}

impl Index<&str> for ModuleDoc {
    type Output = Value;

    fn index(&self, key: &str) -> &Value {
        self.get(key)
    }
}

impl std::fmt::Display for ModuleDoc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.run.fmt(f)
    }
}

/// The names of the modules in a status (or verb) document, in its order.
pub(crate) fn module_names(doc: &Value) -> Vec<String> {
    doc["modules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["name"].as_str().unwrap().to_string())
        .collect()
}

/// The check called `name` in a `hal --json doctor` document.
#[track_caller]
pub(crate) fn check<'a>(doc: &'a Value, name: &str) -> &'a Value {
    doc["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no check {name} in {doc:#}"))
}
