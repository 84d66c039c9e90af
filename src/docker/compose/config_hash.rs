//! Compose's `com.docker.compose.config-hash`, computed as `up` writes it: from `config --format json`, keys in compose's order.
//!
//! Compose 2.26 hashes each service's configuration as Go marshals it: the
//! service object `config --format json` prints, compact, keys in the order
//! printed, without `build`, `pull_policy`, `scale`, `profiles` and
//! `deploy.replicas`. serde_json's `Value` sorts keys, so the text is read
//! here into [`Ordered`], which keeps them, and written back as Go writes.

use std::fmt::Write as _;

use anyhow::bail;
use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use sha2::{Digest, Sha256};

use crate::docker::compose::{Compose, Flavor, Project, from_v2_json};
use crate::docker::endpoint::Endpoint;
use crate::module::ServiceImage;

/// One service as compose resolved it: what `up` compares and creates from.
#[derive(Clone, Debug)]
pub(crate) struct Resolved {
    pub service: String,
    /// The hash `up` would write on its containers now.
    pub hash: String,
    pub image: Option<String>,
    /// How many containers `up` keeps (`scale`, else `deploy.replicas`, else 1).
    pub replicas: u32,
    /// The services it names under `depends_on`.
    pub depends_on: Vec<String>,
    /// The service as `config --format json` resolved it (what the hash is of,
    /// and what `hal plan` compares key by key with the record of the last start).
    pub config: serde_json::Value,
    /// The engine names of the networks it joins that the files declare
    /// `external` (compose makes none of them; each must exist before `up`).
    pub external_networks: Vec<String>,
    /// The service as read, keys in compose's order (what [`hash`] is of).
    pub doc: Ordered,
}

impl Compose {
    /// `config --format json`'s text, which [`resolved`] reads (compose v2
    /// only), for a caller that keeps it while the files are unchanged.
    pub(crate) async fn resolved_text(
        &self,
        project: &Project<'_>,
        endpoint: &Endpoint,
    ) -> anyhow::Result<String> {
        if self.flavor == Flavor::V1 {
            bail!(
                "planning needs compose v2 (docker compose); {} is v1",
                self.display()
            );
        }
        self.config(project, endpoint).await
    }

    /// Which compose this is, as a cache of its answers keys them: its
    /// program and version.
    pub(crate) fn identity(&self) -> String {
        format!("{} {}", self.program.display(), self.version)
    }

    /// The project as compose resolves it, one document for both flavours:
    /// v2's `config --format json`, v1's `config` (YAML) read into the same
    /// value (v1 writes volumes in the short form: `SOURCE:TARGET[:MODE]`).
    pub(crate) async fn resolved_doc(
        &self,
        project: &Project<'_>,
        endpoint: &Endpoint,
    ) -> anyhow::Result<serde_json::Value> {
        let out = self.config(project, endpoint).await?;
        match self.flavor {
            Flavor::V2 => serde_json::from_str(&out).map_err(|e| {
                anyhow::anyhow!("compose config printed something that is not JSON: {e}")
            }),
            Flavor::V1 => yaml_serde::from_str(&out).map_err(|e| {
                anyhow::anyhow!("compose config printed something that is not YAML: {e}")
            }),
        }
    }

    /// The services and their images (as [`Compose::images`]) and, with
    /// compose v2, each service as resolved, from one `config` run.
    pub(crate) async fn model(
        &self,
        project: &Project<'_>,
        endpoint: &Endpoint,
    ) -> anyhow::Result<(Vec<ServiceImage>, Option<Vec<Resolved>>)> {
        if self.flavor == Flavor::V1 {
            return Ok((self.images(project, endpoint).await?, None));
        }
        let out = self.config(project, endpoint).await?;
        Ok((from_v2_json(&out)?, resolved(&out).ok()))
    }
}

/// A JSON value whose objects keep their keys in the order read.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Ordered {
    Null,
    Bool(bool),
    Number(serde_json::Number),
    Text(String),
    List(Vec<Ordered>),
    Object(Vec<(String, Ordered)>),
}

