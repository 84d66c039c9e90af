//! hal's own GETs on the engine (ping, list, inspect), over its socket, TCP or TLS alike: bollard's typed calls refuse a whole answer for one word they do not know (Podman's `stopped`), so these answers are read into hal's tolerant types instead.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Empty};
use hyper::body::Incoming;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;

use super::tls::Tls;
use crate::docker::endpoint::Endpoint;
use crate::error::HalError;

/// Where hal's own requests go: the engine's socket, its TCP address, or its
/// TLS address (with the TLS setup).
#[derive(Clone, Debug)]
pub(super) enum Wire {
    Unix(PathBuf),
    Tcp(String),
    Tls(String, Arc<Tls>),
}

/// An engine's answer: its status, headers and whole body.
#[derive(Debug)]
pub(super) struct Answer {
    pub status: u16,
    pub headers: hyper::HeaderMap,
    pub body: Bytes,
}

impl Answer {
    /// A header's value, when it is there and readable.
    pub(super) fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// The engine's own words for a refusal (`{"message": …}`), or the status.
    pub(super) fn refusal(&self) -> String {
        #[derive(serde::Deserialize)]
        struct Message {
            message: String,
        }
        serde_json::from_slice::<Message>(&self.body)
            .map(|m| m.message)
            .unwrap_or_else(|_| format!("the engine answered HTTP {}", self.status))
    }
}

impl Wire {
    /// The wire for an endpoint: `unix://`; `tcp://` without TLS, and `http://`;
    /// `tcp://` or `https://` with the TLS files of `DOCKER_CERT_PATH` or the context.
    /// TLS files hal cannot use are a bad TLS setting (exit 2), named with the fix.
    pub(super) fn of(to: &Endpoint) -> Result<Wire, HalError> {
        let endpoint = to.host.as_str();
        if let Some(path) = endpoint.strip_prefix("unix://") {
            return Ok(Wire::Unix(PathBuf::from(path)));
        }
        let address = |scheme: &[&str]| {
            scheme
                .iter()
                .find_map(|s| endpoint.strip_prefix(s))
                .map(|rest| rest.trim_end_matches('/').to_string())
        };
        let wire = match &to.tls {
            None => address(&["tcp://", "http://"]).map(Wire::Tcp),
            Some(dir) => match address(&["tcp://", "https://"]) {
                Some(a) => {
                    let tls = Tls::of(&a, dir).map_err(|why| {
                        HalError::Usage(format!(
                            "the TLS files for {endpoint} ({}) cannot be used: {why}; DOCKER_CERT_PATH (or the context's TLS folder) must hold the engine's ca.pem and hal's cert.pem and key.pem",
                            to.source
                        ))
                    })?;
                    Some(Wire::Tls(a, Arc::new(tls)))
                }
                // `http://` says plain HTTP in so many words.
                None => address(&["http://"]).map(Wire::Tcp),
            },
        };
        wire.ok_or_else(|| HalError::DockerUnreachable {
            endpoint: endpoint.to_string(),
            why: "unsupported endpoint (use unix:///path or tcp://host:port)".into(),
        })
    }

    /// `GET path` (with its query), the whole answer read, within `limit`.
    pub(super) async fn get(&self, path: &str, limit: Duration) -> Result<Answer, WireError> {
        match tokio::time::timeout(limit, self.exchange(path)).await {
            Ok(answer) => answer,
            Err(_) => Err(WireError::TimedOut(limit)),
        }
    }

    async fn exchange(&self, path: &str) -> Result<Answer, WireError> {
        let response = match self {
            Wire::Unix(socket) => {
                let stream = tokio::net::UnixStream::connect(socket).await?;
                send(TokioIo::new(stream), path, "localhost").await?
            }
            Wire::Tcp(address) => {
                let stream = tokio::net::TcpStream::connect(address.as_str()).await?;
                send(TokioIo::new(stream), path, address).await?
            }
            Wire::Tls(address, tls) => {
                let stream = tokio::net::TcpStream::connect(address.as_str()).await?;
                let connector = tokio_rustls::TlsConnector::from(tls.config.clone());
                let stream = connector
                    .connect(tls.name.clone(), stream)
                    .await
                    .map_err(WireError::Tls)?;
                send(TokioIo::new(stream), path, address).await?
            }
        };
        let status = response.status().as_u16();
        let (parts, body) = response.into_parts();
        let body = body.collect().await?.to_bytes();
        Ok(Answer {
            status,
            headers: parts.headers,
            body,
        })
    }
}

async fn send<T>(io: TokioIo<T>, path: &str, host: &str) -> Result<Response<Incoming>, WireError>
where
    T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (mut sender, conn) = hyper::client::conn::http1::handshake(io).await?;
    tokio::spawn(async move {
        // The connection ends with the answer; its own error reaches the request.
        let _ = conn.await;
    });
    let request = Request::get(path)
        .header(hyper::header::HOST, host)
        .body(Empty::<Bytes>::new())
        .map_err(|e| WireError::Request(e.to_string()))?;
    Ok(sender.send_request(request).await?)
}

/// A request that got no answer.
#[derive(Debug, thiserror::Error)]
pub(super) enum WireError {
    // Not transparent: the io::Error itself is the source, so its kind (permission
    // denied, no socket) reaches the message with the fix.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("{0}")]
    Http(#[from] hyper::Error),
    /// The TLS handshake failed (the engine's certificate, or hal's, refused).
    #[error("TLS: {0}")]
    Tls(#[source] std::io::Error),
    #[error("bad request: {0}")]
    Request(String),
    #[error("no answer within {}s", .0.as_secs())]
    TimedOut(Duration),
}

/// A query value percent-encoded (everything but RFC 3986's unreserved characters).
pub(super) fn encode(value: &str) -> String {
    let mut out = String::with_capacity(value.len() * 2);
    for b in value.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(host: &str, tls: Option<&str>) -> Result<Wire, HalError> {
        Wire::of(&Endpoint {
            host: host.to_string(),
            tls: tls.map(PathBuf::from),
            source: crate::docker::endpoint::EndpointSource::DockerHost,
        })
    }

    #[test]
    fn every_endpoint_has_a_wire() {
        assert!(
            matches!(at("unix:///run/podman/podman.sock", None), Ok(Wire::Unix(p)) if p == std::path::Path::new("/run/podman/podman.sock"))
        );
        assert!(
            matches!(at("tcp://10.0.0.1:2375", None), Ok(Wire::Tcp(a)) if a == "10.0.0.1:2375")
        );
        assert!(matches!(
            at("https://10.0.0.1:2376", None),
            Err(HalError::DockerUnreachable { .. })
        ));
        // TLS files hal cannot read are the user's to fix: exit 2, naming the file.
        let bad = at("tcp://10.0.0.1:2376", Some("/nonexistent/hal-tls")).unwrap_err();
        assert!(
            matches!(&bad, HalError::Usage(m) if m.contains("/nonexistent/hal-tls/ca.pem")),
            "{bad}"
        );
        // TLS is for TCP: a socket is a socket.
        assert!(matches!(
            at("unix:///var/run/docker.sock", Some("/nonexistent")),
            Ok(Wire::Unix(_))
        ));
    }

    #[test]
    fn queries_are_percent_encoded() {
        assert_eq!(
            encode(r#"{"label":["a=b"]}"#),
            "%7B%22label%22%3A%5B%22a%3Db%22%5D%7D"
        );
    }
}
