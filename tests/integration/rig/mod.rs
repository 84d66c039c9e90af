//! The test rig: a temporary services root per test, unique project names, the
//! real hal binary, the engine lease, and cleanup of whatever a test made.
//!
//! A test that needs the engine starts with
//!
//! ```text
//! let Some(rig) = rig::engine() else { return };
//! ```
//!
//! which, when no engine answers, prints `SKIP <the test's path>: <why>` and
//! skips outside CI, and fails the test with the fix when `CI=true`. Every
//! other precondition is spelt the same way, with `rig::need("socat", "-V")`
//! or `rig::need_that(CONDITION, WHY, FIX)`.

pub(crate) mod cli_tree;
pub(crate) mod compose;
pub(crate) mod count;
pub(crate) mod cut;
pub(crate) mod docker;
pub(crate) mod fresh;
pub(crate) mod guard;
pub(crate) mod machine;
pub(crate) mod registry;
pub(crate) mod run;
pub(crate) mod spy;
pub(crate) mod status;
pub(crate) mod strace;
pub(crate) mod systemd;
pub(crate) mod tls;
pub(crate) mod watch;

use std::cell::RefCell;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

pub(crate) use compose::stack;
pub(crate) use docker::{
    FIXTURE, containers, created, docker, ids, networks, past_first_second, running_ids,
};
pub(crate) use guard::{have, in_ci, missing, need, need_that};
pub(crate) use run::{
    Lines, Run, await_line, eventually, hal, path_str, run, run_with_timeout, script, wait_child,
    wait_out,
};
pub(crate) use spy::ComposeCalls;
pub(crate) use status::{check, module_names};

use guard::Lease;

static COUNTER: AtomicU32 = AtomicU32::new(0);

/// The hal binary the rig runs: cargo's, or `HAL_TEST_BIN` when set (a build
/// of older code, to see a test fail on the code before its fix).
pub(crate) fn hal_bin() -> std::path::PathBuf {
    std::env::var_os("HAL_TEST_BIN")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::path::PathBuf::from(env!("CARGO_BIN_EXE_hal")))
}

/// A name no other test of this run and no recent run has: `tag`, the process,
/// a count within it (two tests never share one), and the clock's last digits
/// (a pid comes back in a later run). Short: names end up in socket paths.
pub(crate) fn unique(tag: &str) -> String {
    let n = COUNTER.fetch_add(1, Ordering::SeqCst);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    // Fixed widths around the count: 1 then 23 is never 12 then 3.
    format!(
        "{tag}{:05}{n}{:03}",
        std::process::id() % 100_000,
        nanos % 1000
    )
}

/// A rig on the Docker engine, shared with the other engine tests; `None`
/// (after `SKIP …`) when no engine with the fixture image answers outside CI.
#[track_caller]
pub(crate) fn engine() -> Option<Rig> {
    on_engine(Lease::shared())
}

/// A rig on the engine for a test that disturbs the whole engine (restarts
/// dockerd): no other engine test runs until the rig is dropped.
#[track_caller]
pub(crate) fn engine_alone() -> Option<Rig> {
    on_engine(Lease::alone())
}

/// Where the rootful Podman service listens (scripts/provision.sh's `podman` step);
/// `HAL_TEST_PODMAN` names another socket.
pub(crate) fn podman_host() -> String {
    std::env::var("HAL_TEST_PODMAN")
        .unwrap_or_else(|_| "unix:///run/hal-ci/podman.sock".to_string())
}

/// A rig on Podman's Docker-compatible API: hal, its compose child and the rig's
/// own docker CLI calls get `DOCKER_HOST` of [`podman_host`]. `None` (after
/// `SKIP …`) when it does not answer with the fixture image; under `CI=true` that fails.
#[track_caller]
pub(crate) fn podman() -> Option<Rig> {
    let host = podman_host();
    docker::use_host(Some(host.clone()));
    if !docker::engine_ready() {
        docker::use_host(None);
        return missing(
            &format!("no Podman service with {FIXTURE} answers at {host}"),
            "run scripts/provision.sh (its podman step)",
        );
    }
    let mut rig = Rig::with_lease(Some(Lease::shared()));
    rig.env.push(("DOCKER_HOST".into(), host));
    rig.env_remove.push("DOCKER_CONTEXT".into());
    Some(rig)
}

/// One Podman rig at a time: Podman 4.3 fails a network create now and then
/// (`route ip+net: no such network interface`) while another bridge is torn down.
static PODMAN_TURN: Mutex<()> = Mutex::new(());

