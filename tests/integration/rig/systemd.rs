//! The shared systemd machine of the host-module tests: one [`Machine`]
//! (rig/machine.rs), booted on first use with root's and ana's user managers
//! and the hal binary under test, removed when the test process exits.
//!
//! Each test takes a [`Scene`]: its own unit names, config, services root and
//! state dir, cleaned up on drop. A scene holds the engine lease too (the
//! machine is a container: it goes away when a test restarts dockerd, and is
//! booted anew after).

use std::cell::RefCell;
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::Duration;

use super::docker::purge_project;
use super::guard::{self, Lease};
use super::machine::{self, IMAGE, Machine, Spec};
use super::run::{Run, run_with_timeout};

static SCENES: AtomicU32 = AtomicU32::new(0);
/// Shared by the scenes that keep to their own units; taken alone by a test
/// that changes the machine itself (installs hal's units for every module).
static MACHINE_USE: RwLock<()> = RwLock::new(());

/// Which systemd manager a unit is for.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Scope {
    System,
    User,
}

impl Scope {
    pub(crate) fn as_str(self) -> &'static str {
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

/// A scene in the machine, shared with other tests' scenes; `None` (after
/// `SKIP …`) outside CI when Docker or the image is missing. With `CI=true`
/// a missing piece fails the test.
#[track_caller]
pub(crate) fn scene() -> Option<Scene> {
    let engine = Lease::shared();
    let turn = Turn {
        _shared: Some(MACHINE_USE.read().unwrap_or_else(PoisonError::into_inner)),
        _alone: None,
    };
    Some(new_scene(machine()?, engine, turn))
}

/// A scene with the machine to itself, for a test that changes what every
/// scene would see (hal's own units, /etc/hal).
#[track_caller]
pub(crate) fn scene_alone() -> Option<Scene> {
    let engine = Lease::shared();
    let turn = Turn {
        _shared: None,
        _alone: Some(MACHINE_USE.write().unwrap_or_else(PoisonError::into_inner)),
    };
    Some(new_scene(machine()?, engine, turn))
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
    /// The machine and the engine generation it was booted in.
    type Booted = Result<(&'static Machine, u64), String>;
    static CURRENT: Mutex<Option<Booted>> = Mutex::new(None);
    let mut current = CURRENT.lock().unwrap_or_else(PoisonError::into_inner);
    let generation = guard::engine_generation();
    let stale = match &*current {
        Some(Ok((_, booted_in))) => *booted_in != generation,
        Some(Err(_)) => false,
        None => true,
    };
    if stale {
        if let Some(Ok((old, _))) = &*current {
            // Stopped with the engine it ran on.
            let _ = Command::new("docker")
                .args(["rm", "-f", &old.name])
                .output();
        }
        *current = Some(boot().map(|m| (&*Box::leak(Box::new(m)), generation)));
    }
    match current.as_ref() {
        Some(Ok((m, _))) => Some(*m),
        Some(Err(why)) => guard::missing(why, "run scripts/provision.sh"),
        None => unreachable!("set above"),
    }
}

/// Boots the machine with root's and ana's (uid 1000) user managers, or says
/// why it cannot run here.
fn boot() -> Result<Machine, String> {
    if let Some(why) = machine::missing(IMAGE) {
        return Err(why);
    }
    let run = super::unique("halt");
    let m = Machine::boot(Spec {
        name: &run,
        run: &run,
        label: "host_modules",
        image: IMAGE,
        mounts: vec![Spec::hal_under_test()],
        env: Spec::root_user_manager(),
    });
    m.user_manager("root", 0);
    m.sh_ok("useradd -m -u 1000 ana");
    m.user_manager("ana", 1000);
    Ok(m)
}

/// A fresh scene for one test.
fn new_scene(m: &'static Machine, engine: Lease, turn: Turn) -> Scene {
    let n = SCENES.fetch_add(1, Ordering::SeqCst);
    let id = format!("{}-s{n}", m.run);
    let dir = format!("/srv/hal-tests/{id}");
    m.sh_ok(&format!("mkdir -p {dir}/services {dir}/state"));
    let s = Scene {
        m,
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

/// One test's world inside the machine.
pub(crate) struct Scene {
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
    pub(crate) fn services(&self) -> String {
        format!("{}/services", self.dir)
    }

    pub(crate) fn config_path(&self) -> String {
        format!("{}/hal.toml", self.dir)
    }

    /// Writes the config (the services root is always this scene's).
    pub(crate) fn config(&self, text: &str) {
        let full = format!(
            "services_dir = \"{}\"\n\n[defaults]\npull = \"never\"\n\n{text}",
            self.services()
        );
        self.m.write(&self.config_path(), &full);
    }

    /// Installs unit `<id>-<short>.service` with `[Service]` lines `body`; returns its name.
    pub(crate) fn unit(&self, scope: Scope, short: &str, body: &str) -> String {
        let unit = format!("{}-{short}.service", self.id);
        let text = format!("[Unit]\nDescription=hal test {short}\n\n[Service]\n{body}\n");
        self.m.write(&format!("{}/{unit}", scope.unit_dir()), &text);
        self.m
            .sh_ok(&format!("{} daemon-reload", scope.systemctl()));
        self.units.borrow_mut().push((scope, unit.clone()));
        unit
    }

    /// Writes a stack directory `<id>-<short>` with `compose.yaml`; returns the module name.
    pub(crate) fn stack(&self, short: &str, compose: impl ToString) -> String {
        let name = format!("{}-{short}", self.id);
        self.m.write(
            &format!("{}/{name}/compose.yaml", self.services()),
            &compose.to_string(),
        );
        self.projects.borrow_mut().push(name.clone());
        name
    }

    /// `hal ARGS` in the machine with this scene's config, services root and state.
    pub(crate) fn hal(&self, args: &[&str]) -> Run {
        self.hal_with(&[], args)
    }

    /// `PREFIX... hal ARGS`, e.g. with `env -u XDG_RUNTIME_DIR` or `runuser -u ana --`.
    pub(crate) fn hal_with(&self, prefix: &[&str], args: &[&str]) -> Run {
        let cmd = self.hal_command(prefix, args);
        run_with_timeout(cmd, Duration::from_secs(180))
    }

    pub(crate) fn hal_command(&self, prefix: &[&str], args: &[&str]) -> Command {
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
