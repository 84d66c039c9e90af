//! An engine that speaks TLS: a socat terminator on 127.0.0.1 in front of an engine's socket, verifying both sides, with a CA, the engine's certificate (for IP 127.0.0.1) and hal's client certificate made by openssl for the test.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use super::{Rig, eventually, need};

/// A TLS terminator in its own process group (killing it also cuts the
/// connections its forks hold); stopped on drop.
pub(crate) struct Terminator {
    child: Child,
    /// `tcp://127.0.0.1:PORT`.
    pub host: String,
    /// hal's `DOCKER_CERT_PATH`: `ca.pem`, `cert.pem`, `key.pem`.
    pub certs: PathBuf,
}

/// A terminator in front of `socket` (a path), with its files under `dir`;
/// `None` (after `SKIP …`, a failure in CI) without socat or openssl.
#[track_caller]
pub(crate) fn terminator(dir: &Path, socket: &str) -> Option<Terminator> {
    need("socat", "-V")?;
    need("openssl", "version")?;
    let certs = dir.join("tls");
    std::fs::create_dir_all(&certs).unwrap();
    make_certificates(&certs);
    // A free port, asked of the kernel; socat takes it at once.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .unwrap()
        .port();
    let f = |name: &str| certs.join(name).display().to_string();
    // socat sets no session id context, so OpenSSL fails a resumed session when it
    // verifies the client ("session id context uninitialized"): it sends no TLS 1.3
    // tickets, and every connection is a full handshake (a real engine resumes).
    std::fs::write(
        certs.join("openssl.cnf"),
        "openssl_conf = conf\n[conf]\nssl_conf = ssl\n[ssl]\nsystem_default = sys\n[sys]\nNumTickets = 0\n",
    )
    .unwrap();
    let child = Command::new("socat")
        .env("OPENSSL_CONF", certs.join("openssl.cnf"))
        .arg(format!(
            "OPENSSL-LISTEN:{port},bind=127.0.0.1,reuseaddr,fork,cert={},key={},cafile={},verify=1",
            f("server-cert.pem"),
            f("server-key.pem"),
            f("ca.pem"),
        ))
        .arg(format!("UNIX-CONNECT:{socket}"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .expect("socat (scripts/provision.sh installs it)");
    let t = Terminator {
        child,
        host: format!("tcp://127.0.0.1:{port}"),
        certs,
    };
    // Up when the docker CLI itself gets through it, both certificates checked.
    let up = eventually(Duration::from_secs(15), || {
        Command::new("docker")
            .args(["-H", &t.host, "--tlsverify", "version"])
            .env("DOCKER_CERT_PATH", &t.certs)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    });
    assert!(up, "the TLS terminator at {} did not come up", t.host);
    Some(t)
}

impl Terminator {
    /// Points every hal run of `rig` (and so its compose children) at this engine, over TLS.
    pub(crate) fn serve(&self, rig: &mut Rig) {
        rig.env.retain(|(k, _)| k != "DOCKER_HOST");
        rig.env.push(("DOCKER_HOST".into(), self.host.clone()));
        rig.env.push(("DOCKER_TLS_VERIFY".into(), "1".into()));
        rig.env
            .push(("DOCKER_CERT_PATH".into(), self.certs.display().to_string()));
        rig.env_remove.push("DOCKER_CONTEXT".into());
        rig.env_remove.push("DOCKER_TLS".into());
    }
}

impl Drop for Terminator {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{}", self.child.id())])
            .status();
        let _ = self.child.wait();
    }
}

/// A CA, the engine's certificate for IP 127.0.0.1 and a client certificate
/// (P-256 keys: quick to make), in the docker CLI's file names for the client.
fn make_certificates(dir: &Path) {
    let openssl = |args: &[&str]| {
        let out = Command::new("openssl")
            .args(args)
            .current_dir(dir)
            .output()
            .expect("openssl (scripts/provision.sh installs it)");
        assert!(
            out.status.success(),
            "openssl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let ec = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
    ];
    let mut ca = vec!["req", "-x509", "-days", "2", "-subj", "/CN=hal test CA"];
    ca.extend(ec);
    ca.extend([
        "-keyout",
        "ca-key.pem",
        "-out",
        "ca.pem",
        "-addext",
        "basicConstraints=critical,CA:TRUE",
        "-addext",
        "keyUsage=critical,keyCertSign,cRLSign",
    ]);
    openssl(&ca);
    let leaf = |key: &str, cert: &str, cn: &str, ext: &str| {
        std::fs::write(dir.join("ext.cnf"), ext).unwrap();
        let mut req = vec!["req", "-subj", cn, "-keyout", key, "-out", "leaf.csr"];
        req.extend(ec);
        openssl(&req);
        openssl(&[
            "x509",
            "-req",
            "-in",
            "leaf.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca-key.pem",
            "-CAcreateserial",
            "-days",
            "2",
            "-extfile",
            "ext.cnf",
            "-out",
            cert,
        ]);
    };
    leaf(
        "server-key.pem",
        "server-cert.pem",
        "/CN=127.0.0.1",
        "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n",
    );
    leaf(
        "key.pem",
        "cert.pem",
        "/CN=hal",
        "extendedKeyUsage=clientAuth\n",
    );
}
