//! The shipped init units inside a real systemd: placed where `make install` puts them and enabled as dist/systemd/README.md says, they bring back a failed module with no person involved.
//!
//! Runs in the `hal-systemd:bookworm` machine of `rig/systemd.rs`, alone: it
//! installs hal's own units and /etc/hal, which every scene would see. The
//! install commands are read from the README itself, so the documented steps
//! are exactly the tested ones. Outside CI, a missing Docker or image skips
//! with a visible notice; with CI=true it fails instead.

use std::time::Duration;

use crate::rig::machine::Machine;
use crate::rig::systemd::{self, Scope};
use crate::rig::{docker, eventually, stack};

const README: &str = include_str!("../../dist/systemd/README.md");
/// Where the test puts a copy of the repository's `dist/` in the machine.
const CHECKOUT: &str = "/opt/hal-src";

/// The first ```sh block under the README heading `## {section}`.
fn readme_block(section: &str) -> String {
    let heading = format!("## {section}");
    let after = README
        .split_once(&heading)
        .unwrap_or_else(|| panic!("README has no {heading:?}"))
        .1;
    let start = after.find("```sh\n").expect("a ```sh block") + "```sh\n".len();
    let len = after[start..].find("```").expect("the end of the block");
    after[start..start + len].to_string()
}

