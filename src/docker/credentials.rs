//! Registry credentials from the Docker CLI's config (what `docker login` wrote), which the engine client does not read.
//!
//! hal pulls through the Engine API, so it must send what `docker pull` would:
//! the CLI's `credHelpers` entry for the registry, else its `credsStore`, else
//! the `auths` entry of `$DOCKER_CONFIG/config.json` (`~/.docker/config.json`).
//! No config, or no entry for the registry, is an anonymous pull.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use base64::Engine as _;
use serde::Deserialize;
use tokio::io::AsyncWriteExt;

/// Docker Hub's key in `auths`, and the server a helper is asked about for it.
const HUB: &str = "https://index.docker.io/v1/";
/// A credential helper answers at once unless it waits for a keyring prompt.
const HELPER_TIMEOUT: Duration = Duration::from_secs(10);

/// What a pull sends to the registry: a user and password, or an identity token.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct RegistryAuth {
    pub username: Option<String>,
    pub password: Option<String>,
    pub identitytoken: Option<String>,
    pub serveraddress: Option<String>,
}

/// The parts of the CLI's config.json that hold credentials (the rest is ignored).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct CliConfig {
    #[serde(default)]
    auths: BTreeMap<String, AuthEntry>,
    creds_store: Option<String>,
    #[serde(default)]
    cred_helpers: BTreeMap<String, String>,
}

#[derive(Debug, Default, Deserialize)]
struct AuthEntry {
    /// base64 of `user:password`.
    auth: Option<String>,
    username: Option<String>,
    password: Option<String>,
    identitytoken: Option<String>,
}

/// What a credential helper's `get` prints.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
struct HelperAnswer {
    username: String,
    secret: String,
}

/// The registry an image is pulled from, as `docker login` names it
/// (`docker.io` for Docker Hub).
pub(crate) fn registry_of(image: &str) -> &str {
    match image.split_once('/') {
        Some((first, _)) if first.contains(['.', ':']) || first == "localhost" => first,
        _ => "docker.io",
    }
}

fn is_hub(host: &str) -> bool {
    matches!(
        host,
        "docker.io" | "index.docker.io" | "registry-1.docker.io"
    )
}

/// `https://host/v1/`, `http://host`, `host` → `host`.
fn host_of(key: &str) -> &str {
    let rest = key
        .strip_prefix("https://")
        .or_else(|| key.strip_prefix("http://"))
        .unwrap_or(key);
    rest.split('/').next().unwrap_or(rest)
}

/// Where the Docker CLI keeps its config.
pub(crate) fn config_path() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("DOCKER_CONFIG").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir).join("config.json"));
    }
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(|h| PathBuf::from(h).join(".docker").join("config.json"))
}

/// The credentials `docker pull IMAGE` would use; `None` for an anonymous pull.
pub(crate) async fn for_image(image: &str) -> anyhow::Result<Option<RegistryAuth>> {
    let Some(path) = config_path() else {
        return Ok(None);
    };
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).with_context(|| format!("read {}", path.display())),
    };
    let config: CliConfig = serde_json::from_str(&text)
        .with_context(|| format!("{}: not a Docker CLI config", path.display()))?;
    let registry = registry_of(image);
    let server = if is_hub(registry) { HUB } else { registry };
    let helper = config
        .cred_helpers
        .get(registry)
        .or(config.creds_store.as_ref());
    match helper {
        Some(helper) => from_helper(helper, server).await,
        None => from_auths(&config.auths, registry, server)
            .with_context(|| format!("{}: the entry for {registry}", path.display())),
    }
}

/// The `auths` entry for `registry`: the exact key first, then any key naming the same host.
fn from_auths(
    auths: &BTreeMap<String, AuthEntry>,
    registry: &str,
    server: &str,
) -> anyhow::Result<Option<RegistryAuth>> {
    let same = |key: &str| {
        let host = host_of(key);
        host == registry || (is_hub(registry) && is_hub(host))
    };
    let entry = auths
        .get(server)
        .or_else(|| auths.get(registry))
        .or_else(|| auths.iter().find(|(k, _)| same(k)).map(|(_, v)| v));
    let Some(entry) = entry else {
        return Ok(None);
    };
    let (mut username, mut password) = (entry.username.clone(), entry.password.clone());
    if let Some(auth) = entry.auth.as_deref().filter(|a| !a.trim().is_empty()) {
        let (u, p) = decode_auth(auth)?;
        username = Some(u);
        password = Some(p);
    }
    if username.is_none() && entry.identitytoken.is_none() {
        // `{}`: the CLI's marker that a credsStore holds it, or a logout.
        return Ok(None);
    }
    Ok(Some(RegistryAuth {
        username,
        password,
        identitytoken: entry.identitytoken.clone(),
        serveraddress: Some(server.to_string()),
    }))
}

/// `auth` is base64 of `user:password`. The secret never appears in an error.
fn decode_auth(auth: &str) -> anyhow::Result<(String, String)> {
    let raw = base64::engine::general_purpose::STANDARD
        .decode(auth.trim())
        .map_err(|_| anyhow::anyhow!("`auth` is not base64"))?;
    let text = String::from_utf8(raw).map_err(|_| anyhow::anyhow!("`auth` is not UTF-8"))?;
    let (user, password) = text
        .split_once(':')
        .ok_or_else(|| anyhow::anyhow!("`auth` is not user:password"))?;
    Ok((user.to_string(), password.to_string()))
}

