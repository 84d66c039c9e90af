//! End to end: one desired state and one start count per engine — a `docker`-group user's stop holds against root's watch, a user who cannot write the state is refused with the fix, a stop something undoes fails naming who, and a start that starts nothing counts nothing.

use std::time::Duration;

use crate::rig::status::ModuleDoc;
use crate::rig::systemd::{self, Scene, Scope};
use crate::rig::watch::Watch;
use crate::rig::{self, Run, eventually, hal, stack};

/// `hal ARGS` in the machine as `user` (root: no `runuser`), with the
/// scene's config and services root and no `HAL_STATE_DIR`: the state is
/// whatever hal itself picks.
fn hal_as(s: &Scene, user: &str, args: &[&str]) -> Run {
    let config = format!("HAL_CONFIG={}", s.config_path());
    let mut all: Vec<&str> = Vec::new();
    if user != "root" {
        all.extend(["runuser", "-u", user, "--"]);
    }
    all.extend(["env", "-u", "XDG_RUNTIME_DIR", &config, "NO_COLOR=1", "hal"]);
    all.extend(args);
    rig::run_with_timeout(s.m.exec(&all), Duration::from_secs(180))
}

/// `hal --json status MODULE` as `user`, in the node's own state.
fn status_as(s: &Scene, user: &str, module: &str) -> ModuleDoc {
    ModuleDoc::by(|args| hal_as(s, user, args), &[module])
}

/// bob in the group of the engine's socket (the machine's `docker`), eve in none.
fn users(s: &Scene) {
    s.m.sh_ok(
        "gid=$(stat -c %g /var/run/docker.sock); \
         getent group \"$gid\" >/dev/null || groupadd -g \"$gid\" docker; \
         g=$(getent group \"$gid\" | cut -d: -f1); \
         id bob >/dev/null 2>&1 || useradd -m -G \"$g\" bob; \
         id eve >/dev/null 2>&1 || useradd -m eve",
    );
}

#[test]
fn a_docker_group_users_stop_holds_against_roots_watch_and_both_see_it() {
    let Some(s) = systemd::scene_alone() else {
        return;
    };
    users(&s);
    s.m.sh_ok("rm -rf /var/lib/hal /home/bob/.local/state/hal");
    let x = s.stack("x", stack().service("app").keeps_running());
    let canary = s.stack("canary", stack().service("app").keeps_running());
    // Root's watch, on the node's state, as hal-watch.service runs it.
    let watch = s.unit(
        Scope::System,
        "watch",
        &format!(
            "Environment=HAL_CONFIG={}\nExecStart=/usr/local/bin/hal watch --interval 1s --resync 1s",
            s.config_path()
        ),
    );
    hal_as(&s, "root", &["start", &x, &canary]).expect(0);
    s.m.sh_ok(&format!("systemctl start {watch}"));
    let mode = s.m.sh_ok("stat -c '%a %G' /var/lib/hal");
    assert!(
        mode.starts_with("2775 "),
        "the node's state is group-shared: {mode}"
    );

    let stop = hal_as(&s, "bob", &["stop", &x]);
    stop.expect(0);
    // A module the watch must repair, broken after the stop: once it is back,
    // the watch has read x since (and left it down).
    rig::docker(&["kill", &format!("{canary}-app-1")]);
    let repaired = format!("{canary}: restarted, active");
    let journal = || {
        s.m.sh(&format!("journalctl -u {watch} --no-pager -o cat"))
            .stdout
    };
    assert!(
        eventually(Duration::from_secs(60), || journal().contains(&repaired)),
        "the watch did not repair {canary}:\n{}",
        journal()
    );
    for user in ["root", "bob"] {
        let st = status_as(&s, user, &x);
        assert_eq!(st.state(), "inactive", "{user}: {st}\nstop: {stop}");
    }
    // bob's own start counts in the node's state too: root sees it.
    hal_as(&s, "bob", &["start", &x]).expect(0);
    let st = status_as(&s, "root", &x);
    assert_eq!(st["limit"]["used"], 2, "{st}");

    // A node's state not (yet) shared with the engine's group: bob is refused
    // with the fix, before anything changes; root's next write shares it again.
    s.m.sh_ok("chgrp root /var/lib/hal && chmod 0755 /var/lib/hal");
    let refused = hal_as(&s, "bob", &["stop", &x]);
    assert_eq!(refused.code, Some(1), "{refused}");
    assert!(
        refused
            .stderr
            .contains("/var/lib/hal is not writable by bob")
            && refused.stderr.contains("chgrp -R"),
        "{refused}"
    );
    assert_eq!(status_as(&s, "root", &x).state(), "active");
    let status = hal_as(&s, "bob", &["status", &x]);
    assert_eq!(status.code, Some(0), "bob still reads status: {status}");
    hal_as(&s, "root", &["start", &x]).expect(0);
    let mode = s.m.sh_ok("stat -c '%a %G' /var/lib/hal");
    assert!(
        !mode.contains("root"),
        "root's write shared it again: {mode}"
    );
    assert!(mode.starts_with("2775 "), "{mode}");
    // eve, who may not drive the system engine, keeps her own state (her
    // user units) and is told to join the engine's group for stacks.
    let eve = hal_as(&s, "eve", &["stop", &x]);
    assert!(eve.stderr.contains("usermod -aG"), "{eve}");

    // A private state from an older hal for the same engine: doctor fails.
    s.m.sh_ok(&format!(
        "mkdir -p /home/bob/.local/state/hal && \
         echo '{{\"schema\":1,\"modules\":{{\"{x}\":{{\"desired\":\"down\"}}}}}}' > /home/bob/.local/state/hal/state.json && \
         chown -R bob /home/bob/.local"
    ));
    let doctor = hal_as(&s, "bob", &["doctor"]);
    assert!(
        format!("{}{}", doctor.stdout, doctor.stderr)
            .contains("two states claim the system engine"),
        "{doctor}"
    );
    assert_ne!(doctor.code, Some(0), "{doctor}");
    s.m.sh_ok(&format!(
        "systemctl stop {watch}; rm -rf /var/lib/hal /home/bob/.local/state/hal"
    ));
}

