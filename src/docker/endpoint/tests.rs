//! The engine hal resolves from flags, variables and docker contexts, checked against the docker CLI's order on made-up CLI config directories.

use std::collections::HashMap;

use super::*;

fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let m: HashMap<String, String> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    move |k| m.get(k).cloned()
}

fn cli_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("hal-endpoint-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn add_context(dir: &Path, name: &str, host: &str) -> PathBuf {
    let id = format!("{:x}", Sha256::digest(name.as_bytes()));
    let meta = dir.join("contexts/meta").join(&id);
    std::fs::create_dir_all(&meta).unwrap();
    std::fs::write(
        meta.join("meta.json"),
        format!(r#"{{"Name":"{name}","Metadata":{{}},"Endpoints":{{"docker":{{"Host":"{host}","SkipTLSVerify":false}}}}}}"#),
    )
    .unwrap();
    dir.join("contexts/tls").join(id).join("docker")
}

#[test]
fn flag_then_docker_host_then_context_then_current_context() {
    let d = cli_dir("order");
    add_context(&d, "other", "unix:///tmp/other.sock");
    add_context(&d, "cur", "tcp://10.0.0.1:2375");
    std::fs::write(d.join("config.json"), r#"{"currentContext":"cur"}"#).unwrap();
    let all = env(&[
        ("DOCKER_HOST", "unix:///h.sock"),
        ("DOCKER_CONTEXT", "other"),
    ]);
    let e = resolve_with(Some("unix:///f.sock"), &all, Some(&d)).unwrap();
    assert_eq!(
        (e.host.as_str(), e.source),
        ("unix:///f.sock", EndpointSource::Flag)
    );
    let e = resolve_with(None, &all, Some(&d)).unwrap();
    assert_eq!(
        (e.host.as_str(), e.source),
        ("unix:///h.sock", EndpointSource::DockerHost)
    );
    let e = resolve_with(None, &env(&[("DOCKER_CONTEXT", "other")]), Some(&d)).unwrap();
    assert_eq!(e.host, "unix:///tmp/other.sock");
    assert_eq!(e.source, EndpointSource::DockerContext("other".into()));
    let e = resolve_with(None, &env(&[]), Some(&d)).unwrap();
    assert_eq!(e.host, "tcp://10.0.0.1:2375");
    assert!(matches!(e.source, EndpointSource::CurrentContext(ref n, _) if n == "cur"));
    let e = resolve_with(None, &env(&[("DOCKER_CONTEXT", "default")]), Some(&d)).unwrap();
    assert_eq!(e.host, DEFAULT_HOST);
    std::fs::remove_file(d.join("config.json")).unwrap();
    let e = resolve_with(None, &env(&[]), Some(&d)).unwrap();
    assert_eq!(
        (e.host.as_str(), e.source),
        (DEFAULT_HOST, EndpointSource::Default)
    );
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn tls_from_the_variables_or_the_context() {
    let d = cli_dir("tls");
    let tls = add_context(&d, "secure", "tcp://10.0.0.2:2376");
    std::fs::create_dir_all(&tls).unwrap();
    std::fs::write(tls.join("ca.pem"), "x").unwrap();
    let e = resolve_with(None, &env(&[("DOCKER_CONTEXT", "secure")]), Some(&d)).unwrap();
    assert_eq!(e.tls.as_deref(), Some(tls.as_path()));
    let child = e.child_env();
    assert!(child.contains(&("DOCKER_TLS_VERIFY", Some("1".into()))));
    assert!(child.contains(&("DOCKER_CONTEXT", None)));
    let vars = env(&[
        ("DOCKER_HOST", "tcp://h:2376"),
        ("DOCKER_TLS_VERIFY", "1"),
        ("DOCKER_CERT_PATH", "/certs"),
    ]);
    let e = resolve_with(None, &vars, Some(&d)).unwrap();
    assert_eq!(e.tls, Some(PathBuf::from("/certs")));
    let e = resolve_with(None, &env(&[("DOCKER_HOST", "tcp://h:2375")]), Some(&d)).unwrap();
    assert_eq!(e.tls, None);
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn unknown_context_and_ssh_are_refused_with_exit_2() {
    let d = cli_dir("bad");
    let e = resolve_with(None, &env(&[("DOCKER_CONTEXT", "nope")]), Some(&d)).unwrap_err();
    assert!(e.to_string().contains("docker context \"nope\""), "{e}");
    assert_eq!(e.exit(), crate::error::Exit::Usage);
    let e = resolve_with(None, &env(&[("DOCKER_HOST", "ssh://me@far")]), Some(&d)).unwrap_err();
    assert!(e.to_string().contains("ssh://"), "{e}");
    assert_eq!(e.exit(), crate::error::Exit::Usage);
    std::fs::remove_dir_all(&d).unwrap();
}
