//! `hal adopt` on a live node inside a real systemd: the seed's `hal-module@` template in root's user scope runs two stacks (one enabled); adopt takes them over with no container recreated, survives a SIGKILL half-way, refuses a unit of another shape, and after a reboot the shipped units bring back what should run and leave down what a person stopped.
//!
//! The machine is this test's own `hal-systemd:bookworm` machine (rig/machine.rs;
//! it is restarted, as a reboot, so it cannot be the shared one of `rig/systemd.rs`).
//! hal runs in it as root with its defaults (/etc/hal/hal.toml, /var/lib/hal),
//! as the shipped system-scope units run it.

use std::time::{Duration, Instant};

use crate::rig::guard::Lease;
use crate::rig::machine::{self, IMAGE, Machine, Spec, USER_RUNTIME};
use crate::rig::{docker, eventually, missing, stack};

/// The seed's template (../shared/context/), with `--pull missing` for `always`:
/// no registry is reachable here.
const TEMPLATE: &str = "[Unit]
Description=hal module %i
StartLimitIntervalSec=120
StartLimitBurst=5

[Service]
ExecStart=docker compose --project-directory /services/%i --project-name %i up --remove-orphans --pull missing
ExecStop=docker compose --project-directory /services/%i --project-name %i down
Restart=on-failure

[Install]
WantedBy=default.target
";

fn unit_prop(m: &Machine, unit: &str, prop: &str) -> String {
    m.sh_ok(&format!("systemctl --user show -p {prop} --value {unit}"))
        .trim()
        .to_string()
}

/// `ID STARTEDAT` of a container: the same only if it was never recreated nor restarted.
fn identity(container: &str) -> String {
    docker(&["inspect", "-f", "{{.Id}} {{.State.StartedAt}}", container])
}

/// Waits until `hal status` says every one of `modules` is active.
#[track_caller]
fn await_active(m: &Machine, modules: &[&str]) {
    assert!(
        eventually(Duration::from_secs(30), || modules
            .iter()
            .all(|s| status_of(m, s).0 == "active")),
        "not active: {:?}",
        modules.iter().map(|s| status_of(m, s)).collect::<Vec<_>>()
    );
}

fn status_of(m: &Machine, module: &str) -> (String, String) {
    let r = m.sh(&format!("hal --json status {module}"));
    let doc: serde_json::Value =
        serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("status --json: {e}\n{r:#?}"));
    let s = &doc["modules"][0];
    (
        s["state"].as_str().unwrap_or_default().to_string(),
        s["desired"].as_str().unwrap_or("-").to_string(),
    )
}

#[track_caller]
fn boot(run: &str) -> Option<Machine> {
    if let Some(why) = machine::missing(IMAGE) {
        return missing(&why, "run scripts/provision.sh");
    }
    let m = Machine::boot(Spec {
        name: &format!("{run}-machine"),
        run,
        label: "adopt",
        image: IMAGE,
        mounts: vec![Spec::hal_under_test()],
        env: Spec::root_user_manager(),
    });
    m.user_manager("root", 0);
    Some(m)
}

