//! The fast path's baseline for a stack hal did not start (`hal adopt`): recorded only when compose would leave every container as it is.
//!
//! After a compose run, the runner remembers the files' digest and what
//! compose resolved, so that the next start of unchanged files skips compose
//! (`fastpath.rs`). A stack started by `hal-module@` or by hand has no such
//! record. Its containers may have been made from older files, so the record
//! is written only when compose's own hash of each service's configuration
//! (`config --hash`) is the one the container carries (the
//! `com.docker.compose.config-hash` label compose compares to decide on a
//! recreate). Otherwise the next start goes through compose, which applies
//! the change: hal never answers `active` for files it has not seen applied.

use std::collections::BTreeMap;

use crate::docker::compose::Flavor;
use crate::docker::engine::Listed;
use crate::docker::labels::CONFIG_HASH;
use crate::stack::env::Env;
use crate::stack::one_stack::Stack;

/// What adopting a stack left for its next start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Baseline {
    /// The containers are what compose would make: the next start is a no-op.
    Recorded,
    /// These services' containers differ from the files (or are missing):
    /// the next start goes through compose and recreates them.
    Changed(Vec<String>),
    /// Not recorded, for this reason: the next start goes through compose.
    Unknown(String),
}

/// Records the baseline of `stack` when its containers match its files.
pub(crate) async fn record_baseline(env: Env<'_>, stack: &Stack<'_>) -> anyhow::Result<Baseline> {
    let name = stack.name;
    let compose = env.stacks.compose().await?;
    if compose.flavor == Flavor::V1 {
        return Ok(Baseline::Unknown(
            "compose v1 has no `config --hash`".into(),
        ));
    }
    let digest = match crate::stack::project::digest::digest_of_module(stack.dir).await? {
        Ok(crate::stack::project::digest::Digest { key: Some(key), .. }) => key,
        Ok(_) => {
            return Ok(Baseline::Unknown(
                "a file compose reads is too large to fingerprint".into(),
            ));
        }
        Err(e) => return Ok(Baseline::Unknown(e.to_string())),
    };
    let engine = env.stacks.engine().await?;
    let containers = engine.compose_containers(Some(name)).await?;
    let project = stack.project();
    let endpoint = env.stacks.endpoint()?;
    let text = compose
        .run(&project, endpoint, &["config", "--hash", "*"])
        .await?;
    let changed = differing(&parse_hashes(&text), &containers);
    if !changed.is_empty() {
        return Ok(Baseline::Changed(changed));
    }
    let images = compose.images(&project, endpoint).await?;
    env.store
        .remember(name, Some(digest), images, &compose.version)
        .await?;
    Ok(Baseline::Recorded)
}

/// `config --hash '*'`: one `SERVICE HASH` line per service.
fn parse_hashes(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            Some((w.next()?.to_string(), w.next()?.to_string()))
        })
        .collect()
}

/// Services whose containers are missing or carry another hash, and
/// containers of services the files no longer have.
fn differing(hashes: &BTreeMap<String, String>, containers: &[Listed]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut seen: Vec<String> = Vec::new();
    for c in containers {
        let Some(who) = &c.identity else {
            continue;
        };
        if who.oneoff {
            continue;
        }
        let label = c.labels.get(CONFIG_HASH);
        if hashes.get(&who.service) != label && !out.contains(&who.service) {
            out.push(who.service.clone());
        }
        seen.push(who.service.clone());
    }
    for s in hashes.keys() {
        if !seen.contains(s) && !out.contains(s) {
            out.push(s.clone());
        }
    }
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    fn container(service: &str, hash: &str) -> Listed {
        let labels: HashMap<String, String> = [
            ("com.docker.compose.project", "p"),
            ("com.docker.compose.service", service),
            (CONFIG_HASH, hash),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        Listed {
            identity: crate::docker::labels::Identity::of(&labels),
            labels,
            ..Default::default()
        }
    }

    #[test]
    fn only_matching_hashes_make_a_baseline() {
        let hashes = parse_hashes("app 111\ndb 222\n");
        assert!(differing(&hashes, &[container("app", "111"), container("db", "222")]).is_empty());
        assert_eq!(
            differing(&hashes, &[container("app", "111"), container("db", "999")]),
            ["db"]
        );
        assert_eq!(differing(&hashes, &[container("app", "111")]), ["db"]);
        assert_eq!(
            differing(
                &hashes,
                &[
                    container("app", "111"),
                    container("db", "222"),
                    container("old", "3")
                ]
            ),
            ["old"]
        );
    }
}
