//! The TLS client of hal's own GETs on a `DOCKER_TLS_VERIFY` endpoint: the engine's certificate checked against `ca.pem` (and the system's roots, as the docker CLI does), hal's `cert.pem`/`key.pem` shown when the engine asks.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use rustls::{ClientConfig, RootCertStore};

/// What hal needs to speak TLS to one engine: the name its certificate must
/// carry and the client's setup (built once per connection to the engine).
#[derive(Clone, Debug)]
pub(super) struct Tls {
    pub name: ServerName<'static>,
    pub config: Arc<ClientConfig>,
}

/// Why the TLS files cannot be used, naming the file where one is at fault.
#[derive(Debug, thiserror::Error)]
pub(super) enum TlsError {
    /// A file is missing, unreadable, or holds nothing hal can use.
    #[error("{}: {why}", file.display())]
    File { file: PathBuf, why: String },
    #[error("TLS: {0}")]
    Setup(rustls::Error),
    /// The client certificate and its key do not go together.
    #[error("{} and {}: {why}", cert.display(), key.display())]
    Pair {
        cert: PathBuf,
        key: PathBuf,
        why: rustls::Error,
    },
    #[error("{0:?} is not a host name TLS can check")]
    Name(String),
}

impl Tls {
    /// The setup for `address` (`host:port`) from the folder of `ca.pem`,
    /// `cert.pem` and `key.pem`; why not, naming the file, when one cannot be used.
    pub(super) fn of(address: &str, dir: &Path) -> Result<Tls, TlsError> {
        let name = server_name(address)?;
        let mut roots = RootCertStore::empty();
        // The system's roots too, as the docker CLI and bollard trust them; one it cannot read is skipped.
        roots.add_parsable_certificates(rustls_native_certs::load_native_certs().certs);
        let ca = dir.join("ca.pem");
        let cas = certificates(&ca)?;
        let (added, _) = roots.add_parsable_certificates(cas);
        if added == 0 {
            return Err(TlsError::File {
                file: ca,
                why: "no certificate hal can use".into(),
            });
        }
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(TlsError::Setup)?
            .with_root_certificates(roots);
        let cert = dir.join("cert.pem");
        let key = dir.join("key.pem");
        // Without a client certificate the engine decides (an engine that asks for one refuses).
        let config = if cert.exists() || key.exists() {
            let chain = certificates(&cert)?;
            let secret = PrivateKeyDer::from_pem_file(&key).map_err(|e| TlsError::File {
                file: key.clone(),
                why: pem_error(&e),
            })?;
            builder
                .with_client_auth_cert(chain, secret)
                .map_err(|why| TlsError::Pair { cert, key, why })?
        } else {
            builder.with_no_client_auth()
        };
        Ok(Tls {
            name,
            config: Arc::new(config),
        })
    }
}

/// Every certificate of a PEM file; none is an error.
fn certificates(file: &Path) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let at = |why: String| TlsError::File {
        file: file.to_path_buf(),
        why,
    };
    let all = CertificateDer::pem_file_iter(file)
        .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
        .map_err(|e| at(pem_error(&e)))?;
    if all.is_empty() {
        return Err(at("no certificate in it".into()));
    }
    Ok(all)
}

/// A PEM file's trouble in a person's words (an I/O error without `(os error 2)`).
fn pem_error(e: &rustls::pki_types::pem::Error) -> String {
    use rustls::pki_types::pem::Error as E;
    match e {
        E::Io(io) => crate::error::io_words(io),
        E::NoItemsFound => "nothing of the kind in it".to_string(),
        other => format!("not PEM hal can read ({other:?})"),
    }
}

/// The name the engine's certificate must carry: the host of `host:port`
/// (an IP address is checked against the certificate's IP addresses).
fn server_name(address: &str) -> Result<ServerName<'static>, TlsError> {
    let host = match address.rsplit_once(':') {
        Some((host, port)) if port.chars().all(|c| c.is_ascii_digit()) => host,
        _ => address,
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    ServerName::try_from(host.to_string()).map_err(|_| TlsError::Name(host.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_name_checked_is_the_host_of_the_address() {
        let name = |a: &str| {
            server_name(a)
                .map(|n| n.to_str().into_owned())
                .map_err(|e| e.to_string())
        };
        assert_eq!(name("127.0.0.1:2376").as_deref(), Ok("127.0.0.1"));
        assert_eq!(name("[::1]:2376").as_deref(), Ok("::1"));
        assert_eq!(name("engine.example:2376").as_deref(), Ok("engine.example"));
        assert_eq!(name("engine.example").as_deref(), Ok("engine.example"));
    }

    #[test]
    fn a_folder_without_ca_pem_is_named_in_the_error() {
        let dir = std::env::temp_dir().join(format!("hal-tls-unit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let err = Tls::of("127.0.0.1:2376", &dir).unwrap_err().to_string();
        assert!(err.contains("ca.pem"), "{err}");
        assert!(err.contains("no such file"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
