//! A real systemd for host-module tests: one container, booted on first use,
//! removed when the test process exits.
//!
//! The container runs `hal-systemd:bookworm` unprivileged with root's user
//! manager started (`XDG_RUNTIME_DIR=/run/user/0`), the hal binary under test,
//! the host's Docker socket, docker CLI and compose plugin, so hal inside can
//! drive units and stacks alike. Each test takes a [`Scene`]: its own unit
//! names, config, services root and state dir, cleaned up on drop. A scene
//! holds the engine lease too (the machine is a container: it goes away when
//! a test restarts dockerd, and is booted anew after).

use std::cell::RefCell;
use std::io::Write;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::{Duration, Instant};

use super::docker::{FIXTURE, purge_project};
use super::guard::{self, Lease};
use super::run::{Run, eventually, run_with_timeout, wait_child};

pub const IMAGE: &str = "hal-systemd:bookworm";
/// Where the user manager of root lives inside the machine.
pub const USER_RUNTIME: &str = "/run/user/0";
const COMPOSE_PLUGIN_DIRS: [&str; 4] = [
    "/usr/local/lib/docker/cli-plugins",
    "/usr/local/libexec/docker/cli-plugins",
    "/usr/lib/docker/cli-plugins",
    "/usr/libexec/docker/cli-plugins",
];

static SCENES: AtomicU32 = AtomicU32::new(0);
/// Shared by the scenes that keep to their own units; taken alone by a test
/// that changes the machine itself (installs hal's units for every module).
static MACHINE_USE: RwLock<()> = RwLock::new(());

/// Which systemd manager a unit is for.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Scope {
    System,
    User,
}

impl Scope {
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::System => "system",
            Scope::User => "user",
        }
    }

    fn unit_dir(self) -> &'static str {
        match self {
            Scope::System => "/etc/systemd/system",
            Scope::User => "/root/.config/systemd/user",
        }
    }

    /// `systemctl` plus `--user` where needed.
    fn systemctl(self) -> &'static str {
        match self {
            Scope::System => "systemctl",
            Scope::User => "systemctl --user",
        }
    }
}

/// The shared systemd container.
#[derive(Debug)]
pub struct Machine {
    pub name: String,
    /// The prefix of every unit, project and directory this machine's scenes make.
    pub run: String,
    /// The engine generation it was booted in.
    generation: u64,
}

/// A scene in the machine, shared with other tests' scenes; `None` (after
/// `SKIP …`) outside CI when Docker or the image is missing. With `CI=true`
/// a missing piece fails the test.
#[track_caller]
pub fn scene() -> Option<Scene> {
    let engine = Lease::shared();
    let turn = Turn {
        _shared: Some(MACHINE_USE.read().unwrap_or_else(PoisonError::into_inner)),
        _alone: None,
    };
    Some(machine()?.scene(engine, turn))
}

/// A scene with the machine to itself, for a test that changes what every
/// scene would see (hal's own units, /etc/hal).
#[track_caller]
pub fn scene_alone() -> Option<Scene> {
    let engine = Lease::shared();
    let turn = Turn {
        _shared: None,
        _alone: Some(MACHINE_USE.write().unwrap_or_else(PoisonError::into_inner)),
    };
    Some(machine()?.scene(engine, turn))
}

/// A scene's hold on the machine, shared or alone.
#[derive(Debug)]
struct Turn {
    _shared: Option<RwLockReadGuard<'static, ()>>,
    _alone: Option<RwLockWriteGuard<'static, ()>>,
}

/// The machine of the current engine generation, booted on first use.
#[track_caller]
fn machine() -> Option<&'static Machine> {
    static CURRENT: Mutex<Option<Result<&'static Machine, String>>> = Mutex::new(None);
    let mut current = CURRENT.lock().unwrap_or_else(PoisonError::into_inner);
    let generation = guard::engine_generation();
    let stale = match &*current {
        Some(Ok(m)) => m.generation != generation,
        Some(Err(_)) => false,
        None => true,
    };
    if stale {
        if let Some(Ok(old)) = &*current {
            // Stopped with the engine it ran on.
            let _ = Command::new("docker")
                .args(["rm", "-f", &old.name])
                .output();
        }
        let booted = boot(generation).map(|m| &*Box::leak(Box::new(m)));
        *current = Some(booted);
    }
    match current.as_ref() {
        Some(Ok(m)) => Some(*m),
        Some(Err(why)) => guard::missing(why, "run scripts/provision.sh"),
        None => unreachable!("set above"),
    }
}