/// Waits for the turn on Podman ([`PODMAN_TURN`]); hold it while the rig lives.
pub(crate) fn podman_turn() -> MutexGuard<'static, ()> {
    PODMAN_TURN.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Runs `test` on each engine hal supports: Docker ([`engine`]), then
/// Podman's Docker-compatible API ([`podman`], in its turn). An engine that
/// does not answer is skipped outside CI; under `CI=true` that fails, so
/// neither run is ever skipped there. A failure says which engine it was on.
#[track_caller]
pub(crate) fn each_engine(mut test: impl FnMut(Rig)) {
    if let Some(rig) = engine() {
        on("docker", || test(rig));
    }
    let _turn = podman_turn();
    if let Some(rig) = podman() {
        on("podman", || test(rig));
    }
    docker::use_host(None);
}

/// Runs `f`, saying `engine` in the panic of a failure.
fn on(engine: &str, f: impl FnOnce()) {
    if let Err(e) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        let why = e
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| e.downcast_ref::<&str>().map(|s| (*s).to_string()))
            .unwrap_or_default();
        panic!("on {engine}: {why}");
    }
}

#[track_caller]
fn on_engine(lease: Lease) -> Option<Rig> {
    docker::use_host(None);
    if !docker::engine_ready() {
        return missing(
            &format!("no Docker engine with {FIXTURE} answers"),
            "run scripts/provision.sh",
        );
    }
    Some(Rig::with_lease(Some(lease)))
}

/// One test's world: services root, state dir, config, and the projects it made.
pub(crate) struct Rig {
    pub dir: PathBuf,
    pub root: PathBuf,
    pub state: PathBuf,
    pub config: PathBuf,
    /// Unique to this rig: the start of every module name it makes.
    pub prefix: String,
    projects: RefCell<Vec<String>>,
    /// Variables every hal run of this rig gets.
    pub env: Vec<(String, String)>,
    /// Variables every hal run of this rig goes without.
    pub env_remove: Vec<String>,
    /// Held until the rig and its projects are gone.
    lease: Option<Lease>,
}

impl Rig {
    /// Whether this rig drives Podman ([`podman`]), for the few words in
    /// which the engines differ in a test that runs on each ([`each_engine`]).
    pub(crate) fn on_podman(&self) -> bool {
        let podman = podman_host();
        self.env
            .iter()
            .any(|(k, v)| k == "DOCKER_HOST" && *v == podman)
    }

    /// A rig that never reaches the engine (hal runs with `-H unix:///nonexistent`
    /// or needs no engine at all); `engine()` gives one that does.
    pub(crate) fn new() -> Rig {
        Rig::with_lease(None)
    }

