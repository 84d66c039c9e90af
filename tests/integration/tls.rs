//! hal on an engine that speaks TLS (`DOCKER_HOST=tcp://…`, `DOCKER_TLS_VERIFY`, `DOCKER_CERT_PATH`): the stack lifecycle through a verifying TLS terminator in front of Docker's socket, read by the one decoder every transport shares (issue 33); Podman's turn is in `podman.rs`. TLS files hal cannot use are the user's to fix (exit 2), an engine whose certificate hal cannot check is unreachable (exit 6).

use crate::rig::tls::terminator;
use crate::rig::{self, containers, hal, stack};

#[test]
fn a_stack_starts_reads_and_stops_over_tls_on_docker() {
    let Some(mut rig) = rig::engine() else { return };
    let Some(tls) = terminator(&rig.dir, "/var/run/docker.sock") else {
        return;
    };
    tls.serve(&mut rig);
    let m = rig.stack(
        "tls",
        stack()
            .service("web")
            .keeps_running()
            .service("job")
            .runs("echo done")
            .restart("no"),
    );
    hal(&rig).args(["module", "start", &m]).code(0);
    let st = rig.status(&m).code(0);
    assert_eq!(st.state(), "active", "{st}");
    let table = hal(&rig).args(["status", &m]).code(0);
    assert!(table.stdout.contains(" active "), "{table}");
    // Doctor reaches it, and bollard's event stream over the same TLS delivers.
    let doc = hal(&rig).args(["--json", "doctor"]).run().json();
    let check = |name: &str| rig::check(&doc, name).clone();
    let docker = check("docker");
    assert_eq!(docker["ok"], true, "{doc:#}");
    assert!(
        docker["detail"].as_str().unwrap().contains(&tls.host),
        "{doc:#}"
    );
    assert_eq!(check("events")["ok"], true, "{doc:#}");
    hal(&rig).args(["module", "stop", &m]).code(0);
    assert!(containers(&m).is_empty(), "containers left after stop");
    let st = rig.status(&m).code(3);
    assert_eq!(st.state(), "inactive", "{st}");
}

#[test]
fn tls_files_hal_cannot_use_are_exit_2_and_an_unknown_engine_certificate_exit_6() {
    let Some(mut rig) = rig::engine() else { return };
    let Some(tls) = terminator(&rig.dir, "/var/run/docker.sock") else {
        return;
    };
    tls.serve(&mut rig);
    let m = rig.stack("tlsbad", stack().service("web").keeps_running());

    let empty = rig.dir.join("no-certs");
    std::fs::create_dir_all(&empty).unwrap();
    let bad = hal(&rig)
        .args(["module", "start", &m])
        .env("DOCKER_CERT_PATH", &empty)
        .code(2);
    let ca = empty.join("ca.pem").display().to_string();
    assert!(bad.stderr.contains(&ca), "{bad}");
    assert!(bad.stderr.contains("DOCKER_CERT_PATH"), "{bad}");
    let st = hal(&rig).env("DOCKER_CERT_PATH", &empty).status(&[&m]).run;
    assert_eq!(st.code, Some(2), "status too: {st}");

    // hal's own certificate as the CA: the engine's certificate is not one it trusts.
    let other = rig.dir.join("other-ca");
    std::fs::create_dir_all(&other).unwrap();
    for (from, to) in [
        ("cert.pem", "ca.pem"),
        ("cert.pem", "cert.pem"),
        ("key.pem", "key.pem"),
    ] {
        std::fs::copy(tls.certs.join(from), other.join(to)).unwrap();
    }
    let away = hal(&rig)
        .args(["module", "status", &m])
        .env("DOCKER_CERT_PATH", &other)
        .code(6);
    assert!(
        away.stderr.contains(&tls.host) && away.stderr.contains("TLS"),
        "{away}"
    );
    assert!(containers(&m).is_empty(), "started half-way");
}
