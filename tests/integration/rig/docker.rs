//! The docker CLI, for what a test checks behind hal's back and for cleanup, on the rig's engine (Docker, or Podman's socket).

use std::cell::RefCell;
use std::process::{Command, Stdio};

thread_local! {
    /// The engine this test's thread talks to (`DOCKER_HOST`), when not the default one:
    /// set by `rig::podman()` for the rig's life, so the rig's own CLI calls and
    /// cleanup reach the same engine as hal and its compose child.
    static HOST: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Points this thread's docker CLI calls at `host` (`None`: the default engine).
pub(crate) fn use_host(host: Option<String>) {
    HOST.with(|h| *h.borrow_mut() = host);
}

/// The engine this thread's rig uses, when not the default one.
pub(crate) fn host() -> Option<String> {
    HOST.with(|h| h.borrow().clone())
}

/// The docker CLI, on this thread's engine.
pub(crate) fn cli() -> Command {
    let mut c = Command::new("docker");
    if let Some(h) = host() {
        c.env("DOCKER_HOST", h).env_remove("DOCKER_CONTEXT");
    }
    c
}

/// The image every test stack runs: `FROM scratch` and a static busybox (scripts/provision.sh).
pub(crate) const FIXTURE: &str = "hal-fixture:latest";

/// Whether an engine answers and has the fixture image.
pub(crate) fn engine_ready() -> bool {
    cli()
        .args(["image", "inspect", "--format", "{{.Id}}", FIXTURE])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Runs the docker CLI and returns stdout (empty on failure).
pub(crate) fn docker(args: &[&str]) -> String {
    cli()
        .args(args)
        .stderr(Stdio::null())
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default()
}

fn project_label(project: &str) -> String {
    format!("label=com.docker.compose.project={project}")
}

/// Container names of a project (all states).
pub(crate) fn containers(project: &str) -> Vec<String> {
    let label = project_label(project);
    docker(&["ps", "-a", "--format", "{{.Names}}", "--filter", &label])
        .lines()
        .map(str::to_string)
        .collect()
}

/// Network names of a project.
pub(crate) fn networks(project: &str) -> Vec<String> {
    let label = project_label(project);
    docker(&["network", "ls", "--format", "{{.Name}}", "--filter", &label])
        .lines()
        .map(str::to_string)
        .collect()
}

/// Container ids of a project (all states), as one string for comparisons.
pub(crate) fn ids(project: &str) -> String {
    docker(&["ps", "-aq", "--filter", &project_label(project)])
}

/// Ids of a project's running containers, as one string.
pub(crate) fn running_ids(project: &str) -> String {
    docker(&["ps", "-q", "--filter", &project_label(project)])
}

/// Waits until `docker ps` says every container of `project` has run a
/// second or more. Its status text counts whole seconds ("Up Less than a
/// second", then "Up 1 second"), and hal's fast path takes a running container
/// as settled only past that first second: before it, a start goes through
/// compose whatever changed, so a test of the fast path or of the change check
/// waits this clock out first.
#[track_caller]
pub(crate) fn past_first_second(project: &str) {
    let label = project_label(project);
    let settled = || {
        let ps = docker(&["ps", "-a", "--format", "{{.Status}}", "--filter", &label]);
        !ps.trim().is_empty()
            && ps
                .lines()
                .all(|s| s.starts_with("Up ") && !s.contains("Less than a second"))
    };
    assert!(
        super::eventually(std::time::Duration::from_secs(10), settled),
        "{project}: not every container up past its first second"
    );
}

/// Removes every container and network of the project.
pub(crate) fn purge_project(project: &str) {
    let label = project_label(project);
    let ids = docker(&["ps", "-aq", "--filter", &label]);
    let ids: Vec<&str> = ids.split_whitespace().collect();
    if !ids.is_empty() {
        let mut args = vec!["rm", "-f"];
        args.extend(ids);
        docker(&args);
    }
    let nets = docker(&["network", "ls", "-q", "--filter", &label]);
    for n in nets.split_whitespace() {
        docker(&["network", "rm", n]);
    }
}

/// When the engine created the project's (first) container.
pub(crate) fn created(project: &str) -> crate::lib_paths::timefmt::Stamp {
    let out = docker(&[
        "ps",
        "-a",
        "--format",
        "{{.ID}}",
        "--filter",
        &format!("label=com.docker.compose.project={project}"),
    ]);
    let id = out.split_whitespace().next().unwrap().to_string();
    let t = docker(&["inspect", "--format", "{{.Created}}", &id]);
    crate::lib_paths::timefmt::parse(t.trim()).unwrap()
}
