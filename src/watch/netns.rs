//! Which modules share another container's network namespace: when that container starts again, theirs are looked at too (`stack::netns` says they are stale).

use super::Watcher;

impl Watcher<'_> {
    /// Remembers which of the modules just read share another container's network namespace.
    pub(super) fn learn_netns(&mut self, statuses: &[crate::module::status::ModuleStatus]) {
        for s in statuses.iter().filter(|s| s.service.is_none()) {
            for users in self.netns_users.values_mut() {
                users.remove(&s.name);
            }
            for id in s.services.iter().filter_map(|c| c.netns_of.clone()) {
                self.netns_users
                    .entry(id)
                    .or_default()
                    .insert(s.name.clone());
            }
        }
        self.netns_users.retain(|_, users| !users.is_empty());
    }

    /// The modules with a container in the network namespace of container
    /// `id` of `module`, or tied to `module` by a namespace in the graph.
    pub(super) fn namespace_dependents(&self, module: &str, id: Option<&str>) -> Vec<String> {
        let mut out = self
            .node
            .graph()
            .map(|g| g.restart_with(module))
            .unwrap_or_default();
        let Some(id) = id.filter(|i| !i.is_empty()) else {
            return out;
        };
        out.extend(
            self.netns_users
                .iter()
                .filter(|(p, _)| p.starts_with(id) || id.starts_with(p.as_str()))
                .flat_map(|(_, users)| users.iter().cloned()),
        );
        out
    }
}
