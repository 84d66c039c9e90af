//! Which Docker engine hal and its compose children talk to, resolved as the docker CLI resolves it, so the two never reach different engines.
//!
//! The order is the CLI's: `-H`, then `DOCKER_HOST`, then `DOCKER_CONTEXT`,
//! then `currentContext` in the CLI config (`$DOCKER_CONFIG/config.json`,
//! else `~/.docker/config.json`), else the local socket. A context is read
//! from `contexts/meta/<sha256 of its name>/meta.json` beside that config, its
//! TLS material from `contexts/tls/<same>/docker/`. TLS for `-H` and
//! `DOCKER_HOST` comes from `DOCKER_TLS_VERIFY` and `DOCKER_CERT_PATH`.

use std::fmt;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::error::HalError;

/// The local socket, the default context's endpoint.
pub(crate) const DEFAULT_HOST: &str = "unix:///var/run/docker.sock";

/// Where the endpoint came from, for `doctor` and messages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum EndpointSource {
    Flag,
    DockerHost,
    /// `DOCKER_CONTEXT=name`.
    DockerContext(String),
    /// The CLI config's `currentContext`, and that config file.
    CurrentContext(String, PathBuf),
    Default,
}

impl fmt::Display for EndpointSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EndpointSource::Flag => write!(f, "-H"),
            EndpointSource::DockerHost => write!(f, "DOCKER_HOST"),
            EndpointSource::DockerContext(n) => write!(f, "DOCKER_CONTEXT={n}"),
            EndpointSource::CurrentContext(n, cfg) => {
                write!(f, "context {n}, current in {}", cfg.display())
            }
            EndpointSource::Default => write!(f, "the default: no -H, DOCKER_HOST or context"),
        }
    }
}

/// An engine endpoint: its address, how to secure it, and where it came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Endpoint {
    /// `unix:///path` or `tcp://host:port`.
    pub host: String,
    /// The directory of `ca.pem`, `cert.pem` and `key.pem` when the engine
    /// speaks TLS (always verified).
    pub tls: Option<PathBuf>,
    pub source: EndpointSource,
}

impl Endpoint {
    /// Resolves the endpoint from `-H` and the process's environment.
    pub(crate) fn resolve(flag: Option<&str>) -> Result<Endpoint, HalError> {
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        let config_dir = var("DOCKER_CONFIG")
            .map(PathBuf::from)
            .or_else(|| var("HOME").map(|h| Path::new(&h).join(".docker")));
        resolve_with(flag, &var, config_dir.as_deref())
    }

    /// The variables a compose child gets so that it reaches this engine and no other.
    pub(crate) fn child_env(&self) -> Vec<(&'static str, Option<String>)> {
        let mut env = vec![
            ("DOCKER_HOST", Some(self.host.clone())),
            ("DOCKER_CONTEXT", None),
            ("DOCKER_TLS", None),
        ];
        match &self.tls {
            Some(dir) => {
                env.push(("DOCKER_TLS_VERIFY", Some("1".into())));
                env.push(("DOCKER_CERT_PATH", Some(dir.display().to_string())));
            }
            None => {
                env.push(("DOCKER_TLS_VERIFY", None));
                env.push(("DOCKER_CERT_PATH", None));
            }
        }
        env
    }
}

/// [`Endpoint::resolve`] with the environment and the CLI config directory given.
pub(crate) fn resolve_with(
    flag: Option<&str>,
    var: &dyn Fn(&str) -> Option<String>,
    config_dir: Option<&Path>,
) -> Result<Endpoint, HalError> {
    let from_env_tls = |host: String, source: EndpointSource| -> Result<Endpoint, HalError> {
        let tls = if var("DOCKER_TLS_VERIFY").is_some() {
            Some(
                var("DOCKER_CERT_PATH")
                    .map(PathBuf::from)
                    .or_else(|| config_dir.map(Path::to_path_buf))
                    .unwrap_or_else(|| PathBuf::from(".docker")),
            )
        } else if var("DOCKER_TLS").is_some() {
            return Err(HalError::Usage(format!(
                "DOCKER_TLS without DOCKER_TLS_VERIFY (TLS that checks no certificate) is not supported for {host} ({source}): set DOCKER_TLS_VERIFY=1 and DOCKER_CERT_PATH"
            )));
        } else {
            None
        };
        checked(Endpoint { host, tls, source })
    };
    if let Some(h) = flag.filter(|h| !h.is_empty()) {
        return from_env_tls(h.to_string(), EndpointSource::Flag);
    }
    if let Some(h) = var("DOCKER_HOST") {
        return from_env_tls(h, EndpointSource::DockerHost);
    }
    let (name, source) = if let Some(n) = var("DOCKER_CONTEXT") {
        (n.clone(), EndpointSource::DockerContext(n))
    } else if let Some((n, cfg)) = current_context(config_dir) {
        (n.clone(), EndpointSource::CurrentContext(n, cfg))
    } else {
        return from_env_tls(DEFAULT_HOST.to_string(), EndpointSource::Default);
    };
    if name == "default" {
        return from_env_tls(DEFAULT_HOST.to_string(), source);
    }
    context(&name, source, config_dir)
}