/// Every service of `config --format json`'s text, in the order printed.
pub(crate) fn resolved(text: &str) -> anyhow::Result<Vec<Resolved>> {
    let doc: Ordered = serde_json::from_str(text)
        .map_err(|e| anyhow::anyhow!("compose config printed something that is not JSON: {e}"))?;
    let Some(services) = doc.get("services").and_then(Ordered::entries) else {
        return Ok(Vec::new());
    };
    let external = external_networks(&doc);
    let mut out = Vec::with_capacity(services.len());
    for (name, service) in services {
        // `config` prints a `$` as `$$` (so that its output reads back the
        // same); `up` hashes the value itself.
        let mut service = service.clone();
        unescape(&mut service);
        let service = &service;
        let config: serde_json::Value = serde_json::from_str(&go_json(service))?;
        let image = config
            .get("image")
            .and_then(|i| i.as_str())
            .map(str::to_string);
        let n = |v: Option<&serde_json::Value>| v.and_then(serde_json::Value::as_u64);
        let replicas = n(config.get("scale"))
            .or_else(|| n(config.get("deploy").and_then(|d| d.get("replicas"))))
            .map_or(1, |n| u32::try_from(n).unwrap_or(u32::MAX));
        let depends_on = config
            .get("depends_on")
            .and_then(|d| d.as_object())
            .map(|d| d.keys().cloned().collect())
            .unwrap_or_default();
        let joins: Vec<String> = match config.get("networks").and_then(|n| n.as_object()) {
            Some(n) => n.keys().cloned().collect(),
            None if config.get("network_mode").is_some() => Vec::new(),
            None => vec!["default".to_string()],
        };
        let external_networks = joins
            .iter()
            .filter_map(|k| external.iter().find(|(key, _)| key == k))
            .map(|(_, name)| name.clone())
            .collect();
        out.push(Resolved {
            service: name.clone(),
            hash: hash(service),
            image,
            replicas,
            depends_on,
            config,
            external_networks,
            doc: service.clone(),
        });
    }
    Ok(out)
}

/// The networks the files declare `external`: each key, and the engine name
/// (`name`, which `config` always prints, else the key).
fn external_networks(doc: &Ordered) -> Vec<(String, String)> {
    let Some(networks) = doc.get("networks").and_then(Ordered::entries) else {
        return Vec::new();
    };
    networks
        .iter()
        .filter(|(_, n)| matches!(n.get("external"), Some(Ordered::Bool(true))))
        .map(|(key, n)| {
            let name = match n.get("name") {
                Some(Ordered::Text(name)) => name.clone(),
                _ => key.clone(),
            };
            (key.clone(), name)
        })
        .collect()
}

/// Every string value as compose holds it: `config`'s `$$` is one `$`.
fn unescape(v: &mut Ordered) {
    match v {
        Ordered::Text(s) if s.contains("$$") => *s = s.replace("$$", "$"),
        Ordered::List(items) => items.iter_mut().for_each(unescape),
        Ordered::Object(fields) => fields.iter_mut().for_each(|(_, v)| unescape(v)),
        _ => {}
    }
}

/// The hash `up` writes for one service object.
pub(crate) fn hash(service: &Ordered) -> String {
    let mut kept = service.clone();
    if let Ordered::Object(fields) = &mut kept {
        fields
            .retain(|(k, _)| !matches!(k.as_str(), "build" | "pull_policy" | "scale" | "profiles"));
        for (k, v) in fields.iter_mut() {
            if k == "deploy"
                && let Ordered::Object(deploy) = v
            {
                deploy.retain(|(k, _)| k != "replicas");
            }
        }
    }
    let digest = Sha256::digest(go_json(&kept).as_bytes());
    digest.iter().fold(String::with_capacity(64), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

impl Ordered {
    fn get(&self, key: &str) -> Option<&Ordered> {
        self.entries()?
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v)
    }

    fn entries(&self) -> Option<&[(String, Ordered)]> {
        match self {
            Ordered::Object(fields) => Some(fields),
            _ => None,
        }
    }
}

/// Compact JSON as Go's `encoding/json` writes it (`<`, `>`, `&`, U+2028 and
/// U+2029 escaped; other non-ASCII as UTF-8).
pub(crate) fn go_json(v: &Ordered) -> String {
    let mut out = String::new();
    write_go(v, &mut out);
    out
}

fn write_go(v: &Ordered, out: &mut String) {
    match v {
        Ordered::Null => out.push_str("null"),
        Ordered::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Ordered::Number(n) => out.push_str(&n.to_string()),
        Ordered::Text(s) => write_text(s, out),
        Ordered::List(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_go(item, out);
            }
            out.push(']');
        }
        Ordered::Object(fields) => {
            out.push('{');
            for (i, (k, item)) in fields.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_text(k, out);
                out.push(':');
                write_go(item, out);
            }
            out.push('}');
        }
    }
}