/// `docker-credential-HELPER get` with the server on stdin. "Not found" is an
/// anonymous pull, as for the Docker CLI.
async fn from_helper(helper: &str, server: &str) -> anyhow::Result<Option<RegistryAuth>> {
    // A name, found on PATH: never a path of its own.
    if helper.is_empty() || helper.contains('/') {
        anyhow::bail!("credential helper {helper:?} is not a helper name");
    }
    let program = format!("docker-credential-{helper}");
    let mut child = tokio::process::Command::new(&program)
        .arg("get")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .with_context(|| {
            format!("run {program} (the credential helper the Docker CLI config names)")
        })?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin
            .write_all(server.as_bytes())
            .await
            .with_context(|| format!("write to {program}"))?;
    }
    let out = tokio::time::timeout(HELPER_TIMEOUT, child.wait_with_output())
        .await
        .map_err(|_| {
            anyhow::anyhow!(
                "{program} get did not answer within {}",
                crate::util::duration::format(HELPER_TIMEOUT)
            )
        })?
        .with_context(|| format!("run {program}"))?;
    if !out.status.success() {
        let said = String::from_utf8_lossy(&out.stdout).to_string()
            + &String::from_utf8_lossy(&out.stderr);
        if said.to_lowercase().contains("credentials not found") {
            return Ok(None);
        }
        anyhow::bail!("{program} get failed ({}): {}", out.status, said.trim());
    }
    let answer: HelperAnswer = serde_json::from_slice(&out.stdout)
        .with_context(|| format!("{program} get: not the helper protocol's JSON"))?;
    Ok(Some(from_helper_answer(answer, server)))
}

fn from_helper_answer(a: HelperAnswer, server: &str) -> RegistryAuth {
    let token = a.username == "<token>";
    RegistryAuth {
        username: (!token).then(|| a.username.clone()),
        password: (!token).then(|| a.secret.clone()),
        identitytoken: token.then_some(a.secret),
        serveraddress: Some(server.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registries_are_named_as_docker_login_names_them() {
        assert_eq!(registry_of("busybox"), "docker.io");
        assert_eq!(registry_of("library/busybox:1"), "docker.io");
        assert_eq!(registry_of("ghcr.io/o/i:v1"), "ghcr.io");
        assert_eq!(registry_of("127.0.0.1:5000/hal/fixture"), "127.0.0.1:5000");
        assert_eq!(registry_of("localhost/x"), "localhost");
    }

    fn auths(json: &str) -> BTreeMap<String, AuthEntry> {
        serde_json::from_str::<CliConfig>(json).unwrap().auths
    }

    #[test]
    fn auths_entries_are_found_by_host_and_decoded() {
        // base64("ana:s3cr:t")
        let a = auths(
            r#"{"auths":{"https://r.example:5001/v2/":{"auth":"YW5hOnMzY3I6dA=="}},"other":1}"#,
        );
        let c = from_auths(&a, "r.example:5001", "r.example:5001")
            .unwrap()
            .unwrap();
        assert_eq!(c.username.as_deref(), Some("ana"));
        assert_eq!(c.password.as_deref(), Some("s3cr:t"));
        assert_eq!(c.serveraddress.as_deref(), Some("r.example:5001"));
        assert!(
            from_auths(&a, "elsewhere.example", "elsewhere.example")
                .unwrap()
                .is_none()
        );
    }

    #[test]
    fn docker_hub_has_many_names() {
        let a = auths(r#"{"auths":{"https://index.docker.io/v1/":{"auth":"dTpw"}}}"#);
        let c = from_auths(&a, "docker.io", HUB).unwrap().unwrap();
        assert_eq!(c.username.as_deref(), Some("u"));
        let a = auths(r#"{"auths":{"docker.io":{"identitytoken":"tok"}}}"#);
        let c = from_auths(&a, "docker.io", HUB).unwrap().unwrap();
        assert_eq!(c.identitytoken.as_deref(), Some("tok"));
        assert!(c.username.is_none());
    }

    #[test]
    fn empty_markers_are_anonymous_and_bad_auth_names_no_secret() {
        let a = auths(r#"{"auths":{"r.example":{}}}"#);
        assert!(from_auths(&a, "r.example", "r.example").unwrap().is_none());
        let a = auths(r#"{"auths":{"r.example":{"auth":"bm9jb2xvbg=="}}}"#);
        let e = from_auths(&a, "r.example", "r.example").unwrap_err();
        assert_eq!(e.to_string(), "`auth` is not user:password");
        let a = auths(r#"{"auths":{"r.example":{"auth":"***"}}}"#);
        assert!(from_auths(&a, "r.example", "r.example").is_err());
    }

    #[test]
    fn helper_tokens_are_identity_tokens() {
        let a = HelperAnswer {
            username: "<token>".into(),
            secret: "t".into(),
        };
        let c = from_helper_answer(a, HUB);
        assert_eq!(c.identitytoken.as_deref(), Some("t"));
        assert!(c.username.is_none() && c.password.is_none());
    }
}
