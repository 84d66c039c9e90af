//! Shared test rig: a temporary services root, unique project names, the real hal binary, and cleanup.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

pub mod systemd;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

pub const FIXTURE: &str = "hal-fixture:latest";

static COUNTER: AtomicU32 = AtomicU32::new(0);

/// True when the tests must not skip (CI=true).
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
}

/// Whether a Docker engine answers and the fixture image is present. Outside
/// CI a missing engine skips the test with a visible notice; in CI it fails.
pub fn engine_or_skip(test: &str) -> bool {
    let ok = Command::new("docker")
        .args(["image", "inspect", "--format", "{{.Id}}", FIXTURE])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if ok {
        return true;
    }
    assert!(
        !in_ci(),
        "{test}: Docker is not reachable or {FIXTURE} is missing, and CI=true forbids skipping (run .ci/run or scripts/provision.sh)"
    );
    skip(&format!(
        "{test}: no Docker engine with {FIXTURE} (run scripts/provision.sh)"
    ));
    false
}

/// One test's world: services root, state dir, config, and the projects it made.
pub struct Rig {
    pub dir: PathBuf,
    pub root: PathBuf,
    pub state: PathBuf,
    pub config: PathBuf,
    pub prefix: String,
    projects: std::cell::RefCell<Vec<String>>,
    pub env: Vec<(String, String)>,
}

impl Rig {
    pub fn new(test: &str) -> Rig {
        let n = COUNTER.fetch_add(1, Ordering::SeqCst);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .subsec_nanos();
        let prefix = format!("ht{}{n}{}", std::process::id() % 100_000, nanos % 1000);
        let dir = std::env::temp_dir().join(format!("hal-test-{prefix}-{test}"));
        let _ = std::fs::remove_dir_all(&dir);
        let root = dir.join("services");
        let state = dir.join("state");
        std::fs::create_dir_all(&root).unwrap();
        let config = dir.join("hal.toml");
        std::fs::write(&config, "[defaults]\npull = \"never\"\n").unwrap();
        Rig {
            dir,
            root,
            state,
            config,
            prefix,
            projects: Default::default(),
            env: Vec::new(),
        }
    }

    /// The module name for `short` in this rig (unique per run).
    pub fn name(&self, short: &str) -> String {
        format!("{}-{short}", self.prefix)
    }

    /// Writes a stack directory `name` with `compose.yaml`; returns the module name.
    pub fn stack(&self, short: &str, yaml: &str) -> String {
        self.stack_file(short, "compose.yaml", yaml)
    }

    pub fn stack_file(&self, short: &str, file: &str, yaml: &str) -> String {
        let name = self.name(short);
        let d = self.root.join(&name);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join(file), yaml).unwrap();
        self.projects.borrow_mut().push(name.clone());
        name
    }

    pub fn write(&self, module: &str, file: &str, text: &str) {
        std::fs::write(self.root.join(module).join(file), text).unwrap();
    }

    pub fn set_config(&self, text: &str) {
        std::fs::write(&self.config, text).unwrap();
    }

    /// A hal command with this rig's environment.
    pub fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_hal"));
        c.args(args)
            .env("HAL_SERVICES_DIR", &self.root)
            .env("HAL_STATE_DIR", &self.state)
            .env("HAL_CONFIG", &self.config)
            .env_remove("HAL_YES")
            .env_remove("HAL_COMPOSE")
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (k, v) in &self.env {
            c.env(k, v);
        }
        c
    }

    /// Runs hal to completion (at most `limit`), returning its output.
    pub fn run_for(&self, args: &[&str], limit: Duration) -> Run {
        run_with_timeout(self.cmd(args), limit)
    }

    pub fn run(&self, args: &[&str]) -> Run {
        self.run_for(args, Duration::from_secs(180))
    }

    /// Removes every container and network of the named project.
    pub fn purge(&self, project: &str) {
        purge_project(project);
    }
}

