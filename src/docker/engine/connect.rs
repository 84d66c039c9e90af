//! Reaching the engine: its ping (API version and which engine answers, never the slow `GET /version`) and what a failed connection means for the user.

use std::error::Error as StdError;
use std::io;

use bollard::{ClientVersion, Docker};

use super::model::EngineError;
use super::wire::Wire;
use crate::error::HalError;

/// How long hal waits for the engine to answer the first call.
pub(super) const CONNECT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// The engine behind the endpoint, as its ping names itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum EngineKind {
    Docker,
    Podman,
    /// It did not say (an engine hal does not know).
    Unknown,
}

impl EngineKind {
    /// Its name in messages (`docker: connected to …`).
    pub(crate) fn name(self) -> &'static str {
        match self {
            EngineKind::Docker => "docker",
            EngineKind::Podman => "podman",
            EngineKind::Unknown => "engine",
        }
    }

    /// The kind a ping's `Server` and `Libpod-Api-Version` headers name.
    pub(super) fn of(server: Option<&str>, libpod: Option<&str>) -> EngineKind {
        match server {
            _ if libpod.is_some() => EngineKind::Podman,
            Some(s) if s.starts_with("Libpod") => EngineKind::Podman,
            Some(s) if s.starts_with("Docker") => EngineKind::Docker,
            _ => EngineKind::Unknown,
        }
    }
}

/// The API version and engine kind a ping's headers state; no version when it
/// states none (then `GET /version` negotiates, as the docker CLI would).
pub(super) async fn ping_headers(
    wire: &Wire,
    endpoint: &str,
) -> Result<(Option<ClientVersion>, EngineKind), HalError> {
    let answer = wire
        .get("/_ping", CONNECT_TIMEOUT)
        .await
        .map_err(|e| unreachable(endpoint, &e))?;
    if answer.status != 200 {
        return Err(HalError::DockerUnreachable {
            endpoint: endpoint.to_string(),
            why: format!("its ping answered: {}", answer.refusal()),
        });
    }
    let kind = EngineKind::of(answer.header("server"), answer.header("libpod-api-version"));
    let version = answer.header("api-version").and_then(api_version);
    Ok((version, kind))
}

/// `1.41` as a client version, no newer than bollard's own.
pub(super) fn api_version(text: &str) -> Option<ClientVersion> {
    let (major, minor) = text.trim().split_once('.')?;
    let theirs = ClientVersion {
        major_version: major.parse().ok()?,
        minor_version: minor.parse().ok()?,
    };
    let ours = bollard::API_DEFAULT_VERSION;
    let older =
        (theirs.major_version, theirs.minor_version) < (ours.major_version, ours.minor_version);
    Some(if older { theirs } else { *ours })
}

/// Negotiates the version with `GET /version`, for an engine whose ping says nothing.
pub(super) async fn negotiate(client: Docker, endpoint: &str) -> Result<Docker, HalError> {
    match tokio::time::timeout(CONNECT_TIMEOUT, client.negotiate_version()).await {
        Ok(Ok(api)) => Ok(api),
        Ok(Err(e)) => Err(unreachable(endpoint, &e)),
        Err(_) => Err(HalError::DockerUnreachable {
            endpoint: endpoint.to_string(),
            why: format!("no answer within {}s", CONNECT_TIMEOUT.as_secs()),
        }),
    }
}

pub(super) fn io_kind(err: &(dyn StdError + 'static)) -> Option<io::ErrorKind> {
    first::<io::Error>(err).map(io::Error::kind)
}

/// The first error of type `E` in the chain from `err` down its sources.
fn first<'a, E: StdError + 'static>(err: &'a (dyn StdError + 'static)) -> Option<&'a E> {
    std::iter::successors(Some(err), |&e| e.source()).find_map(|e| e.downcast_ref::<E>())
}

/// A client error that is not the engine being away: an answer hal's client
/// could not read, or anything else, in the client's own words.
pub(super) fn raw(err: bollard::errors::Error) -> EngineError {
    use bollard::errors::Error as E;
    match err {
        // What came, cut short, rather than the decoder's words.
        E::JsonDataError { message, .. } => EngineError::Decode(anyhow::anyhow!(
            "the engine's answer could not be read: {}",
            received(message.as_bytes())
        )),
        e @ E::JsonSerdeError { .. } => EngineError::Decode(anyhow::Error::new(e)),
        other => EngineError::Other(anyhow::Error::new(other)),
    }
}