/// The CLI config's `currentContext`, when it names one.
fn current_context(config_dir: Option<&Path>) -> Option<(String, PathBuf)> {
    let file = config_dir?.join("config.json");
    let text = std::fs::read_to_string(&file).ok()?;
    let doc: serde_json::Value = serde_json::from_str(&text).ok()?;
    let name = doc.get("currentContext")?.as_str()?.trim();
    (!name.is_empty()).then(|| (name.to_string(), file))
}

/// A named context's docker endpoint, from its metadata and TLS material.
fn context(
    name: &str,
    source: EndpointSource,
    config_dir: Option<&Path>,
) -> Result<Endpoint, HalError> {
    let contexts = config_dir
        .unwrap_or_else(|| Path::new(".docker"))
        .join("contexts");
    let id = format!("{:x}", Sha256::digest(name.as_bytes()));
    let meta = contexts.join("meta").join(&id).join("meta.json");
    let unknown = |why: String| {
        HalError::Usage(format!(
            "docker context {name:?} ({source}) cannot be used: {why}; `docker context ls` lists the contexts, `docker context use default` goes back to the local engine"
        ))
    };
    let text = std::fs::read_to_string(&meta).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            unknown(format!("no such context (no {})", meta.display()))
        } else {
            unknown(format!("{}: {e}", meta.display()))
        }
    })?;
    let doc: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| unknown(format!("{} is not JSON: {e}", meta.display())))?;
    let docker = doc.get("Endpoints").and_then(|e| e.get("docker"));
    let host = docker
        .and_then(|d| d.get("Host"))
        .and_then(|h| h.as_str())
        .filter(|h| !h.is_empty())
        .ok_or_else(|| unknown(format!("{} has no docker endpoint", meta.display())))?;
    let tls_dir = contexts.join("tls").join(&id).join("docker");
    let tls = if tls_dir.join("ca.pem").is_file() || tls_dir.join("cert.pem").is_file() {
        if docker
            .and_then(|d| d.get("SkipTLSVerify"))
            .and_then(|s| s.as_bool())
            .unwrap_or(false)
        {
            return Err(unknown(
                "it skips TLS verification, which hal does not do".to_string(),
            ));
        }
        Some(tls_dir)
    } else {
        None
    };
    checked(Endpoint {
        host: host.to_string(),
        tls,
        source,
    })
}

/// Refuses, before anything runs, an endpoint hal cannot use the way compose would.
fn checked(e: Endpoint) -> Result<Endpoint, HalError> {
    let scheme_ok = e.host.starts_with("unix://")
        || e.host.starts_with("tcp://")
        || e.host.starts_with("http://")
        || e.host.starts_with("https://");
    if e.host.starts_with("ssh://") {
        return Err(HalError::Usage(format!(
            "{} ({}) is an ssh:// endpoint, which hal does not support: forward the remote socket (ssh -nNL /tmp/docker.sock:/var/run/docker.sock HOST) and use -H unix:///tmp/docker.sock, or run hal on that host",
            e.host, e.source
        )));
    }
    if !scheme_ok {
        return Err(HalError::Usage(format!(
            "{} ({}) is not an endpoint hal can use: use unix:///path or tcp://host:port",
            e.host, e.source
        )));
    }
    Ok(e)
}

#[cfg(test)]
mod tests;