#[test]
fn adopt_takes_a_live_node_over_with_no_container_restarted_and_boot_brings_back_what_should_run() {
    let _engine = Lease::shared();
    let p = format!("hadopt{}", std::process::id());
    let Some(m) = boot(&p) else { return };
    let [a, b, c, d, e] = ["a", "b", "c", "d", "e"].map(|s| format!("{p}-{s}"));
    m.write("/root/.config/systemd/user/hal-module@.service", TEMPLATE);
    for s in [&a, &b, &c, &d, &e] {
        m.write(
            &format!("/services/{s}/compose.yaml"),
            &stack().service("app").to_string(),
        );
    }
    m.write(
        "/etc/hal/hal.toml",
        "services_dir = \"/services\"\n\n[defaults]\npull = \"missing\"\n",
    );
    // c's instance is not the template's shape: another ExecStart.
    m.write(
        &format!("/root/.config/systemd/user/hal-module@{c}.service.d/other.conf"),
        "[Service]\nExecStart=\nExecStart=/bin/sh -c 'exec sleep infinity'\n",
    );
    m.sh_ok(&format!(
        "systemctl --user daemon-reload && systemctl --user enable --now hal-module@{a} \
         && systemctl --user start hal-module@{b} hal-module@{c}"
    ));
    let (ca, cb) = (format!("{a}-app-1"), format!("{b}-app-1"));
    assert!(
        eventually(Duration::from_secs(60), || {
            docker(&["ps", "--format", "{{.Names}}"]).contains(&ca)
                && docker(&["ps", "--format", "{{.Names}}"]).contains(&cb)
        }),
        "the template did not start the stacks"
    );
    // Up for hal too (a container counts once it has stayed up a moment):
    // adopt records what it sees.
    await_active(&m, &[&a, &b]);
    let (ia, ib) = (identity(&ca), identity(&cb));

    // --dry-run: the plan, c refused by name, and nothing changed.
    const SNAPSHOT: &str = "systemctl --user list-units --all --plain --no-legend 'hal-module@*'; systemctl --user list-unit-files --plain --no-legend; ls -R /run/user/0/systemd 2>&1; ls -R /var/lib/hal 2>&1";
    let units_before = m.sh(SNAPSHOT).stdout;
    let dry = m.sh("hal --json adopt --dry-run");
    assert_eq!(dry.code, Some(0), "{dry:#?}");
    let plan: serde_json::Value = serde_json::from_str(&dry.stdout).unwrap();
    let step = |name: &str| {
        plan["modules"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("{name} not in the plan: {plan}"))
    };
    assert_eq!(step(&a)["desired"], "up");
    assert_eq!(step(&b)["desired"], "up");
    assert!(step(&a)["refused"].is_null() && step(&b)["refused"].is_null());
    let why = step(&c)["refused"].as_str().unwrap_or_default().to_string();
    assert!(
        why.contains(&format!("hal-module@{c}.service")) && why.contains("/bin/sh"),
        "{why}"
    );
    assert_eq!(
        units_before,
        m.sh(SNAPSHOT).stdout,
        "--dry-run changed something"
    );
    // No terminal and no --yes: exit 2, nothing done.
    assert_eq!(m.sh("hal adopt").code, Some(2));

    // Adopt: exit 1 (c was refused and is left alone), a and b handed over.
    let began = Instant::now();
    let run = m.sh("hal adopt --yes");
    let took = began.elapsed();
    assert_eq!(run.code, Some(1), "{run:#?}");
    // The machine's engine keeps logs per container: adopt says history ends
    // there (the template's unit journal kept it) and how to keep it.
    assert!(
        run.stderr.contains("module history is not kept")
            && run.stderr.contains("\"log-driver\": \"journald\""),
        "{run:#?}"
    );
    assert!(
        run.stderr
            .lines()
            .any(|l| l.starts_with(&format!("hal: adopt {c}: refused: "))),
        "{run:#?}"
    );
    assert!(!run.stderr.contains("hal: hal: "), "{run:#?}");
    for (unit, container, before) in [(&a, &ca, &ia), (&b, &cb, &ib)] {
        let u = format!("hal-module@{unit}.service");
        assert_eq!(unit_prop(&m, &u, "ActiveState"), "inactive", "{u}");
        assert_eq!(unit_prop(&m, &u, "UnitFileState"), "disabled", "{u}");
        assert_eq!(&identity(container), before, "{container} was restarted");
        assert_eq!(status_of(&m, unit), ("active".into(), "up".into()));
    }
    assert_eq!(
        unit_prop(&m, &format!("hal-module@{c}.service"), "ActiveState"),
        "active"
    );
    eprintln!("adopt of 2 modules took {:.1}s", took.as_secs_f64());
    // The next start is a no-op: the same container.
    m.sh_ok(&format!("hal module start {a}"));
    assert_eq!(
        identity(&ca),
        ia,
        "the first start after adopt recreated {ca}"
    );
    m.sh_ok(&format!(
        "systemctl --user stop hal-module@{c} && rm -r /root/.config/systemd/user/hal-module@{c}.service.d && systemctl --user daemon-reload"
    ));

    // A SIGKILL half-way (its units disarmed, not yet handed over), then a rerun.
    m.sh_ok(&format!(
        "systemctl --user enable --now hal-module@{d} && systemctl --user start hal-module@{e}"
    ));
    let (cd, ce) = (format!("{d}-app-1"), format!("{e}-app-1"));
    assert!(eventually(Duration::from_secs(60), || {
        let ps = docker(&["ps", "--format", "{{.Names}}"]);
        ps.contains(&cd) && ps.contains(&ce)
    }));
    await_active(&m, &[&d, &e]);
    let (id_, ie) = (identity(&cd), identity(&ce));
    let drop_in =
        format!("{USER_RUNTIME}/systemd/user.control/hal-module@{d}.service.d/zz-hal-adopt.conf");
    m.sh_ok(&format!(
        "hal adopt --yes >/dev/null 2>&1 & pid=$!; \
         while [ ! -e {drop_in} ]; do sleep 0.005; done; kill -KILL $pid; wait $pid; true"
    ));
    // Killed: d's unit is still disarmed or already handed over; its containers run.
    assert_eq!(identity(&cd), id_);
    let half = m.sh_ok("hal adopt --dry-run");
    assert!(half.contains(&d) || half.trim().is_empty(), "{half}");
    let rerun = m.sh("hal adopt --yes");
    assert_eq!(rerun.code, Some(0), "{rerun:#?}");
    for (unit, container, before) in [(&d, &cd, &id_), (&e, &ce, &ie)] {
        let u = format!("hal-module@{unit}.service");
        assert_eq!(unit_prop(&m, &u, "ActiveState"), "inactive", "{u}");
        assert_eq!(unit_prop(&m, &u, "UnitFileState"), "disabled", "{u}");
        assert_eq!(unit_prop(&m, &u, "DropInPaths"), "", "{u}");
        assert_eq!(&identity(container), before, "{container} was restarted");
        assert_eq!(status_of(&m, unit), ("active".into(), "up".into()));
    }
    // A second run changes nothing.
    let state = m.sh_ok("cat /var/lib/hal/state.json");
    let again = m.sh("hal adopt --yes");
    assert_eq!(again.code, Some(0), "{again:#?}");
    assert!(again.stderr.contains("nothing to adopt"), "{again:#?}");
    assert_eq!(state, m.sh_ok("cat /var/lib/hal/state.json"));

    // The shipped system-scope units, enabled as dist/systemd/README.md says.
    enable_shipped_units(&m, "system");
    let doctor = m.sh("hal --json doctor");
    let doc: serde_json::Value = serde_json::from_str(&doctor.stdout).unwrap();
    let failing: Vec<&serde_json::Value> = doc["checks"]
        .as_array()
        .unwrap()
        .iter()
        // The machine's engine keeps logs per container; history.rs tests that check.
        .filter(|c| c["ok"] != true && c["name"] != "history")
        .collect();
    assert!(
        failing.is_empty(),
        "doctor on an adopted node: {failing:#?}"
    );

    // A killed container is brought back by the shipped hal-watch.service.
    assert!(eventually(Duration::from_secs(20), || m
        .sh("journalctl -u hal-watch.service --no-pager -o cat")
        .stdout
        .contains("watch: watching")));
    docker(&["kill", &ca]);
    assert!(
        eventually(Duration::from_secs(120), || status_of(&m, &a).0 == "active"),
        "hal watch did not bring {a} back:\n{}",
        m.sh("journalctl -u hal-watch.service --no-pager -o cat")
            .stdout
    );

    // Boot, with the shipped system-scope units and then the user-scope ones
    // (root's lingering user manager starts them): b is stopped by a person;
    // every container stops, as at a reboot; the machine restarts. a comes
    // back, b stays down.
    m.sh_ok(&format!("hal module stop {b}"));
    for scope in ["system", "user"] {
        if scope == "user" {
            m.sh_ok("systemctl disable --now hal-watch.service hal-rescue.timer");
            enable_shipped_units(&m, "user");
        }
        for s in [&a, &d, &e] {
            docker(&["stop", &format!("{s}-app-1")]);
        }
        m.reboot();
        m.user_manager("root", 0);
        let back = eventually(Duration::from_secs(150), || {
            [&a, &d, &e]
                .iter()
                .all(|s| status_of(&m, s) == ("active".into(), "up".into()))
        });
        let journal = match scope {
            "system" => "journalctl -b -u hal-watch.service --no-pager -o cat",
            _ => "journalctl -b --user-unit hal-watch.service --no-pager -o cat",
        };
        assert!(
            back,
            "after the reboot ({scope} scope): {:?}\n{}",
            [&a, &d, &e].map(|s| status_of(&m, s)),
            m.sh(journal).stdout
        );
        assert_eq!(status_of(&m, &b), ("inactive".into(), "down".into()));
    }
    for s in [&a, &b, &d, &e] {
        assert_eq!(
            unit_prop(&m, &format!("hal-module@{s}.service"), "ActiveState"),
            "inactive",
            "a hal-module@ unit came back at boot"
        );
    }
}

/// Installs the shipped hal-watch and hal-rescue units of `scope` (`system`
/// or `user`) and enables them as dist/systemd/README.md says.
fn enable_shipped_units(m: &Machine, scope: &str) {
    let (dir, systemctl) = match scope {
        "system" => ("/etc/systemd/system", "systemctl"),
        _ => ("/root/.config/systemd/user", "systemctl --user"),
    };
    let dist = format!("{}/dist/systemd/{scope}", env!("CARGO_MANIFEST_DIR"));
    for u in [
        "hal-watch.service",
        "hal-rescue.service",
        "hal-rescue.timer",
    ] {
        let text = std::fs::read_to_string(format!("{dist}/{u}"))
            .unwrap()
            .replace("/usr/bin/hal", "/usr/local/bin/hal");
        m.write(&format!("{dir}/{u}"), &text);
    }
    m.sh_ok(&format!(
        "{systemctl} daemon-reload && {systemctl} enable --now hal-watch.service hal-rescue.timer"
    ));
}