impl Drop for Rig {
    fn drop(&mut self) {
        for p in self.projects.borrow().iter() {
            purge_project(p);
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

pub fn purge_project(project: &str) {
    let label = format!("label=com.docker.compose.project={project}");
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

/// Runs the docker CLI and returns stdout (empty on failure).
pub fn docker(args: &[&str]) -> String {
    Command::new("docker")
        .args(args)
        .stderr(Stdio::null())
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default()
}

/// Container names of a project (all states).
pub fn containers(project: &str) -> Vec<String> {
    let label = format!("label=com.docker.compose.project={project}");
    docker(&["ps", "-a", "--format", "{{.Names}}", "--filter", &label])
        .lines()
        .map(str::to_string)
        .collect()
}

pub fn networks(project: &str) -> Vec<String> {
    let label = format!("label=com.docker.compose.project={project}");
    docker(&["network", "ls", "--format", "{{.Name}}", "--filter", &label])
        .lines()
        .map(str::to_string)
        .collect()
}

/// What a finished hal run left.
#[derive(Debug)]
pub struct Run {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub took: Duration,
}

impl Run {
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not one JSON document ({e}): {self:?}"))
    }

    #[track_caller]
    pub fn expect(&self, code: i32) -> &Run {
        assert_eq!(self.code, Some(code), "unexpected exit code: {self:#?}");
        self
    }

    /// The state of module `name` in a status document.
    pub fn state_of(&self, name: &str) -> String {
        let doc = self.json();
        doc["modules"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["name"] == name)
            .unwrap_or_else(|| panic!("{name} not in {doc}"))["state"]
            .as_str()
            .unwrap()
            .to_string()
    }
}

pub fn run_with_timeout(mut cmd: Command, limit: Duration) -> Run {
    let began = Instant::now();
    let mut child = cmd.spawn().expect("spawn hal");
    let out = wait_child(&mut child, limit);
    Run {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        took: began.elapsed(),
    }
}

/// Waits for a child, killing it (and failing the test) past `limit`.
pub fn wait_child(child: &mut Child, limit: Duration) -> Output {
    let mut stdout = child.stdout.take();
    let mut stderr = child.stderr.take();
    let t_out = std::thread::spawn(move || {
        let mut b = Vec::new();
        if let Some(s) = stdout.as_mut() {
            let _ = s.read_to_end(&mut b);
        }
        b
    });
    let t_err = std::thread::spawn(move || {
        let mut b = Vec::new();
        if let Some(s) = stderr.as_mut() {
            let _ = s.read_to_end(&mut b);
        }
        b
    });
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("hal did not finish within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Output {
        status,
        stdout: t_out.join().unwrap(),
        stderr: t_err.join().unwrap(),
    }
}

/// Polls `f` until it returns true or `limit` passes.
pub fn eventually(limit: Duration, mut f: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if f() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    f()
}

/// A service block running `script` in the fixture image.
pub fn svc(name: &str, script: &str, extra: &str) -> String {
    let script = script.replace('$', "$$");
    format!(
        "  {name}:\n    image: {FIXTURE}\n    command: [\"sh\", \"-c\", {script:?}]\n    stop_signal: SIGKILL\n{extra}"
    )
}

pub fn compose(services: &[String]) -> String {
    format!("services:\n{}", services.join(""))
}

pub fn path_str(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Container ids of a project (all states), as one string for comparisons.
pub fn ids(project: &str) -> String {
    docker(&[
        "ps",
        "-aq",
        "--filter",
        &format!("label=com.docker.compose.project={project}"),
    ])
}

/// Writes an executable script `name` into `dir`.
pub fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, body).unwrap();
    std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    path
}

/// Prints a skip notice that the test harness does not swallow (it captures
/// `eprintln!` of passing tests, not direct writes to the stream).
pub fn skip(text: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "SKIP {text}");
}
