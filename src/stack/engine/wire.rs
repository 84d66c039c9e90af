//! hal's own GETs on the engine's socket (ping, list, inspect): bollard's typed calls refuse a whole answer for one word they do not know (Podman's `stopped`), so these answers are read into hal's tolerant types instead.

use std::path::PathBuf;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Empty};
use hyper::body::Incoming;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;

/// Where hal's own requests go: the engine's socket or TCP address. TLS
/// endpoints have none (bollard's typed calls serve them).
#[derive(Clone, Debug)]
pub(super) enum Wire {
    Unix(PathBuf),
    Tcp(String),
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
    /// The wire for an endpoint hal can reach without TLS (`unix://`, `tcp://`, `http://`).
    pub(super) fn of(endpoint: &str) -> Option<Wire> {
        if let Some(path) = endpoint.strip_prefix("unix://") {
            return Some(Wire::Unix(PathBuf::from(path)));
        }
        let rest = endpoint
            .strip_prefix("tcp://")
            .or_else(|| endpoint.strip_prefix("http://"))?;
        Some(Wire::Tcp(rest.trim_end_matches('/').to_string()))
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

    #[test]
    fn endpoints_without_tls_have_a_wire() {
        assert!(
            matches!(Wire::of("unix:///run/podman/podman.sock"), Some(Wire::Unix(p)) if p == std::path::Path::new("/run/podman/podman.sock"))
        );
        assert!(
            matches!(Wire::of("tcp://10.0.0.1:2375"), Some(Wire::Tcp(a)) if a == "10.0.0.1:2375")
        );
        assert!(Wire::of("ssh://node").is_none());
    }

    #[test]
    fn queries_are_percent_encoded() {
        assert_eq!(
            encode(r#"{"label":["a=b"]}"#),
            "%7B%22label%22%3A%5B%22a%3Db%22%5D%7D"
        );
    }
}