/// Boots the machine, or says why it cannot run here.
fn boot(generation: u64) -> Result<Machine, String> {
    if let Some(why) = prerequisites_missing() {
        return Err(why);
    }
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    let run = format!("halt-{}-{}", std::process::id(), nanos % 100_000);
    let name = run.clone();
    reaper(&name, &run);
    let hal = env!("CARGO_BIN_EXE_hal");
    run_machine(
        &name,
        "host_modules",
        IMAGE,
        &[format!("{hal}:/usr/local/bin/hal:ro")],
    )
    .unwrap_or_else(|why| panic!("{why}"));
    let m = Machine {
        name,
        run,
        generation,
    };
    m.wait_for_systemd();
    Ok(m)
}

/// Why the machine cannot run here, if it cannot.
fn prerequisites_missing() -> Option<String> {
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
    for image in [IMAGE, FIXTURE] {
        if !ok(&["image", "inspect", image]) {
            return Some(format!("image {image} is missing"));
        }
    }
    if !std::path::Path::new("/var/run/docker.sock").exists() {
        return Some("/var/run/docker.sock is missing".into());
    }
    None
}

/// `docker run -d` of a systemd machine as this host allows it (no
/// --privileged: tmpfs for /run and /tmp, the cgroup tree read-only), with the
/// host's Docker socket, docker CLI and compose plugin mounted in, plus
/// `extra` mounts (`SRC:DEST[:ro]`). The machine is labelled `hal.test=LABEL`.
pub fn run_machine(name: &str, label: &str, image: &str, extra: &[String]) -> Result<(), String> {
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

/// A detached shell that waits for this test process to end, then removes the
/// machine and every container and network of this run, even after a panic
/// or abort (statics are never dropped).
fn reaper(name: &str, run: &str) {
    let script = format!(
        "while kill -0 {pid} 2>/dev/null; do sleep 1; done
docker rm -f {name} >/dev/null 2>&1
docker ps -a --format '{{{{.Names}}}}' | grep '^{run}' | xargs -r docker rm -f >/dev/null 2>&1
docker network ls --format '{{{{.Name}}}}' | grep '^{run}' | xargs -r docker network rm >/dev/null 2>&1
exit 0",
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

impl Machine {
    /// `docker exec` in the machine with root's user manager reachable.
    pub fn exec(&self, args: &[&str]) -> Command {
        let mut c = Command::new("docker");
        c.args(["exec", "-e", &format!("XDG_RUNTIME_DIR={USER_RUNTIME}")])
            .arg(&self.name)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        c
    }

    /// Runs a shell script in the machine.
    pub fn sh(&self, script: &str) -> Run {
        run_with_timeout(self.exec(&["sh", "-c", script]), Duration::from_secs(120))
    }

    /// Runs a shell script that must succeed.
    #[track_caller]
    pub fn sh_ok(&self, script: &str) -> String {
        let r = self.sh(script);
        assert_eq!(r.code, Some(0), "in the machine: {script}\n{r:#?}");
        r.stdout
    }

    /// Writes a file in the machine (parents created).
    pub fn write(&self, path: &str, text: &str) {
        write_in(&self.name, path, text);
    }

    fn wait_for_systemd(&self) {
        let began = Instant::now();
        let mut state = String::new();
        while began.elapsed() < Duration::from_secs(90) {
            state = self
                .sh("systemctl is-system-running")
                .stdout
                .trim()
                .to_string();
            if state == "running" || state == "degraded" {
                break;
            }
            std::thread::sleep(Duration::from_millis(300));
        }
        assert!(
            state == "running" || state == "degraded",
            "systemd in {IMAGE} did not come up (state {state:?})"
        );
        // Root's user manager, and a normal user (ana, uid 1000) with her own.
        self.sh_ok(
            "loginctl enable-linger root && systemctl start user@0.service \
             && useradd -m -u 1000 ana && loginctl enable-linger ana && systemctl start user@1000.service",
        );
        let up = eventually(Duration::from_secs(60), || {
            self.sh("systemctl --user show -p Version").code == Some(0)
                && self
                    .sh("runuser -u ana -- env XDG_RUNTIME_DIR=/run/user/1000 systemctl --user show -p Version")
                    .code
                    == Some(0)
        });
        assert!(up, "the user managers did not come up in {IMAGE}");
    }

    /// A fresh scene for one test.
    fn scene(&'static self, engine: Lease, turn: Turn) -> Scene {
        let n = SCENES.fetch_add(1, Ordering::SeqCst);
        let id = format!("{}-s{n}", self.run);
        let dir = format!("/srv/hal-tests/{id}");
        self.sh_ok(&format!("mkdir -p {dir}/services {dir}/state"));
        let s = Scene {
            m: self,
            id,
            dir,
            units: RefCell::default(),
            projects: RefCell::default(),
            _turn: turn,
            _engine: engine,
        };
        s.config("");
        s
    }
}

/// One test's world inside the machine.
pub struct Scene {
    pub m: &'static Machine,
    /// The prefix of this scene's units and stacks.
    pub id: String,
    pub dir: String,
    units: RefCell<Vec<(Scope, String)>>,
    projects: RefCell<Vec<String>>,
    /// Released after the cleanup in `drop`, in this order.
    _turn: Turn,
    _engine: Lease,
}

impl Scene {
    pub fn services(&self) -> String {
        format!("{}/services", self.dir)
    }

    pub fn config_path(&self) -> String {
        format!("{}/hal.toml", self.dir)
    }

    /// Writes the config (the services root is always this scene's).
    pub fn config(&self, text: &str) {
        let full = format!(
            "services_dir = \"{}\"\n\n[defaults]\npull = \"never\"\n\n{text}",
            self.services()
        );
        self.m.write(&self.config_path(), &full);
    }

    /// Installs unit `<id>-<short>.service` with `[Service]` lines `body`; returns its name.
    pub fn unit(&self, scope: Scope, short: &str, body: &str) -> String {
        let unit = format!("{}-{short}.service", self.id);
        let text = format!("[Unit]\nDescription=hal test {short}\n\n[Service]\n{body}\n");
        self.m.write(&format!("{}/{unit}", scope.unit_dir()), &text);
        self.m
            .sh_ok(&format!("{} daemon-reload", scope.systemctl()));
        self.units.borrow_mut().push((scope, unit.clone()));
        unit
    }

    /// Writes a stack directory `<id>-<short>` with `compose.yaml`; returns the module name.
    pub fn stack(&self, short: &str, compose: impl ToString) -> String {
        let name = format!("{}-{short}", self.id);
        self.m.write(
            &format!("{}/{name}/compose.yaml", self.services()),
            &compose.to_string(),
        );
        self.projects.borrow_mut().push(name.clone());
        name
    }

    /// `hal ARGS` in the machine with this scene's config, services root and state.
    pub fn hal(&self, args: &[&str]) -> Run {
        self.hal_with(&[], args)
    }

    /// `PREFIX... hal ARGS`, e.g. with `env -u XDG_RUNTIME_DIR` or `runuser -u ana --`.
    pub fn hal_with(&self, prefix: &[&str], args: &[&str]) -> Run {
        let cmd = self.hal_command(prefix, args);
        run_with_timeout(cmd, Duration::from_secs(180))
    }

    pub fn hal_command(&self, prefix: &[&str], args: &[&str]) -> Command {
        let config = format!("HAL_CONFIG={}", self.config_path());
        let state = format!("HAL_STATE_DIR={}/state", self.dir);
        let mut all: Vec<&str> = vec!["env", &config, &state, "NO_COLOR=1"];
        all.extend(prefix);
        all.push("hal");
        all.extend(args);
        self.m.exec(&all)
    }
}

impl Drop for Scene {
    fn drop(&mut self) {
        let mut script = String::new();
        for (scope, unit) in self.units.borrow().iter() {
            let sc = scope.systemctl();
            script.push_str(&format!(
                "{sc} stop {unit}; {sc} reset-failed {unit}; rm -f {}/{unit};\n",
                scope.unit_dir()
            ));
        }
        script.push_str(&format!(
            "systemctl daemon-reload; systemctl --user daemon-reload; rm -rf {}\n",
            self.dir
        ));
        let _ = self.m.sh(&script);
        for p in self.projects.borrow().iter() {
            purge_project(p);
        }
    }
}

/// Writes a file in the container `name` (parents created): every test
/// machine's `write`.
pub fn write_in(name: &str, path: &str, text: &str) {
    let mut c = Command::new("docker");
    c.args(["exec", "-i", name, "sh", "-c"])
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