#[test]
fn a_stop_that_a_watch_undoes_exits_1_naming_the_watch() {
    let Some(rig) = rig::engine() else { return };
    let m = rig.stack("undone", stack().service("app").keeps_running());
    hal(&rig).args(["start", &m]).code(0);
    // A watch that keeps its desired state elsewhere (an older hal's, another HAL_STATE_DIR).
    let _watch = Watch::spawn_every(&rig, &[], "1s");
    let other = rig.dir.join("other-state");
    let stop = hal(&rig)
        .env("HAL_STATE_DIR", &other)
        .args(["stop", &m])
        .run();
    assert_eq!(stop.code, Some(1), "{stop}");
    assert!(stop.stderr.contains("hal watch"), "{stop}");
    assert!(stop.stderr.contains("again within"), "{stop}");
}

#[test]
fn starts_that_start_nothing_count_nothing() {
    let Some(rig) = rig::engine() else { return };
    rig.set_config("[defaults]\npull = \"never\"\nrestart = { burst = 3, interval = \"10m\" }\n");
    let m = rig.stack("noop", stack().service("app").keeps_running());
    hal(&rig).args(["start", &m]).code(0);
    let used = |rig: &rig::Rig| rig.status(&m)["limit"]["used"].clone();
    assert_eq!(used(&rig), 1);
    // Settled: the fast path sees every container up for more than a moment.
    rig::past_first_second(&m);
    for _ in 0..10 {
        hal(&rig).args(["start", &m]).code(0);
    }
    assert_eq!(used(&rig), 1, "no-op starts counted");
    let table = hal(&rig).args(["status", &m]).run();
    assert!(table.stdout.contains("1/3"), "{table}");
    // A real start (after a stop) counts.
    hal(&rig).args(["stop", &m]).code(0);
    hal(&rig).args(["start", &m]).code(0);
    assert_eq!(used(&rig), 2);
}

/// `hal --json doctor`'s state-dir line as user 4242, in the engine socket's
/// group or in none, with `home` as HOME (and `XDG_STATE_HOME` when given).
fn state_dir_as(group: bool, home: &std::path::Path, xdg: Option<&std::path::Path>) -> String {
    use std::os::unix::fs::MetadataExt;
    let gid = std::fs::metadata("/var/run/docker.sock").unwrap().gid();
    let mut c = std::process::Command::new("setpriv");
    c.args(["--reuid", "4242", "--regid", "4242"]);
    match group {
        true => c.args(["--groups", &gid.to_string()]),
        false => c.arg("--clear-groups"),
    };
    c.args([
        "env",
        "-i",
        "PATH=/usr/bin:/bin",
        "HAL_CONFIG=/dev/null",
        "NO_COLOR=1",
    ])
    .arg(format!("HOME={}", home.display()))
    .arg(format!("HAL_SERVICES_DIR={}", home.display()));
    if let Some(x) = xdg {
        c.arg(format!("XDG_STATE_HOME={}", x.display()));
    }
    c.args([env!("CARGO_BIN_EXE_hal"), "--json", "doctor"])
        .current_dir(home)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let run = rig::run_with_timeout(c, Duration::from_secs(60));
    let doc = run.json();
    let check = doc["checks"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["name"] == "state-dir"))
        .unwrap_or_else(|| panic!("no state-dir check: {run}"));
    check["detail"].as_str().unwrap_or_default().to_string()
}

/// docs/state-files.md: a user in the `docker` group driving the system engine
/// gets the node's `/var/lib/hal/` (one state per engine), not their own
/// `$XDG_STATE_HOME/hal/`; a user who may not use the system engine keeps their own.
#[test]
fn a_docker_group_user_on_the_system_engine_gets_the_nodes_state() {
    let Some(_rig) = rig::engine() else { return };
    let root = std::process::Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout == b"0\n");
    // setpriv takes another uid only as root.
    if rig::need("setpriv", "--version").is_none()
        || rig::need_that(root, "not root", "run the tests as root (CI does)").is_none()
    {
        return;
    }
    let home = std::env::temp_dir().join(rig::unique("hal-home-"));
    std::fs::create_dir_all(&home).unwrap();
    std::fs::set_permissions(&home, std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
    let xdg = home.join("xdg");
    let grouped = state_dir_as(true, &home, Some(&xdg));
    let alone = state_dir_as(false, &home, Some(&xdg));
    let plain = state_dir_as(false, &home, None);
    let _ = std::fs::remove_dir_all(&home);
    assert!(
        grouped.starts_with("/var/lib/hal") && !grouped.contains(home.to_str().unwrap()),
        "docker group: {grouped}"
    );
    assert!(
        alone.starts_with(xdg.join("hal").to_str().unwrap()),
        "no group: {alone}"
    );
    let local = home.join(".local/state/hal");
    assert!(
        plain.starts_with(local.to_str().unwrap()),
        "no XDG_STATE_HOME: {plain}"
    );
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/state-files.md"))
            .unwrap();
    let flat = readme.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains("State is one per engine: the node's `/var/lib/hal/` for the system engine, whoever drives it (root, its units, and a user in the engine socket's group, `docker`)"),
        "docs/state-files.md no longer says where a docker-group user's state is"
    );
}