pub(super) fn is_connection_error(err: &bollard::errors::Error) -> bool {
    use bollard::errors::Error as E;
    match err {
        E::SocketNotFoundError(_) | E::RequestTimeoutError => true,
        E::HyperLegacyError { err } => {
            err.is_connect() || io_kind(err).is_some() || connection_lost(err)
        }
        E::HyperResponseError { err } => io_kind(err).is_some() || connection_lost(err),
        E::IOError { .. } => true,
        _ => false,
    }
}

/// The connection went away under a request: closed before its answer came
/// ("connection closed before message completed"), or the request dropped with it.
/// The engine (or the socket to it) is gone, as when a connect fails; an answer
/// hyper could not parse is not this (the engine is there, and said something).
fn connection_lost(err: &(dyn StdError + 'static)) -> bool {
    first::<hyper::Error>(err)
        .is_some_and(|h| h.is_incomplete_message() || h.is_closed() || h.is_canceled())
}

/// The message for an engine that cannot be reached, with the likely fix.
pub(super) fn unreachable(endpoint: &str, err: &(dyn StdError + 'static)) -> HalError {
    let socket = endpoint.strip_prefix("unix://").unwrap_or(endpoint);
    let why = match io_kind(err) {
        Some(io::ErrorKind::PermissionDenied) => {
            return HalError::DockerPermission {
                socket: socket.to_string(),
                user: crate::util::sys::user_name(),
            };
        }
        Some(io::ErrorKind::NotFound) => "no socket there (is the engine running?)".to_string(),
        Some(io::ErrorKind::ConnectionRefused) => {
            "connection refused (is the engine running?)".to_string()
        }
        _ if connection_lost(err) => "the connection closed before the engine answered".to_string(),
        _ => match err.downcast_ref::<bollard::errors::Error>() {
            Some(bollard::errors::Error::SocketNotFoundError(_)) => {
                "no socket there (is the engine running?)".to_string()
            }
            _ => crate::error::OneLine(&anyhow::anyhow!(err.to_string())).to_string(),
        },
    };
    HalError::DockerUnreachable {
        endpoint: endpoint.to_string(),
        why,
    }
}

/// The longest part of an unreadable answer an error quotes.
const QUOTED: usize = 80;

/// What an answer hal could not read said: its first characters, quoted, and
/// its length when they are not all of it.
pub(super) fn received(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    let text = text.trim();
    if text.is_empty() {
        return "it was empty".to_string();
    }
    let head: String = text.chars().take(QUOTED).collect();
    if head.len() == text.len() {
        format!("got {head:?}")
    } else {
        format!("got {head:?}… ({} bytes)", body.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An engine socket that reads a request and hangs up without an answer.
    fn hangs_up(dir: &std::path::Path) -> std::path::PathBuf {
        use std::io::Read;
        let sock = dir.join("hangs-up.sock");
        let listener = std::os::unix::net::UnixListener::bind(&sock).unwrap();
        std::thread::spawn(move || {
            for mut conn in listener.incoming().flatten() {
                let mut buf = [0u8; 4096];
                let _ = conn.read(&mut buf);
            }
        });
        sock
    }

    /// A request the connection closed under is the engine gone (exit 6), said in
    /// words, not hyper's chain ("client error (SendRequest): connection closed…").
    #[tokio::test]
    async fn a_connection_closed_before_the_answer_is_unreachable() {
        let dir = std::env::temp_dir().join(format!("hal-connect-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let sock = hangs_up(&dir);
        let endpoint = format!("unix://{}", sock.display());
        let docker = Docker::connect_with_unix(&endpoint, 5, bollard::API_DEFAULT_VERSION).unwrap();
        let err = docker.ping().await.unwrap_err();
        assert!(is_connection_error(&err), "{err:?}");
        let said = unreachable(&endpoint, &err);
        assert!(
            matches!(&said, HalError::DockerUnreachable { why, .. }
                if why == "the connection closed before the engine answered"),
            "{said}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
