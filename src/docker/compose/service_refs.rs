//! A service's references to another service's container (`network_mode`, `ipc`, `pid` as `service:X`, `volumes_from`), put as container ids before the hash, as `up` does.
//!
//! Compose 2.26's `up` replaces each with the id of X's first container (by
//! name) and then hashes the service: the `config-hash` label of a service that
//! shares another's namespace names that container. Hashed from the files
//! alone, every such service would look changed at every plan.

use super::config_hash::{Ordered, Resolved, hash};

impl Resolved {
    /// Sets [`Resolved::hash`] to what `up` would write now, `id_of` giving
    /// the id of a service's first container by name. Where a service named has
    /// no container, the hash stays as the files give it: `up` creates that
    /// container first, and the hash then names a new id anyway.
    pub(crate) fn resolve_refs(&mut self, id_of: &dyn Fn(&str) -> Option<String>) {
        let mut doc = self.doc.clone();
        let Ordered::Object(fields) = &mut doc else {
            return;
        };
        let mut changed = false;
        for (key, value) in fields.iter_mut() {
            match (key.as_str(), value) {
                ("network_mode" | "ipc" | "pid", Ordered::Text(mode)) => {
                    let Some(service) = mode.strip_prefix("service:") else {
                        continue;
                    };
                    let Some(id) = id_of(service) else { return };
                    *mode = format!("container:{id}");
                    changed = true;
                }
                ("volumes_from", Ordered::List(items)) => {
                    for item in items.iter_mut() {
                        let Ordered::Text(from) = item else { continue };
                        let mut spec = from.split(':');
                        let first = spec.next().unwrap_or_default();
                        let now = if first == "container" {
                            spec.next().unwrap_or_default().to_string()
                        } else {
                            let Some(id) = id_of(first) else { return };
                            id
                        };
                        *from = now;
                        changed = true;
                    }
                }
                _ => {}
            }
        }
        if changed {
            self.hash = hash(&doc);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::config_hash::resolved;

    #[test]
    fn a_shared_namespace_is_hashed_with_the_container_id() {
        let text =
            r#"{"services":{"gw":{"image":"x"},"vpn":{"image":"x","network_mode":"service:gw"}}}"#;
        let mut all = resolved(text).unwrap_or_default();
        let as_written = all[1].hash.clone();
        all[1].resolve_refs(&|s| (s == "gw").then(|| "abc".to_string()));
        let by_id = r#"{"services":{"vpn":{"image":"x","network_mode":"container:abc"}}}"#;
        let want = resolved(by_id).unwrap_or_default()[0].hash.clone();
        assert_eq!(all[1].hash, want);
        assert_ne!(all[1].hash, as_written);
        // No container to name: as written.
        all[0].resolve_refs(&|_| None);
        let mut alone = resolved(text).unwrap_or_default();
        alone[1].resolve_refs(&|_| None);
        assert_eq!(alone[1].hash, as_written);
    }
}
