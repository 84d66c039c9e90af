//! A real systemd in a container: the one machine type of every area that
//! needs one (the shared machine of `rig/systemd.rs`, adopt's rebooted node,
//! install's clean node), with one cleanup for drop and for an aborted run.
//!
//! A machine runs unprivileged (tmpfs for /run and /tmp, the cgroup tree
//! read-only) with the host's Docker socket, docker CLI and compose plugin
//! mounted in, so hal inside can drive units and stacks alike. Everything a
//! machine makes (its own container, the stacks started in it) is named after
//! its `run` prefix, which is how it is cleaned up.

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Duration;

use super::docker::FIXTURE;
use super::run::{Run, eventually, run_with_timeout, wait_child};

/// The systemd image (scripts/provision.sh).
pub(crate) const IMAGE: &str = "hal-systemd:bookworm";
/// Where the user manager of root lives inside the machine.
pub(crate) const USER_RUNTIME: &str = "/run/user/0";
const COMPOSE_PLUGIN_DIRS: [&str; 4] = [
    "/usr/local/lib/docker/cli-plugins",
    "/usr/local/libexec/docker/cli-plugins",
    "/usr/lib/docker/cli-plugins",
    "/usr/libexec/docker/cli-plugins",
];

/// How to boot a machine.
#[derive(Debug)]
pub(crate) struct Spec<'a> {
    /// The container's name; its `run` prefix unless [`Spec::run`] says otherwise.
    pub name: &'a str,
    /// The prefix of every container and network the machine makes (cleaned up
    /// with it); the name must start with it.
    pub run: &'a str,
    /// The `hal.test=LABEL` label of the container.
    pub label: &'a str,
    pub image: &'a str,
    /// Mounts besides Docker's (`SRC:DEST[:ro]`).
    pub mounts: Vec<String>,
    /// `VAR=value` for every `docker exec` in the machine.
    pub env: Vec<String>,
}

impl Spec<'_> {
    /// The mount of the hal binary under test at `/usr/local/bin/hal`.
    pub(crate) fn hal_under_test() -> String {
        format!("{}:/usr/local/bin/hal:ro", crate::rig::hal_bin().display())
    }

    /// `XDG_RUNTIME_DIR` of root's user manager, for every exec.
    pub(crate) fn root_user_manager() -> Vec<String> {
        vec![format!("XDG_RUNTIME_DIR={USER_RUNTIME}")]
    }
}

/// A systemd container, removed with what it made when dropped (and, after an
/// abort, once this test process is gone).
#[derive(Debug)]
pub(crate) struct Machine {
    pub name: String,
    /// The prefix of every unit, project and directory this machine's tests make.
    pub run: String,
    env: Vec<String>,
}