/// Stops and removes what the README installed, before the scene goes (so no
/// supervisor recreates what the scene's cleanup removes).
struct Uninstall(&'static Machine);

impl Drop for Uninstall {
    fn drop(&mut self) {
        let _ = self.0.sh(
            "systemctl disable --now hal-watch.service hal-rescue.timer hal-rescue.service; \
             rm -f /usr/local/lib/systemd/system/hal-* /usr/local/lib/systemd/user/hal-*; \
             systemctl daemon-reload; rm -rf /etc/hal /var/lib/hal; \
             runuser -u ana -- env XDG_RUNTIME_DIR=/run/user/1000 systemctl --user disable --now hal-watch.service hal-rescue.timer; \
             rm -f /home/ana/.config/systemd/user/hal-*",
        );
    }
}

fn state_of(m: &Machine, module: &str) -> String {
    let r = m.sh(&format!("hal --json status {module}"));
    r.state_of(module)
}

fn journal(m: &Machine, unit: &str) -> String {
    m.sh(&format!("journalctl -u {unit} --no-pager -o cat"))
        .stdout
}

fn show(m: &Machine, unit: &str, prop: &str) -> String {
    m.sh_ok(&format!("systemctl show -p {prop} --value {unit}"))
        .trim()
        .to_string()
}

#[test]
fn shipped_units_bring_back_failed_modules_without_a_person() {
    let Some(scene) = systemd::scene_alone() else {
        return;
    };
    let m = scene.m;
    let app = scene.stack("app", stack().service("app").keeps_running());
    let ok_file = format!("{}/hx-ok", scene.dir);
    let unit = scene.unit(
        Scope::System,
        "hx",
        &format!("ExecStart=/bin/sh -c 'test -f {ok_file} || exit 3; exec sleep infinity'"),
    );
    // The units run hal with its defaults: /etc/hal/hal.toml and /var/lib/hal.
    m.write(
        "/etc/hal/hal.toml",
        &format!(
            "services_dir = \"{}\"\n\n[defaults]\npull = \"never\"\n\n[module.hx]\nunit = \"{unit}\"\nscope = \"system\"\nrestart = {{ burst = 1, interval = \"1h\" }}\n",
            scene.services()
        ),
    );
    m.sh_ok(&format!("touch {ok_file}"));
    m.sh_ok(&format!("hal module start {app} hx"));

    // Install exactly as the README says, from a copy of the repository.
    let dist = concat!(env!("CARGO_MANIFEST_DIR"), "/dist");
    m.sh_ok(&format!("mkdir -p {CHECKOUT}"));
    let cp = std::process::Command::new("docker")
        .args(["cp", dist, &format!("{}:{CHECKOUT}/", m.name)])
        .output()
        .unwrap();
    assert!(cp.status.success(), "{cp:?}");
    m.sh_ok(&format!("chmod -R a+rX {CHECKOUT}"));
    let doctor = |m: &Machine| -> serde_json::Value {
        let out = m.sh("hal --json doctor");
        let doc: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
        doc["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == "automatic-rescue")
            .cloned()
            .unwrap_or_else(|| panic!("no automatic-rescue check: {doc}"))
    };
    let before = doctor(m);
    assert_eq!(before["ok"], false, "{before}");
    assert!(
        before["hint"]
            .as_str()
            .unwrap()
            .contains("systemctl enable --now hal-watch.service hal-rescue.timer"),
        "{before}"
    );
    let _uninstall = Uninstall(m);
    // The units where `make install` (PREFIX=/usr/local) puts them, naming the hal under test.
    m.sh_ok(&format!(
        "for s in system user; do mkdir -p /usr/local/lib/systemd/$s; \
         for u in hal-watch.service hal-rescue.service hal-rescue.timer; do \
         sed 's|/usr/bin/hal|/usr/local/bin/hal|' {CHECKOUT}/dist/systemd/$s/$u > /usr/local/lib/systemd/$s/$u; \
         done; done; systemctl daemon-reload"
    ));
    let steps = readme_block("System scope").replace("sudo ", "");
    m.sh_ok(&format!("set -e; cd {CHECKOUT}\n{steps}"));
    for u in ["hal-watch.service", "hal-rescue.timer"] {
        assert_eq!(show(m, u, "ActiveState"), "active", "{u}");
        assert_eq!(show(m, u, "UnitFileState"), "enabled", "{u}");
    }
    let after = doctor(m);
    assert_eq!(
        after["ok"], true,
        "doctor does not see the installed units: {after}"
    );
    assert!(
        eventually(Duration::from_secs(20), || journal(m, "hal-watch.service")
            .contains("watch: watching 2 modules")),
        "{}",
        journal(m, "hal-watch.service")
    );

    // 1. A stack's container is killed: hal watch brings it back.
    let container = format!("{app}-app-1");
    let before = docker(&["inspect", "-f", "{{.Id}} {{.State.StartedAt}}", &container]);
    docker(&["kill", &container]);
    let back = eventually(Duration::from_secs(40), || {
        docker(&["inspect", "-f", "{{.Id}} {{.State.Status}}", &container])
            .split_whitespace()
            .collect::<Vec<_>>()
            .get(1)
            == Some(&"running")
            && state_of(m, &app) == "active"
    });
    let logged = eventually(Duration::from_secs(20), || {
        journal(m, "hal-watch.service").contains(&format!("{app}: restarted, active"))
    });
    let log = journal(m, "hal-watch.service");
    assert!(back && logged, "the stack did not come back:\n{log}");
    // Started again (the same container, a new start), not recreated.
    let after = docker(&["inspect", "-f", "{{.Id}} {{.State.StartedAt}}", &container]);
    assert_ne!(before, after, "the container was not started again");
    assert_eq!(
        before.split_whitespace().next(),
        after.split_whitespace().next(),
        "the container was recreated"
    );

    // 2. hal watch itself is killed: systemd starts it again.
    let pid = show(m, "hal-watch.service", "MainPID");
    assert_ne!(pid, "0");
    m.sh_ok(&format!("kill -KILL {pid}"));
    let restarted = eventually(Duration::from_secs(30), || {
        let now = show(m, "hal-watch.service", "MainPID");
        now != "0" && now != pid && show(m, "hal-watch.service", "ActiveState") == "active"
    });
    assert!(
        restarted,
        "hal watch was not restarted:\n{}",
        m.sh("systemctl status hal-watch.service --no-pager").stdout
    );
    assert_eq!(show(m, "hal-watch.service", "NRestarts"), "1");

    // 3. A host module's unit fails while its start limit is used up (watch can
    //    only hold it): the timer's service, started here rather than waited for,
    //    rescues it.
    m.sh_ok(&format!(
        "rm {ok_file}; systemctl kill --signal=KILL {unit}"
    ));
    assert!(eventually(Duration::from_secs(10), || show(
        m,
        &unit,
        "ActiveState"
    ) == "failed"));
    m.sh_ok(&format!("touch {ok_file}"));
    m.sh_ok("systemctl start hal-rescue.service");
    assert_eq!(show(m, "hal-rescue.service", "Result"), "success");
    assert_eq!(show(m, &unit, "ActiveState"), "active");
    assert_eq!(state_of(m, "hx"), "active");
    let rescue = journal(m, "hal-rescue.service");
    assert!(
        rescue.contains("hx") && rescue.contains("active"),
        "{rescue}"
    );

    // The user-scope units, installed by a normal user with hal from `cargo install`
    // as the README says, run too.
    m.sh_ok("mkdir -p /home/ana/.cargo/bin && ln -sf /usr/local/bin/hal /home/ana/.cargo/bin/hal");
    let steps = readme_block("With hal from `cargo install` alone");
    let as_ana = |script: &str| {
        format!(
            "runuser -u ana -- env HOME=/home/ana XDG_RUNTIME_DIR=/run/user/1000 sh -c '{}'",
            script.replace('\'', "'\\''")
        )
    };
    m.sh_ok(&as_ana(&format!("set -e; cd {CHECKOUT}\n{steps}")));
    for u in ["hal-watch.service", "hal-rescue.timer"] {
        let state = m.sh_ok(&as_ana(&format!("systemctl --user is-active {u}")));
        assert_eq!(state.trim(), "active", "{u} (user)");
    }
    m.sh_ok(&as_ana("systemctl --user start hal-rescue.service"));
    // Still the first hal watch: it did not die on the way.
    let watch = m.sh_ok(&as_ana(
        "systemctl --user show -p ActiveState -p NRestarts hal-watch.service",
    ));
    assert!(
        watch.contains("ActiveState=active") && watch.contains("NRestarts=0"),
        "{watch}"
    );
}
