//! The module graph under the watch: repairs in its order (`requires` and `after`). It is read again with the rest of the node (`reread.rs`).

use std::collections::BTreeSet;
use std::time::Duration;

use super::{BUSY_RECHECK, Watcher};
use crate::module::deps::Graph;
use crate::watch::policy::{Act, Action};

impl Watcher<'_> {
    /// The repairs to begin now, in the graph's order: a repair of a module
    /// that requires or comes after one being repaired waits until that
    /// repair ends (looked at again then, or after a moment).
    pub(super) fn in_order(&mut self, actions: Vec<Action>) -> Vec<Action> {
        let repairs = actions.iter().filter(|a| repair(a)).count();
        if repairs == 0 || (repairs == 1 && self.inflight.is_empty()) {
            return actions;
        }
        let graph = self.node.graph().ok();
        let (now, later) = put_off(graph.as_deref(), actions, &self.inflight);
        self.mark(later.clone(), BUSY_RECHECK);
        self.put_off.extend(later);
        now
    }

    /// A repair ended: the repairs put off behind it are looked at now.
    pub(super) fn repair_ended(&mut self) {
        let later = std::mem::take(&mut self.put_off);
        self.mark(later, Duration::ZERO);
    }
}

fn repair(a: &Action) -> bool {
    matches!(a.act, Act::Restart | Act::Retry)
}

/// Splits `actions` into those to act on now and the modules whose repair
/// waits: each one that requires or comes after a module being repaired
/// (`inflight`) or about to be (a repair among `actions`). Order only: once
/// that repair ends it goes, whatever became of it.
pub(super) fn put_off(
    graph: Option<&Graph>,
    actions: Vec<Action>,
    inflight: &BTreeSet<String>,
) -> (Vec<Action>, Vec<String>) {
    let Some(g) = graph else {
        return (actions, Vec::new());
    };
    let repaired: BTreeSet<&str> = actions
        .iter()
        .filter(|a| repair(a))
        .map(|a| a.module.as_str())
        .collect();
    let blocked: BTreeSet<String> = actions
        .iter()
        .filter(|a| repair(a))
        .filter(|a| {
            g.of(&a.module)
                .iter()
                .any(|e| inflight.contains(&e.to) || repaired.contains(e.to.as_str()))
        })
        .map(|a| a.module.clone())
        .collect();
    let (later, now): (Vec<Action>, Vec<Action>) = actions
        .into_iter()
        .partition(|a| repair(a) && blocked.contains(&a.module));
    (now, later.into_iter().map(|a| a.module).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::module::deps::{Edge, Origin, Strength, Tie};
    use crate::watch::policy::RepairScope;

    fn edge(from: &str, to: &str, strength: Strength) -> Edge {
        Edge {
            from: from.into(),
            to: to.into(),
            strength,
            tie: Tie::Declared,
            origin: Origin::Config {
                key: "after",
                line: None,
            },
        }
    }

    fn act(module: &str, act: Act) -> Action {
        Action {
            module: module.into(),
            act,
            reason: crate::output::watch_log::Cause::Said("down".into()),
            scope: RepairScope::Module,
        }
    }

    fn names(actions: &[Action]) -> Vec<&str> {
        actions.iter().map(|a| a.module.as_str()).collect()
    }

    /// The catch-up after an engine restart (every module down at once):
    /// `after` orders repairs as `requires` does, and a chain goes one link
    /// at a time.
    #[test]
    fn a_repair_waits_for_the_repair_of_what_it_requires_or_comes_after() {
        let g = Graph::new(vec![
            edge("app", "db", Strength::After),
            edge("web", "app", Strength::Requires),
        ]);
        let all = vec![
            act("web", Act::Restart),
            act("app", Act::Retry),
            act("db", Act::Restart),
            act("other", Act::Restart),
        ];
        let none = BTreeSet::new();
        let (now, later) = put_off(Some(&g), all, &none);
        assert_eq!(names(&now), ["db", "other"]);
        assert_eq!(later, ["web", "app"]);

        // db's repair under way: app still waits; once it ended, app goes.
        let inflight: BTreeSet<String> = ["db".to_string()].into();
        let (now, later) = put_off(Some(&g), vec![act("app", Act::Restart)], &inflight);
        assert!(now.is_empty());
        assert_eq!(later, ["app"]);
        let (now, _) = put_off(Some(&g), vec![act("app", Act::Restart)], &none);
        assert_eq!(names(&now), ["app"]);
    }

    /// Only repairs wait: a hold, a release or a wait is said at once, and a
    /// module not being repaired orders nothing (order only).
    #[test]
    fn only_repairs_wait_and_only_for_repairs() {
        let g = Graph::new(vec![edge("app", "db", Strength::After)]);
        let all = vec![act("app", Act::Hold), act("db", Act::Restart)];
        let (now, later) = put_off(Some(&g), all, &BTreeSet::new());
        assert_eq!(names(&now), ["app", "db"]);
        assert!(later.is_empty());
        let all = vec![act("app", Act::Restart), act("db", Act::Wait)];
        let (now, _) = put_off(Some(&g), all, &BTreeSet::new());
        assert_eq!(names(&now), ["app", "db"]);
    }
}