fn write_text(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c if u32::from(c) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

impl<'de> Deserialize<'de> for Ordered {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Ordered, D::Error> {
        d.deserialize_any(OrderedVisitor)
    }
}

struct OrderedVisitor;

impl<'de> Visitor<'de> for OrderedVisitor {
    type Value = Ordered;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("JSON")
    }
    fn visit_unit<E>(self) -> Result<Ordered, E> {
        Ok(Ordered::Null)
    }
    fn visit_bool<E>(self, b: bool) -> Result<Ordered, E> {
        Ok(Ordered::Bool(b))
    }
    fn visit_i64<E>(self, n: i64) -> Result<Ordered, E> {
        Ok(Ordered::Number(n.into()))
    }
    fn visit_u64<E>(self, n: u64) -> Result<Ordered, E> {
        Ok(Ordered::Number(n.into()))
    }
    fn visit_f64<E: serde::de::Error>(self, n: f64) -> Result<Ordered, E> {
        serde_json::Number::from_f64(n)
            .map(Ordered::Number)
            .ok_or_else(|| E::custom("a number JSON cannot hold"))
    }
    fn visit_str<E>(self, s: &str) -> Result<Ordered, E> {
        Ok(Ordered::Text(s.to_string()))
    }
    fn visit_string<E>(self, s: String) -> Result<Ordered, E> {
        Ok(Ordered::Text(s))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Ordered, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Ordered::List(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Ordered, A::Error> {
        let mut fields = Vec::new();
        while let Some((k, v)) = map.next_entry::<String, Ordered>()? {
            fields.push((k, v));
        }
        Ok(Ordered::Object(fields))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_keep_their_order_and_go_escapes() {
        let v: Ordered = serde_json::from_str(r#"{"b":1,"a":"<x&y>","c":[true,null]}"#).unwrap();
        assert_eq!(
            go_json(&v),
            r#"{"b":1,"a":"\u003cx\u0026y\u003e","c":[true,null]}"#
        );
    }

    #[test]
    fn a_dollar_is_hashed_as_up_holds_it() {
        // Checked against compose 2.26's label for `command: ["sh", "-c", "echo $$HOME; sleep 100000"]`.
        let text = r#"{"services":{"app":{"command":["sh","-c","echo $$HOME; sleep 100000"],"entrypoint":null,"image":"hal-fixture:latest","networks":{"default":null}}}}"#;
        let r = resolved(text).unwrap();
        assert_eq!(
            r[0].hash,
            "495340098ce27eca314d78b3595c79b5c8b56a05516aabd8a4f2c2a674eac8df"
        );
        assert_eq!(r[0].config["command"][2], "echo $HOME; sleep 100000");
    }

    #[test]
    fn replicas_and_build_do_not_change_the_hash() {
        let a: Ordered = serde_json::from_str(r#"{"image":"x","deploy":{"replicas":2}}"#).unwrap();
        let b: Ordered =
            serde_json::from_str(r#"{"build":{"context":"."},"image":"x","deploy":{}}"#).unwrap();
        assert_eq!(hash(&a), hash(&b));
    }

    #[test]
    fn a_service_joins_the_external_networks_by_their_engine_names() {
        let text = r#"{"networks":{"default":{"name":"p_default"},"ext":{"name":"shared","external":true}},"services":{"a":{"networks":{"ext":null,"default":null}},"b":{"image":"x"},"c":{"network_mode":"host"}}}"#;
        let r = resolved(text).unwrap();
        assert_eq!(r[0].external_networks, ["shared"]);
        assert!(r[1].external_networks.is_empty() && r[2].external_networks.is_empty());
    }
}