/// Why a machine of `image` cannot run here, if it cannot.
pub(crate) fn missing(image: &str) -> Option<String> {
    let ok = |args: &[&str]| {
        Command::new("docker")
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    if !ok(&["info"]) {
        return Some("Docker is not reachable".into());
    }
    for image in [image, FIXTURE] {
        if !ok(&["image", "inspect", image]) {
            return Some(format!("image {image} is missing"));
        }
    }
    if !std::path::Path::new("/var/run/docker.sock").exists() {
        return Some("/var/run/docker.sock is missing".into());
    }
    None
}

impl Machine {
    /// Boots the machine (with its reaper) and waits for systemd. Panics when
    /// `docker run` fails: check [`missing`] first.
    pub(crate) fn boot(spec: Spec) -> Machine {
        assert!(spec.name.starts_with(spec.run), "{spec:?}");
        let m = Machine {
            name: spec.name.to_string(),
            run: spec.run.to_string(),
            env: spec.env,
        };
        reaper(&m.cleanup());
        run_machine(&m.name, spec.label, spec.image, &spec.mounts)
            .unwrap_or_else(|why| panic!("{why}"));
        m.wait_for_systemd();
        m
    }

    /// `docker exec` in the machine with its environment.
    pub(crate) fn exec(&self, args: &[&str]) -> Command {
        let mut c = Command::new("docker");
        c.arg("exec");
        for e in &self.env {
            c.args(["-e", e]);
        }
        c.arg(&self.name)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        c
    }

    /// Runs a shell script in the machine.
    pub(crate) fn sh(&self, script: &str) -> Run {
        run_with_timeout(self.exec(&["sh", "-c", script]), Duration::from_secs(180))
    }

    /// Runs a shell script that must succeed.
    #[track_caller]
    pub(crate) fn sh_ok(&self, script: &str) -> String {
        let r = self.sh(script);
        assert_eq!(r.code, Some(0), "in the machine: {script}\n{r:#?}");
        r.stdout
    }

    /// Writes a file in the machine (parents created).
    pub(crate) fn write(&self, path: &str, text: &str) {
        let mut c = Command::new("docker");
        c.args(["exec", "-i", &self.name, "sh", "-c"])
            .arg("mkdir -p \"$(dirname \"$1\")\" && cat > \"$1\"")
            .args(["sh", path])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = c.spawn().unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(text.as_bytes())
            .unwrap();
        let out = wait_child(&mut child, Duration::from_secs(60));
        assert!(
            out.status.success(),
            "write {path}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// Waits for systemd to finish booting (`running` or `degraded`).
    pub(crate) fn wait_for_systemd(&self) {
        let mut state = String::new();
        let up = eventually(Duration::from_secs(90), || {
            state = self
                .sh("systemctl is-system-running")
                .stdout
                .trim()
                .to_string();
            state == "running" || state == "degraded"
        });
        assert!(
            up,
            "systemd in {} did not come up (state {state:?})",
            self.name
        );
    }

    /// Lingers `user` (uid `uid`), starts their user manager and waits until it answers.
    pub(crate) fn user_manager(&self, user: &str, uid: u32) {
        self.sh_ok(&format!(
            "loginctl enable-linger {user} && systemctl start user@{uid}.service"
        ));
        let show = format!(
            "runuser -u {user} -- env XDG_RUNTIME_DIR=/run/user/{uid} systemctl --user show -p Version"
        );
        let up = eventually(Duration::from_secs(60), || self.sh(&show).code == Some(0));
        assert!(up, "{user}'s user manager did not come up in {}", self.name);
    }

    /// The machine restarted, as at a reboot; returns once systemd is up again.
    pub(crate) fn reboot(&self) {
        let out = Command::new("docker")
            .args(["restart", &self.name])
            .output()
            .unwrap();
        assert!(out.status.success(), "docker restart: {out:?}");
        self.wait_for_systemd();
    }

    /// The script that removes the machine and every container and network of its run.
    fn cleanup(&self) -> String {
        format!(
            "docker rm -f {name} >/dev/null 2>&1
docker ps -a --format '{{{{.Names}}}}' | grep '^{run}' | xargs -r docker rm -f >/dev/null 2>&1
docker network ls --format '{{{{.Name}}}}' | grep '^{run}' | xargs -r docker network rm >/dev/null 2>&1
exit 0",
            name = self.name,
            run = self.run
        )
    }
}

impl Drop for Machine {
    fn drop(&mut self) {
        let _ = Command::new("sh")
            .args(["-c", &self.cleanup()])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

/// A detached shell that runs `cleanup` once this test process ends, even
/// after a panic or abort (the shared machine is a static, never dropped).
fn reaper(cleanup: &str) {
    let script = format!(
        "while kill -0 {pid} 2>/dev/null; do sleep 1; done\n{cleanup}",
        pid = std::process::id()
    );
    // Deliberately not waited for: it must outlive this process.
    #[allow(clippy::zombie_processes)]
    let _watcher = Command::new("sh")
        .args(["-c", &script])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn the cleanup watcher");
}

/// `docker run -d` of a systemd machine as this host allows it, with the
/// host's Docker socket, docker CLI and compose plugin mounted in, plus
/// `extra` mounts (`SRC:DEST[:ro]`). The machine is labelled `hal.test=LABEL`.
fn run_machine(name: &str, label: &str, image: &str, extra: &[String]) -> Result<(), String> {
    let docker_cli = which("docker").ok_or("no docker CLI on PATH")?;
    let plugin = COMPOSE_PLUGIN_DIRS
        .iter()
        .map(|d| format!("{d}/docker-compose"))
        .find(|p| std::path::Path::new(p).exists())
        .ok_or("no compose v2 plugin (docker-compose under a cli-plugins dir)")?;
    let mut mounts = vec![
        "/sys/fs/cgroup:/sys/fs/cgroup:ro".to_string(),
        "/var/run/docker.sock:/var/run/docker.sock".to_string(),
        format!("{docker_cli}:/usr/bin/docker:ro"),
        format!("{plugin}:/usr/local/lib/docker/cli-plugins/docker-compose:ro"),
    ];
    mounts.extend(extra.iter().cloned());
    let label = format!("hal.test={label}");
    let mut args: Vec<String> = [
        "run",
        "-d",
        "--name",
        name,
        "--label",
        &label,
        "--tmpfs",
        "/run",
        "--tmpfs",
        "/run/lock",
        "--tmpfs",
        "/tmp",
        "-e",
        "container=docker",
    ]
    .map(String::from)
    .to_vec();
    for m in &mounts {
        args.extend(["-v".to_string(), m.clone()]);
    }
    args.extend([image.to_string(), "/sbin/init".to_string()]);
    let out = Command::new("docker")
        .args(&args)
        .output()
        .map_err(|e| format!("docker run {image}: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "docker run {image}: {}",
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

fn which(program: &str) -> Option<String> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(program))
        .find(|p| p.is_file())
        .and_then(|p| std::fs::canonicalize(p).ok())
        .map(|p| p.to_string_lossy().into_owned())
}
