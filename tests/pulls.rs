//! End to end: pull policies against a real registry on 127.0.0.1:5000, and the cached-image fallback.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{FIXTURE, Rig, docker, engine_or_skip};

fn registry_or_skip(test: &str) -> bool {
    if !engine_or_skip(test) {
        return false;
    }
    let up = std::process::Command::new("curl")
        .args(["-fsS", "-o", "/dev/null", "http://127.0.0.1:5000/v2/"])
        .status()
        .is_ok_and(|s| s.success());
    if !up {
        assert!(
            !common::in_ci(),
            "{test}: the registry on 127.0.0.1:5000 is not running (scripts/provision.sh starts it)"
        );
        common::skip(&format!("{test}: no registry on 127.0.0.1:5000"));
    }
    up
}

fn present(image: &str) -> bool {
    std::process::Command::new("docker")
        .args(["image", "inspect", image])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn stack_with_image(rig: &Rig, short: &str, image: &str) -> String {
    rig.stack(
        short,
        &format!("services:\n  app:\n    image: {image}\n    command: [\"sleep\", \"100000\"]\n    stop_signal: SIGKILL\n"),
    )
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
    if !registry_or_skip("always_pulls") {
        return;
    }
    let rig = Rig::new("always");
    let image = pushed_only(&rig, "always");
    let _untag = Untag(vec![image.clone()]);
    let m = stack_with_image(&rig, "pulled", &image);
    let run = rig.run(&["module", "start", "--pull", "always", &m]);
    run.expect(0);
    assert!(present(&image), "not pulled");
    assert!(!run.stderr.contains("pull failed"), "{run:?}");
}

#[test]
fn failed_pull_with_cached_image_starts_and_says_so() {
    if !registry_or_skip("failed_pull_cached") {
        return;
    }
    let rig = Rig::new("cached");
    // Nothing listens on port 5999: every pull fails at once.
    let image = format!("127.0.0.1:5999/hal/cached:{}", rig.prefix);
    docker(&["tag", FIXTURE, &image]);
    let _untag = Untag(vec![image.clone()]);
    let m = stack_with_image(&rig, "cached", &image);
    let run = rig.run(&["module", "start", "--pull", "always", &m]);
    run.expect(0);
    assert!(
        run.stderr.contains("hal: warning:")
            && run.stderr.contains("pull failed, running cached image"),
        "{run:?}"
    );
    let st = rig.run(&["--json", "status", &m]);
    st.expect(0);
    let reason = st.json()["modules"][0]["reason"]
        .as_str()
        .unwrap_or_default()
        .to_string();
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
    if !registry_or_skip("failed_pull_absent") {
        return;
    }
    let rig = Rig::new("absent");
    let image = format!("127.0.0.1:5999/hal/absent:{}", rig.prefix);
    let m = stack_with_image(&rig, "absent", &image);
    let run = rig.run(&["module", "start", "--pull", "always", &m]);
    run.expect(1);
    assert!(
        run.stderr.contains(&format!(
            "image {image} (service app) is not present locally and could not be pulled"
        )),
        "{run:?}"
    );
    assert!(common::containers(&m).is_empty());
}

#[test]
fn missing_and_never() {
    if !registry_or_skip("missing_and_never") {
        return;
    }
    let rig = Rig::new("policy");
    // missing + present: no pull at all (the registry address is dead, yet no warning).
    let cached = format!("127.0.0.1:5999/hal/missing:{}", rig.prefix);
    docker(&["tag", FIXTURE, &cached]);
    let pulled = pushed_only(&rig, "missing");
    let never = pushed_only(&rig, "never");
    let _untag = Untag(vec![cached.clone(), pulled.clone(), never.clone()]);

    rig.set_config("[defaults]\npull = \"missing\"\n");
    let m = stack_with_image(&rig, "cached", &cached);
    let run = rig.run(&["module", "start", &m]);
    run.expect(0);
    assert!(
        !run.stderr.contains("pull failed"),
        "missing must not pull a present image: {run:?}"
    );

    // missing + absent: pulled from the registry.
    let m = stack_with_image(&rig, "pulled", &pulled);
    rig.run(&["module", "start", &m]).expect(0);
    assert!(present(&pulled));

    // never + absent: nothing is pulled and the start fails.
    rig.set_config(&format!(
        "[defaults]\npull = \"missing\"\n[module.{}]\npull = \"never\"\n",
        rig.name("never")
    ));
    let m = stack_with_image(&rig, "never", &never);
    let run = rig.run(&["module", "start", &m]);
    run.expect(1);
    assert!(!present(&never), "never must not pull");
}

#[test]
fn a_hanging_pull_is_bounded() {
    if !registry_or_skip("a_hanging_pull_is_bounded") {
        return;
    }
    // A registry that accepts connections and never answers.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let held = std::thread::spawn(move || {
        let mut conns = Vec::new();
        listener.set_nonblocking(true).unwrap();
        let until = std::time::Instant::now() + std::time::Duration::from_secs(40);
        while std::time::Instant::now() < until {
            if let Ok((c, _)) = listener.accept() {
                conns.push(c);
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    });
    let rig = Rig::new("hang");
    rig.set_config("[defaults]\npull = \"always\"\npull_timeout = \"3s\"\n");
    let image = format!("127.0.0.1:{port}/hal/hang:{}", rig.prefix);
    docker(&["tag", FIXTURE, &image]);
    let _untag = Untag(vec![image.clone()]);
    let m = stack_with_image(&rig, "hang", &image);
    let run = rig.run_for(&["module", "start", &m], std::time::Duration::from_secs(30));
    run.expect(0);
    assert!(run.stderr.contains("did not finish within 3s"), "{run:?}");
    assert!(run.took < std::time::Duration::from_secs(20), "{run:?}");
    drop(held);
}
