//! What a verb acts on: a whole module, or one service of a stack (`MODULE/SERVICE`).

use crate::module::Module;

/// A module, or one service of a stack module: `web` or `web/worker`, the same
/// `module/service` that prefixes a stack's log lines.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Target {
    pub module: Module,
    /// The compose service; `None` means the whole module.
    pub service: Option<String>,
}

impl Target {
    /// The whole module.
    pub(crate) fn whole(module: Module) -> Target {
        Target {
            module,
            service: None,
        }
    }

    /// `web`, or `web/worker` for one service: how people see the target.
    pub(crate) fn label(&self) -> String {
        match &self.service {
            Some(s) => format!("{}/{s}", self.module.name),
            None => self.module.name.clone(),
        }
    }
}

impl From<Module> for Target {
    fn from(m: Module) -> Target {
        Target::whole(m)
    }
}

/// Splits a word from the command line into its module and service parts:
/// `web` → (`web`, none), `web/worker` → (`web`, `worker`). Only the first
/// `/` splits, so a stray second one is part of the service and refused there.
pub(crate) fn split(word: &str) -> (&str, Option<&str>) {
    match word.split_once('/') {
        Some((m, s)) => (m, Some(s)),
        None => (word, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::module::Kind;

    #[test]
    fn split_at_the_first_slash() {
        assert_eq!(split("web"), ("web", None));
        assert_eq!(split("web/worker"), ("web", Some("worker")));
        assert_eq!(split("web/"), ("web", Some("")));
        assert_eq!(split("a/b/c"), ("a", Some("b/c")));
    }

    #[test]
    fn labels() {
        let m = Module {
            name: "web".into(),
            kind: Kind::Invalid { reason: "x".into() },
        };
        assert_eq!(Target::whole(m.clone()).label(), "web");
        let t = Target {
            module: m,
            service: Some("worker".into()),
        };
        assert_eq!(t.label(), "web/worker");
    }
}
