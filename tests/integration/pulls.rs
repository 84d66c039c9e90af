//! End to end: pull policies against a real registry on 127.0.0.1:5000, and the cached-image fallback.

use std::time::Duration;

use crate::rig::registry::with_registry;
use crate::rig::{FIXTURE, Rig, containers, docker, eventually, hal, script, stack};

fn present(image: &str) -> bool {
    std::process::Command::new("docker")
        .args(["image", "inspect", image])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn stack_with_image(rig: &Rig, short: &str, image: &str) -> String {
    rig.stack(short, stack().service("app").image(image))
}

/// Pushes the fixture under a tag unique to this rig, then removes it locally.
fn pushed_only(rig: &Rig, repo: &str) -> String {
    let image = format!("127.0.0.1:5000/hal/{repo}:{}", rig.prefix);
    docker(&["tag", FIXTURE, &image]);
    let push = std::process::Command::new("docker")
        .args(["push", &image])
        .output()
        .unwrap();
    assert!(
        push.status.success(),
        "push {image}: {}",
        String::from_utf8_lossy(&push.stderr)
    );
    docker(&["rmi", &image]);
    assert!(!present(&image));
    image
}

struct Untag(Vec<String>);
impl Drop for Untag {
    fn drop(&mut self) {
        for i in &self.0 {
            docker(&["rmi", "-f", i]);
        }
    }
}

#[test]
fn always_pulls_from_the_registry() {
    let Some(rig) = with_registry() else { return };
    let image = pushed_only(&rig, "always");
    let _untag = Untag(vec![image.clone()]);
    let m = stack_with_image(&rig, "pulled", &image);
    let run = hal(&rig)
        .args(["module", "start", "--pull", "always", &m])
        .code(0);
    assert!(present(&image), "not pulled");
    assert!(!run.stderr.contains("pull failed"), "{run}");
}

#[test]
fn failed_pull_with_cached_image_starts_and_says_so() {
    let Some(rig) = with_registry() else { return };
    // Nothing listens on port 5999: every pull fails at once.
    let image = format!("127.0.0.1:5999/hal/cached:{}", rig.prefix);
    docker(&["tag", FIXTURE, &image]);
    let _untag = Untag(vec![image.clone()]);
    let m = stack_with_image(&rig, "cached", &image);
    let run = hal(&rig)
        .args(["module", "start", "--pull", "always", &m])
        .code(0);
    assert!(
        run.stderr.contains("hal: warning:")
            && run.stderr.contains("pull failed, running cached image"),
        "{run}"
    );
    let st = rig.status(&m).code(0);
    let reason = st["reason"].as_str().unwrap_or_default().to_string();
    assert!(
        reason.contains("pull failed, running cached image") && reason.contains(&image),
        "{reason}"
    );
    assert!(
        reason.contains("127.0.0.1:5999"),
        "the registry's error is missing: {reason}"
    );
}

#[test]
fn failed_pull_without_image_fails_naming_it() {
    let Some(rig) = with_registry() else { return };
    let image = format!("127.0.0.1:5999/hal/absent:{}", rig.prefix);
    let m = stack_with_image(&rig, "absent", &image);
    let run = hal(&rig)
        .args(["module", "start", "--pull", "always", &m])
        .code(1);
    assert!(
        run.stderr.contains(&format!(
            "image {image} (service app) is not present locally and could not be pulled"
        )),
        "{run}"
    );
    assert!(containers(&m).is_empty());
}

#[test]
fn missing_and_never() {
    let Some(rig) = with_registry() else { return };
    // missing + present: no pull at all (the registry address is dead, yet no warning).
    let cached = format!("127.0.0.1:5999/hal/missing:{}", rig.prefix);
    docker(&["tag", FIXTURE, &cached]);
    let pulled = pushed_only(&rig, "missing");
    let never = pushed_only(&rig, "never");
    let _untag = Untag(vec![cached.clone(), pulled.clone(), never.clone()]);

    rig.set_config("[defaults]\npull = \"missing\"\n");
    let m = stack_with_image(&rig, "cached", &cached);
    let run = hal(&rig).args(["module", "start", &m]).code(0);
    assert!(
        !run.stderr.contains("pull failed"),
        "missing must not pull a present image: {run}"
    );

    // missing + absent: pulled from the registry.
    let m = stack_with_image(&rig, "pulled", &pulled);
    hal(&rig).args(["module", "start", &m]).code(0);
    assert!(present(&pulled));

    // never + absent: nothing is pulled and the start fails.
    rig.set_config(&format!(
        "[defaults]\npull = \"missing\"\n[module.{}]\npull = \"never\"\n",
        rig.name("never")
    ));
    let m = stack_with_image(&rig, "never", &never);
    hal(&rig).args(["module", "start", &m]).code(1);
    assert!(!present(&never), "never must not pull");
}

#[test]
fn a_hanging_pull_is_bounded() {
    let Some(rig) = with_registry() else { return };
    // A registry that takes connections and never answers: a listening socket
    // nobody accepts on (the kernel completes the handshakes into its backlog).
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    rig.set_config("[defaults]\npull = \"always\"\npull_timeout = \"3s\"\n");
    let image = format!("127.0.0.1:{port}/hal/hang:{}", rig.prefix);
    docker(&["tag", FIXTURE, &image]);
    let _untag = Untag(vec![image.clone()]);
    let m = stack_with_image(&rig, "hang", &image);
    let run = hal(&rig)
        .args(["module", "start", &m])
        .within(Duration::from_secs(30))
        .code(0);
    assert!(run.stderr.contains("did not finish within 3s"), "{run}");
    assert!(run.took < Duration::from_secs(20), "{run}");
    drop(listener);
}

/// A registry of its own that wants a login (htpasswd `ana` / `s3cret`), on a free port.
struct LoginRegistry {
    addr: String,
    child: std::process::Child,
}

impl LoginRegistry {
    fn start(rig: &Rig) -> LoginRegistry {
        let dir = rig.dir.join("login-registry");
        std::fs::create_dir_all(dir.join("data")).unwrap();
        let hash = std::process::Command::new("htpasswd")
            .args(["-Bbn", "ana", "s3cret"])
            .output()
            .expect("htpasswd (apache2-utils; scripts/provision.sh installs it)");
        assert!(hash.status.success(), "htpasswd: {hash:?}");
        std::fs::write(dir.join("htpasswd"), &hash.stdout).unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let addr = format!("127.0.0.1:{port}");
        let config = format!(
            "version: 0.1\nlog:\n  level: warn\nstorage:\n  filesystem:\n    rootdirectory: {}\nhttp:\n  addr: {addr}\nauth:\n  htpasswd:\n    realm: hal-test\n    path: {}\n",
            dir.join("data").display(),
            dir.join("htpasswd").display()
        );
        std::fs::write(dir.join("config.yml"), config).unwrap();
        let child = std::process::Command::new("docker-registry")
            .arg("serve")
            .arg(dir.join("config.yml"))
            .stdout(std::process::Stdio::null())
            .stderr(
                std::fs::File::create(dir.join("log"))
                    .map_or(std::process::Stdio::null(), Into::into),
            )
            .spawn()
            .expect("docker-registry (scripts/provision.sh installs it)");
        let reg = LoginRegistry { addr, child };
        let url = format!("http://{}/v2/", reg.addr);
        let asks_for_login = || {
            std::process::Command::new("curl")
                .args(["-s", "-o", "/dev/null", "-w", "%{http_code}", &url])
                .output()
                .is_ok_and(|o| o.stdout == b"401")
        };
        assert!(
            eventually(Duration::from_secs(20), asks_for_login),
            "the login registry on {} did not come up",
            reg.addr
        );
        reg
    }
}

impl Drop for LoginRegistry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `docker --config DIR ARGS` (with `input` on stdin), which must succeed.
fn docker_in(config: &std::path::Path, args: &[&str], input: &str) {
    use std::io::Write;
    let mut child = std::process::Command::new("docker")
        .arg("--config")
        .arg(config)
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "docker {args:?}: {out:?}");
}

