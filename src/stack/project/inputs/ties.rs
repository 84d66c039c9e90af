//! What a project's compose files use from other projects (containers, networks), read with the rest of its inputs, so the module graph can tie modules without a second parse.

use std::path::{Path, PathBuf};

use yaml_serde::Value;

use super::{Inputs, Reader, strings};
use crate::module::deps::{Tie, Ties, Use};
use crate::stack::project::known::Models;

/// [`ties_of`] when the cache's model of `dir` still holds (stats only,
/// nothing parsed); `None` when it must be read.
pub(crate) fn kept_ties_of(
    models: &Models,
    dir: &Path,
    project: &str,
) -> Option<(Ties, Vec<PathBuf>)> {
    models.kept(dir).map(|i| (i.ties(project), i.files.clone()))
}

/// What the stack in `dir`, run as `project`, creates and uses outside itself,
/// and every file that was read from (`include:` and `COMPOSE_FILE`'s in
/// subfolders too: what `hal watch` watches); `None` when its files cannot be
/// read (its start says what is wrong). Read through `models`, the cache of
/// what compose reads: an unchanged directory's files are stat'ed, not parsed.
pub(crate) fn ties_of(models: &Models, dir: &Path, project: &str) -> Option<(Ties, Vec<PathBuf>)> {
    models
        .inputs(dir)
        .ok()
        .map(|i| (i.ties(project), i.files.clone()))
}

impl Inputs {
    /// What the project, run as `project`, creates and uses outside itself.
    pub(crate) fn ties(&self, project: &str) -> Ties {
        let o = &self.outside;
        let mut containers = Vec::new();
        for (svc, name) in &o.services {
            match name {
                Some(n) => containers.push(n.clone()),
                None => {
                    containers.push(format!("{project}-{svc}-1"));
                    containers.push(format!("{project}_{svc}_1"));
                }
            }
        }
        let networks = o
            .networks
            .iter()
            .map(|(key, name)| name.clone().unwrap_or_else(|| format!("{project}_{key}")))
            .collect();
        Ties {
            containers,
            networks,
            uses: o.uses.clone(),
        }
    }
}

impl Reader {
    /// Notes what one document (the project's own, or one it includes) creates and uses outside itself.
    pub(super) fn outside(&mut self, doc: &Value, file: &Path) {
        if let Some(Value::Mapping(nets)) = doc.get("networks") {
            for (key, net) in nets {
                let Some(key) = key.as_str() else { continue };
                let name = net
                    .get("name")
                    .and_then(Value::as_str)
                    .map(|n| self.interpolate(n));
                match net.get("external") {
                    Some(Value::Bool(true)) => self.used(
                        Tie::Network,
                        name.unwrap_or_else(|| key.to_string()),
                        file,
                        format!("networks.{key}"),
                    ),
                    // compose v1's `external: {name: X}`.
                    Some(ext @ Value::Mapping(_)) => {
                        let old = ext
                            .get("name")
                            .and_then(Value::as_str)
                            .map(|n| self.interpolate(n));
                        self.used(
                            Tie::Network,
                            old.or(name).unwrap_or_else(|| key.to_string()),
                            file,
                            format!("networks.{key}"),
                        );
                    }
                    _ => {
                        self.outside.networks.insert(key.to_string(), name);
                    }
                }
            }
        }
        let Some(Value::Mapping(services)) = doc.get("services") else {
            return;
        };
        for (svc, s) in services {
            let Some(svc) = svc.as_str() else { continue };
            let named = s
                .get("container_name")
                .and_then(Value::as_str)
                .map(|n| self.interpolate(n));
            let slot = self.outside.services.entry(svc.to_string()).or_default();
            if named.is_some() {
                *slot = named;
            }
            // A container's network, pid or ipc namespace joined: gone with it.
            for key in ["network_mode", "pid", "ipc"] {
                if let Some(c) = s
                    .get(key)
                    .and_then(Value::as_str)
                    .and_then(|m| m.strip_prefix("container:"))
                {
                    let c = self.interpolate(c);
                    self.used(Tie::Namespace, c, file, format!("services.{svc}.{key}"));
                }
            }
            for spec in strings(s.get("volumes_from")) {
                if let Some(rest) = spec.strip_prefix("container:") {
                    let c = self.interpolate(rest.split(':').next().unwrap_or_default());
                    self.used(
                        Tie::Namespace,
                        c,
                        file,
                        format!("services.{svc}.volumes_from"),
                    );
                }
            }
            for link in strings(s.get("external_links")) {
                let c = self.interpolate(link.split(':').next().unwrap_or_default());
                self.used(Tie::Link, c, file, format!("services.{svc}.external_links"));
            }
        }
    }

    fn used(&mut self, tie: Tie, name: String, file: &Path, key: String) {
        if name.is_empty() {
            return;
        }
        self.outside.uses.push(Use {
            tie,
            name,
            file: file.to_path_buf(),
            key,
        });
    }
}
