//! Which modules the supervisor watches: found again at every pass, and said at start-up.

use std::collections::BTreeSet;

use super::Watcher;
use crate::module::Module;
use crate::module::inventory::Inventory;
use crate::output::watch_log::WatchOwn;

impl Watcher<'_> {
    pub(super) fn started(&self) {
        let stacks = self.stack_names.len();
        let hosts = self.modules.len() - stacks;
        self.log.emit(WatchOwn::Started {
            modules: self.modules.len(),
            stacks,
            hosts,
            grace: self.grace,
            interval: self.interval,
            resync: self.resync,
        });
    }

    /// Finds the modules again: a stack directory added since is watched from now
    /// on, and the node (config, modules, graph) is read again if it may have
    /// changed (`reread.rs`). Returns the names that were not there before.
    pub(super) fn rediscover(&mut self, resync: bool) -> BTreeSet<String> {
        let inv = self.node.inventory_now(&self.node.config);
        let root_problem = inv.root_problem.clone();
        self.reread(inv, resync);
        let now = Watcher::watched(&self.node.inventory);
        let names =
            |ms: &[Module]| -> BTreeSet<String> { ms.iter().map(|m| m.name.clone()).collect() };
        let (old, new) = (names(&self.modules), names(&now));
        let added: BTreeSet<String> = new.difference(&old).cloned().collect();
        if old != new && self.passes > 0 {
            self.log.emit(WatchOwn::ModulesChanged {
                added: added.iter().cloned().collect(),
                gone: old.difference(&new).cloned().collect(),
            });
        }
        if root_problem != self.root_problem {
            if let Some(p) = &root_problem {
                self.log.emit(WatchOwn::Problem {
                    module: None,
                    why: p.clone(),
                });
            }
            self.root_problem = root_problem;
        }
        self.passes += 1;
        self.stack_names = Watcher::stack_names(&now);
        self.modules = now;
        added
    }
}

impl Watcher<'_> {
    /// Every module that could be supervised (invalid ones never are).
    pub(super) fn watched(inv: &Inventory) -> Vec<Module> {
        inv.modules
            .iter()
            .filter(|m| !m.is_invalid())
            .cloned()
            .collect()
    }

    /// The names of the stacks among `modules`.
    pub(super) fn stack_names(modules: &[Module]) -> BTreeSet<String> {
        modules
            .iter()
            .filter(|m| m.is_stack())
            .map(|m| m.name.clone())
            .collect()
    }
}