/// hal sends the credentials `docker login` stored (the CLI's config.json,
/// found through DOCKER_CONFIG as the CLI finds it); without them the
/// registry refuses the pull and the start fails naming the image.
#[test]
fn pulls_with_the_docker_login() {
    let Some(rig) = with_registry() else { return };
    let reg = LoginRegistry::start(&rig);
    let logged_in = rig.dir.join("docker-logged-in");
    let anonymous = rig.dir.join("docker-anonymous");
    std::fs::create_dir_all(&anonymous).unwrap();
    docker_in(
        &logged_in,
        &["login", "-u", "ana", "--password-stdin", &reg.addr],
        "s3cret",
    );
    let image = format!("{}/hal/login:{}", reg.addr, rig.prefix);
    docker(&["tag", FIXTURE, &image]);
    let _untag = Untag(vec![image.clone()]);
    docker_in(&logged_in, &["push", &image], "");
    docker(&["rmi", &image]);
    assert!(!present(&image));
    let m = stack_with_image(&rig, "login", &image);

    let run = hal(&rig)
        .args(["module", "start", "--pull", "always", &m])
        .env("DOCKER_CONFIG", &anonymous)
        .within(Duration::from_secs(120))
        .code(1);
    assert!(
        run.stderr.contains(&format!(
            "image {image} (service app) is not present locally and could not be pulled"
        )),
        "{run}"
    );
    assert!(!present(&image));

    let run = hal(&rig)
        .args(["module", "start", "--pull", "always", &m])
        .env("DOCKER_CONFIG", &logged_in)
        .within(Duration::from_secs(120))
        .code(0);
    assert!(present(&image), "{run}");
    let status = rig.status(&m);
    assert_eq!(status.state(), "active", "{status}");

    // A credsStore: hal runs `docker-credential-NAME get` with the server on stdin.
    docker(&["rmi", "-f", &image]);
    let helped = rig.dir.join("docker-helped");
    std::fs::create_dir_all(&helped).unwrap();
    std::fs::write(helped.join("config.json"), r#"{"credsStore":"haltest"}"#).unwrap();
    let bin = rig.dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    script(
        &bin,
        "docker-credential-haltest",
        &format!(
            "#!/bin/sh\nread -r server\n[ \"$server\" = {addr} ] || {{ echo 'credentials not found in native keychain'; exit 1; }}\nprintf '{{\"ServerURL\":\"%s\",\"Username\":\"ana\",\"Secret\":\"s3cret\"}}' \"$server\"\n",
            addr = reg.addr
        ),
    );
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let run = hal(&rig)
        .args(["module", "start", "--pull", "always", &m])
        .env("DOCKER_CONFIG", &helped)
        .env("PATH", &path)
        .within(Duration::from_secs(120))
        .code(0);
    assert!(present(&image), "the helper's login was not used: {run}");
}