    fn with_lease(lease: Option<Lease>) -> Rig {
        let prefix = unique("ht");
        // Short: sockets live in here, and a socket path has at most 107 bytes.
        let test: String = guard::short_test_name().chars().take(24).collect();
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
            projects: RefCell::default(),
            env: Vec::new(),
            env_remove: Vec::new(),
            lease,
        }
    }

    /// The module name for `short` in this rig (unique per run).
    pub(crate) fn name(&self, short: &str) -> String {
        format!("{}-{short}", self.prefix)
    }

    /// Writes stack `short` (its `compose.yaml`: a [`stack()`] or YAML text);
    /// returns the module name.
    pub(crate) fn stack(&self, short: &str, compose: impl ToString) -> String {
        self.stack_file(short, "compose.yaml", compose)
    }

    /// Writes stack `short` with its compose file named `file`.
    pub(crate) fn stack_file(&self, short: &str, file: &str, compose: impl ToString) -> String {
        let name = self.name(short);
        let d = self.root.join(&name);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join(file), compose.to_string()).unwrap();
        self.projects.borrow_mut().push(name.clone());
        name
    }

    /// Writes stack `short`: one service, `app`, idle, that Docker keeps
    /// running (the fixture most areas start from); returns the module name.
    pub(crate) fn idle(&self, short: &str) -> String {
        self.stack(short, stack().service("app").keeps_running())
    }

    /// Writes two stacks that need each other, not started: `gw` (its one
    /// service's container named `GW-main`) and `tun`, whose one service
    /// lives in `GW-main`'s network namespace; returns their module names.
    pub(crate) fn gateway(&self) -> (String, String) {
        self.gateway_with(None)
    }

    /// [`Rig::gateway`], `gw`'s service also on the network [`Rig::gw_net`],
    /// which `gw` creates.
    pub(crate) fn gateway_networked(&self) -> (String, String) {
        self.gateway_with(Some(&self.gw_net()))
    }

    /// `tun` first: the rig removes projects in the order it made them, and
    /// a namespace goes after the containers in it.
    fn gateway_with(&self, net: Option<&str>) -> (String, String) {
        let gw = self.name("gw");
        let tun = self.stack(
            "tun",
            stack()
                .service("vpn")
                .keeps_running()
                .network_mode(&format!("container:{gw}-main")),
        );
        let made = self.gw(net, true);
        assert_eq!(made, gw);
        (gw, tun)
    }

    /// Writes stack `gw` alone: one service, `main`, idle, on the network
    /// [`Rig::gw_net`], which it creates; returns the module name.
    pub(crate) fn network_gw(&self) -> String {
        self.gw(Some(&self.gw_net()), false)
    }

    /// The network `gw` creates ([`Rig::gateway_networked`], [`Rig::network_gw`]).
    pub(crate) fn gw_net(&self) -> String {
        format!("{}-net", self.name("gw"))
    }

    /// Writes stack `db`: one service, `db`, idle, that joins `gw`'s network
    /// ([`Rig::gw_net`]) as an external one; returns the module name. Write
    /// it before `gw`: the rig removes projects in the order it made them,
    /// and a network goes after the containers on it.
    pub(crate) fn db_on_gw_net(&self) -> String {
        let net = self.gw_net();
        self.stack(
            "db",
            stack()
                .top(&format!(
                    "networks:\n  gwnet:\n    external: true\n    name: {net}"
                ))
                .service("db")
                .keeps_running()
                .line("networks: [gwnet]"),
        )
    }

    /// Writes stack `gw`: one service, `main`, idle, on network `net` when
    /// one is given (created by `gw`, as `gwnet`), its container named
    /// `GW-main` when `named`.
    fn gw(&self, net: Option<&str>, named: bool) -> String {
        let gw = self.name("gw");
        let mut s = stack();
        if let Some(net) = net {
            s = s.top(&format!("networks:\n  gwnet:\n    name: {net}"));
        }
        s = s.service("main").keeps_running();
        if named {
            s = s.line(&format!("container_name: {gw}-main"));
        }
        if net.is_some() {
            s = s.line("networks: [gwnet]");
        }
        self.stack("gw", s)
    }

    /// Makes stack `short`'s directory, empty, for a test to fill; returns the module name.
    pub(crate) fn stack_dir(&self, short: &str) -> String {
        let name = self.name(short);
        std::fs::create_dir_all(self.root.join(&name)).unwrap();
        self.projects.borrow_mut().push(name.clone());
        name
    }

    /// Writes `file` in module `module`'s directory.
    pub(crate) fn write(&self, module: &str, file: &str, text: &str) {
        std::fs::write(self.root.join(module).join(file), text).unwrap();
    }

    pub(crate) fn set_config(&self, text: &str) {
        std::fs::write(&self.config, text).unwrap();
    }

    /// A hal command with this rig's environment, stdout and stderr piped.
    pub(crate) fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(hal_bin());
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
        for k in &self.env_remove {
            c.env_remove(k);
        }
        for (k, v) in &self.env {
            c.env(k, v);
        }
        c
    }

    /// Records that this test restarted the engine (it holds it alone): what
    /// ran on it before is gone.
    pub(crate) fn engine_restarted(&self) {
        self.lease
            .as_ref()
            .expect("a rig from rig::engine_alone()")
            .engine_restarted();
    }

    /// What `hal --json status MODULE` says the module's state is.
    pub(crate) fn state_of(&self, module: &str) -> String {
        self.status(module).state().to_string()
    }
}

impl Drop for Rig {
    fn drop(&mut self) {
        for p in self.projects.borrow().iter() {
            docker::purge_project(p);
        }
        let _ = std::fs::remove_dir_all(&self.dir);
        docker::use_host(None);
    }
}

#[cfg(test)]
mod tests {
    /// Two fleet tests once booted a node each named `hf8514210n1` (the clock's
    /// last digits alone told them apart): names made at once never meet.
    #[test]
    fn names_made_at_once_are_all_different() {
        let names: std::collections::HashSet<String> =
            (0..2000).map(|_| super::unique("hx")).collect();
        assert_eq!(names.len(), 2000);
    }
}
