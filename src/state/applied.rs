//! The configuration each service was last started from (the applied record): per module, the hash compose wrote and the resolved service, secrets masked, so that `hal plan` can name the keys that changed since.
//!
//! Written at a start that went through compose, only when it differs from
//! the file there; read by `hal plan` alone (never on `status`'s path).

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::Context;
use serde::{Deserialize, Serialize};

use crate::docker::compose::config_hash::Resolved;
use crate::module::secret_names::{looks_secret, masked};
use crate::state::Store;

/// The folder of the state directory that holds one file per module.
const DIR: &str = "applied";

/// What was applied to a module's services.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Applied {
    pub services: BTreeMap<String, AppliedService>,
}

/// One service as its containers were made: the hash on them and the
/// configuration it is of (values of secret-looking keys masked).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct AppliedService {
    pub hash: String,
    pub config: serde_json::Value,
}

/// The record of `module` (`None`: none, or one that does not read).
pub(crate) fn read(state_dir: &Path, module: &str) -> Option<Applied> {
    let text = std::fs::read(state_dir.join(DIR).join(format!("{module}.json"))).ok()?;
    serde_json::from_slice(&text).ok()
}

/// Records `resolved` as applied to `module` (only `service`'s entry when
/// one service was started), writing only when the record changes.
pub(crate) fn keep(
    store: &Store,
    module: &str,
    resolved: &[Resolved],
    service: Option<&str>,
) -> anyhow::Result<()> {
    let old = read(store.dir(), module);
    let mut new = match service {
        Some(_) => old.clone().unwrap_or_default(),
        None => Applied::default(),
    };
    for r in resolved {
        if service.is_some_and(|s| s != r.service) {
            continue;
        }
        new.services.insert(
            r.service.clone(),
            AppliedService {
                hash: r.hash.clone(),
                config: mask(&r.config, false),
            },
        );
    }
    if old.as_ref() == Some(&new) {
        return Ok(());
    }
    store.folder(DIR)?;
    let text = serde_json::to_vec(&new).context("encode the applied record")?;
    store.replace(&format!("{DIR}/{module}.json"), &text)
}

/// A configuration with the string values under secret-looking keys masked.
pub(crate) fn mask(v: &serde_json::Value, secret: bool) -> serde_json::Value {
    use serde_json::Value;
    match v {
        Value::String(s) if secret => Value::String(masked(s)),
        Value::Object(fields) => Value::Object(
            fields
                .iter()
                .map(|(k, v)| (k.clone(), mask(v, secret || looks_secret(k))))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(|i| mask(i, secret)).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolved(service: &str, hash: &str, config: serde_json::Value) -> Resolved {
        Resolved {
            service: service.into(),
            hash: hash.into(),
            image: None,
            replicas: 1,
            depends_on: Vec::new(),
            config,
            external_networks: Vec::new(),
            doc: crate::docker::compose::config_hash::Ordered::Null,
        }
    }

    #[test]
    fn the_record_masks_secrets_and_is_written_only_when_it_changes() {
        let dir = std::env::temp_dir().join(format!("hal-applied-{}", std::process::id()));
        let store = Store::new(dir.clone());
        let config = serde_json::json!({"environment": {"DB_PASSWORD": "hunter2", "TZ": "UTC"}});
        keep(&store, "m", &[resolved("db", "h1", config.clone())], None).unwrap();
        let file = dir.join(DIR).join("m.json");
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(!text.contains("hunter2"), "{text}");
        assert!(text.contains("UTC"), "{text}");
        let before = std::fs::metadata(&file).unwrap().modified().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        keep(&store, "m", &[resolved("db", "h1", config)], None).unwrap();
        assert_eq!(
            std::fs::metadata(&file).unwrap().modified().unwrap(),
            before
        );
        let other = serde_json::json!({"command": ["x"]});
        keep(&store, "m", &[resolved("web", "h2", other)], Some("web")).unwrap();
        let rec = read(&dir, "m").unwrap();
        assert_eq!(rec.services.len(), 2);
        assert_eq!(rec.services["web"].hash, "h2");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
