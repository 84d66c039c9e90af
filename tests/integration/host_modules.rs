//! Host modules against a real systemd (system and user scope), alone and mixed with a stack.
//!
//! Runs hal inside the shared `hal-systemd:bookworm` container (see
//! `rig/systemd.rs`). Outside CI, a missing Docker or image skips with a
//! notice; with `CI=true` it fails.

use std::time::Duration;

use crate::rig::systemd::{self, Scene, Scope};
use crate::rig::{Run, containers, eventually, run_with_timeout, stack};

const SLEEP: &str = "ExecStart=/bin/sleep infinity";
const FAIL: &str = "ExecStart=/bin/sh -c 'echo boom; exit 3'";
/// Prints `<word> N` every 0.2 s.
fn ticker(word: &str) -> String {
    format!(
        "ExecStart=/bin/sh -c 'i=0; while :; do i=$$((i+1)); echo \"{word} $$i\"; sleep 0.2; done'"
    )
}

fn module(name: &str, unit: &str, scope: Scope) -> String {
    format!(
        "[module.{name}]\nunit = \"{unit}\"\nscope = \"{}\"\n",
        scope.as_str()
    )
}

/// The module `name` in a status or verb document.
fn doc_of(r: &Run, name: &str) -> serde_json::Value {
    r.json()["modules"]
        .as_array()
        .unwrap_or_else(|| panic!("no modules array: {r:#?}"))
        .iter()
        .find(|m| m["name"] == name)
        .unwrap_or_else(|| panic!("{name} missing: {r:#?}"))
        .clone()
}

fn is_rfc3339(v: &serde_json::Value) -> bool {
    v.as_str()
        .is_some_and(|s| s.len() >= 20 && s.ends_with('Z') && s.as_bytes()[10] == b'T')
}

/// The unit's main PID as systemd reports it.
fn main_pid(s: &Scene, scope: Scope, unit: &str) -> String {
    let user = if scope == Scope::User { "--user " } else { "" };
    s.m.sh_ok(&format!("systemctl {user}show -p MainPID --value {unit}"))
        .trim()
        .to_string()
}

fn lifecycle(scope: Scope) {
    let Some(s) = systemd::scene() else { return };
    let unit = s.unit(scope, "sleep", SLEEP);
    s.config(&module("svc", &unit, scope));

    let r = s.status(&["svc"]).code(3);
    assert_eq!(r.state(), "inactive", "{r}");

    let r = s.hal(&["--json", "module", "start", "svc"]);
    r.expect(0);
    let d = doc_of(&r, "svc");
    assert_eq!(d["kind"], "host");
    assert_eq!(d["ok"], true);
    assert_eq!(d["state"], "active", "{r:#?}");

    let r = s.status(&["svc"]).code(0);
    let d = r.entry();
    assert_eq!(d["state"], "active");
    assert!(d["reason"].is_null(), "{d}");
    assert!(is_rfc3339(&d["since"]), "{d}");
    assert_eq!(d["limit"]["used"], 1, "{d}");
    assert_eq!(d["desired"], "up");
    let svc = &d["services"][0];
    assert_eq!(svc["name"], unit.as_str());
    assert_eq!(svc["unit"], unit.as_str());
    assert!(svc["container"].is_null());
    assert_eq!(svc["state"], "active/running");
    assert_eq!(svc["restart_count"], 0);
    assert!(is_rfc3339(&svc["started_at"]), "{svc}");

    let r = s.hal(&["module", "status", "svc"]);
    r.expect(0);
    let row = r.stdout.lines().find(|l| l.contains("svc")).unwrap_or("");
    assert!(row.contains("host") && row.contains("active"), "{r:#?}");

    // Starting a running unit leaves it be.
    let before = main_pid(&s, scope, &unit);
    let r = s.hal(&["--json", "module", "start", "svc"]);
    r.expect(0);
    assert_eq!(doc_of(&r, "svc")["state"], "active", "{r:#?}");
    assert_eq!(main_pid(&s, scope, &unit), before);

    let r = s.hal(&["--json", "module", "restart", "svc"]);
    r.expect(0);
    assert_eq!(doc_of(&r, "svc")["state"], "active", "{r:#?}");
    let after = main_pid(&s, scope, &unit);
    assert_ne!(before, after, "restart kept the same process");
    assert_ne!(after, "0");

    let r = s.hal(&["--json", "module", "stop", "svc"]);
    r.expect(0);
    assert_eq!(doc_of(&r, "svc")["state"], "inactive", "{r:#?}");
    let r = s.status(&["svc"]).code(3);
    let d = r.entry();
    assert_eq!(d["state"], "inactive");
    assert_eq!(d["desired"], "down");
    assert!(d["reason"].as_str().is_some_and(|r| r.contains("inactive")));
    let user = if scope == Scope::User { "--user " } else { "" };
    let active = s.m.sh(&format!("systemctl {user}is-active {unit}"));
    assert_eq!(active.stdout.trim(), "inactive");
}

#[test]
fn lifecycle_system_scope() {
    lifecycle(Scope::System);
}

#[test]
fn lifecycle_user_scope() {
    lifecycle(Scope::User);
}

/// A start of an active unit starts nothing and counts nothing, as `systemctl
/// start` of it and as for a stack (issue 33); a restart still counts.
#[test]
fn starting_an_active_unit_is_free() {
    let Some(s) = systemd::scene() else { return };
    let unit = s.unit(Scope::System, "sleep", SLEEP);
    s.config(&format!(
        "{}restart = {{ burst = 2, interval = \"10m\" }}\n",
        module("svc", &unit, Scope::System)
    ));
    let r = s.hal(&["--json", "module", "start", "svc"]);
    r.expect(0);
    assert_eq!(doc_of(&r, "svc")["changed"], true, "{r:#?}");
    let before = main_pid(&s, Scope::System, &unit);
    // Past `burst`: none of these counts, so none is refused.
    for _ in 0..3 {
        let r = s.hal(&["--json", "module", "start", "svc"]);
        r.expect(0);
        let d = doc_of(&r, "svc");
        assert_eq!(
            (d["changed"].as_bool(), d["state"].as_str()),
            (Some(false), Some("active")),
            "{r:#?}"
        );
    }
    assert_eq!(
        main_pid(&s, Scope::System, &unit),
        before,
        "a start restarted it"
    );
    let r = s.status(&["svc"]).code(0);
    assert_eq!(r["limit"]["used"], 1, "{r:#?}");
    s.hal(&["module", "restart", "svc"]).expect(0);
    let r = s.status(&["svc"]);
    assert_eq!(r["limit"]["used"], 2, "a restart counts: {r:#?}");
    s.hal(&["module", "stop", "svc"]).expect(0);
}

/// `update` of a host unit (issue 32): nothing to pull, so nothing is done and
/// nothing counted, in words a person reads and in the JSON.
#[test]
fn updating_a_unit_has_nothing_to_pull() {
    let Some(s) = systemd::scene() else { return };
    let unit = s.unit(Scope::System, "sleep", SLEEP);
    s.config(&module("upd", &unit, Scope::System));
    s.hal(&["module", "start", "upd"]).expect(0);
    let before = main_pid(&s, Scope::System, &unit);
    let r = s.hal(&["module", "update", "upd"]);
    r.expect(0);
    assert!(
        format!("{}{}", r.stdout, r.stderr).contains("upd: nothing to pull (a host unit)"),
        "{r:#?}"
    );
    for args in [
        &["--json", "update", "upd"][..],
        &["--json", "update", "--check", "upd"],
    ] {
        let r = s.hal(args);
        r.expect(0);
        let d = doc_of(&r, "upd");
        assert_eq!(
            (
                d["changed"].as_bool(),
                d["rolled_back"].as_bool(),
                d["state"].as_str()
            ),
            (Some(false), Some(false), Some("active")),
            "{r:#?}"
        );
    }
    assert_eq!(
        main_pid(&s, Scope::System, &unit),
        before,
        "update restarted it"
    );
    let r = s.status(&["upd"]);
    assert_eq!(r["limit"]["used"], 1, "update counted: {r:#?}");
    s.hal(&["module", "stop", "upd"]).expect(0);
}

fn failing(scope: Scope) {
    let Some(s) = systemd::scene() else { return };
    let unit = s.unit(scope, "fail", FAIL);
    s.config(&module("bad", &unit, scope));

    let r = s.hal(&["module", "start", "bad"]);
    r.expect(1);
    assert!(
        r.stderr.contains("hal: start bad: did not start: ")
            && r.stderr.contains("failed: exit-code, status 3"),
        "{r:#?}"
    );
    assert!(r.stderr.contains("bad | boom"), "no journal lines: {r:#?}");
    assert_eq!(
        r.stderr.lines().filter(|l| l.starts_with("hal: ")).count(),
        1,
        "the error is printed once: {r:#?}"
    );

    let r = s.hal(&["--json", "module", "start", "bad"]);
    r.expect(1);
    let d = doc_of(&r, "bad");
    assert_eq!(d["ok"], false);
    assert_eq!(d["exit_code"], 1);
    assert!(
        d["error"]
            .as_str()
            .is_some_and(|e| e.contains("exit-code, status 3")),
        "{d}"
    );

    let r = s.status(&["bad"]).code(3);
    let d = r.entry();
    assert_eq!(d["state"], "failed");
    assert_eq!(
        d["reason"],
        format!("{unit} failed: exit-code, status 3").as_str()
    );
    assert_eq!(d["services"][0]["exit_code"], 3);
    assert_eq!(d["services"][0]["state"], "failed/failed");

    // Stopped by request, a failed unit reads inactive, as a stopped stack does.
    let r = s.hal(&["--json", "module", "stop", "bad"]);
    r.expect(0);
    assert_eq!(doc_of(&r, "bad")["state"], "inactive", "{r:#?}");

    // A unit the init restarts in a loop until its own start limit stops it.
    let looping = s.unit(
        scope,
        "loop",
        &format!("{FAIL}\nRestart=on-failure\nRestartSec=100ms"),
    );
    s.config(&format!(
        "{}\n{}",
        module("bad", &unit, scope),
        module("loop", &looping, scope)
    ));
    let r = s.hal(&["module", "start", "loop", "--timeout", "30s"]);
    r.expect(1);
    assert!(
        r.stderr.contains("hal: start loop: did not start: "),
        "{r:#?}"
    );
    let r = s.status(&["loop"]).code(3);
    let d = r.entry();
    assert_eq!(d["state"], "failed", "{r:#?}");
    assert!(
        d["services"][0]["restart_count"].as_i64().unwrap() >= 1,
        "{r:#?}"
    );
}

#[test]
fn failing_unit_system_scope() {
    failing(Scope::System);
}

#[test]
fn failing_unit_user_scope() {
    failing(Scope::User);
}

/// journald files the output of a user service that is gone before it looks
/// under no unit at all; the diagnosis still shows it (read by the main PID).
/// A busy journal loses that race often: a flood keeps journald busy while
/// the service starts eight times.
#[test]
fn last_words_of_a_user_service_that_dies_at_once() {
    let Some(s) = systemd::scene() else {
        return;
    };
    let flood = s.unit(
        Scope::System,
        "flood",
        "ExecStart=/bin/sh -c 'while :; do echo flood flood flood; done'",
    );
    s.m.sh_ok(&format!("systemctl start {flood}"));
    // Each run says its own PID, so a line is known to be this run's.
    let body = "ExecStart=/bin/sh -c 'echo boom $$$$; exit 3'\n\n[Unit]\nStartLimitIntervalSec=0";
    let unit = s.unit(Scope::User, "quick", body);
    s.config(&module("quick", &unit, Scope::User));
    for i in 0..8 {
        let r = s.hal(&["module", "start", "quick", "--force"]);
        r.expect(1);
        let pid = main_pid_of(&s, &unit);
        let said = format!("boom {pid}");
        assert!(
            r.stderr.contains(&format!("quick | {said}")),
            "start {i}, {said}: {r:#?}"
        );
        // `logs` finds the last run's words the same way.
        let r = s.hal(&["module", "logs", "quick"]);
        r.expect(0);
        assert!(
            r.stdout.contains(&said),
            "logs after start {i}, {said}: {r:#?}"
        );
    }
}

/// The main PID of a user unit's last run.
fn main_pid_of(s: &Scene, unit: &str) -> String {
    s.m.sh_ok(&format!(
        "systemctl --user show -p ExecMainPID --value {unit}"
    ))
    .trim()
    .to_string()
}

fn missing(scope: Scope) {
    let Some(s) = systemd::scene() else { return };
    let unit = format!("{}-ghost.service", s.id);
    s.config(&module("ghost", &unit, scope));

    let r = s.status(&["ghost"]).code(3);
    let d = r.entry();
    assert_eq!(d["state"], "invalid", "{r:#?}");
    assert_eq!(d["reason"], format!("unit {unit} not found").as_str());

    let r = s.hal(&["module", "start", "ghost"]);
    r.expect(1);
    assert!(
        r.stderr
            .contains(&format!("hal: start ghost: unit {unit} not found")),
        "{r:#?}"
    );
    let r = s.hal(&["module", "stop", "ghost"]);
    r.expect(1);
    assert!(r.stderr.contains("not found"), "{r:#?}");
}

#[test]
fn missing_unit_is_invalid_system_scope() {
    missing(Scope::System);
}

#[test]
fn missing_unit_is_invalid_user_scope() {
    missing(Scope::User);
}

/// Lines of `logs --json` as (module, source, stream, time, message).
fn json_lines(r: &Run) -> Vec<serde_json::Value> {
    r.stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l:?} in {r:#?}")))
        .collect()
}

fn logs(scope: Scope) {
    let Some(s) = systemd::scene() else { return };
    let unit = s.unit(scope, "tick", &ticker("tick"));
    s.config(&module("tk", &unit, scope));
    s.hal(&["module", "start", "tk"]).expect(0);
    let enough = eventually(Duration::from_secs(20), || {
        s.hal(&["module", "logs", "tk"])
            .stdout
            .lines()
            .filter(|l| l.starts_with("tk | tick "))
            .count()
            >= 5
    });
    assert!(enough, "no tick lines in the journal");

    let r = s.hal(&["module", "logs", "tk", "-n", "2"]);
    r.expect(0);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{r:#?}");
    // systemd's own lines about the unit belong to its log too.
    assert!(lines.iter().all(|l| l.starts_with("tk | ")), "{r:#?}");

    let r = s.hal(&["--json", "module", "logs", "tk", "-n", "3"]);
    r.expect(0);
    let docs = json_lines(&r);
    assert_eq!(docs.len(), 3, "{r:#?}");
    for d in &docs {
        assert_eq!(d["module"], "tk");
        assert_eq!(d["source"], unit.as_str());
        assert_eq!(d["stream"], "stdout");
        assert!(is_rfc3339(&d["time"]), "{d}");
        assert!(d["message"].is_string(), "{d}");
    }
    assert!(
        docs.iter()
            .any(|d| d["message"].as_str().unwrap().starts_with("tick ")),
        "{r:#?}"
    );

    let r = s.hal(&[
        "module",
        "logs",
        "tk",
        "--since",
        "1h",
        "--timestamps",
        "-n",
        "1",
    ]);
    r.expect(0);
    assert!(r.stdout.starts_with("tk | 20"), "{r:#?}");

    // Follow: new lines keep coming until hal is interrupted.
    let r = s.m.sh(&format!(
        "env HAL_CONFIG={} HAL_STATE_DIR={}/state timeout -s INT 3 hal module logs -f -n 1 tk",
        s.config_path(),
        s.dir
    ));
    let ticks: Vec<u64> = r
        .stdout
        .lines()
        .filter_map(|l| l.strip_prefix("tk | tick "))
        .filter_map(|n| n.parse().ok())
        .collect();
    assert!(ticks.len() >= 5, "too few followed lines: {r:#?}");
    assert!(ticks.windows(2).all(|w| w[1] == w[0] + 1), "{r:#?}");
    assert!(!r.stderr.contains("panicked"), "{r:#?}");
}

#[test]
fn logs_system_scope() {
    logs(Scope::System);
}

#[test]
fn logs_user_scope() {
    logs(Scope::User);
}

/// A stack printing `web N` every 0.2 s.
fn web_stack(s: &Scene) -> String {
    s.stack(
        "web",
        stack()
            .service("app")
            .runs("i=0; while :; do i=$((i+1)); echo web $i; sleep 0.2; done"),
    )
}

#[test]
fn logs_merge_stacks_and_units_in_time_order() {
    let Some(s) = systemd::scene() else {
        return;
    };
    let web = web_stack(&s);
    let sys = s.unit(Scope::System, "stick", &ticker("sys"));
    let usr = s.unit(Scope::User, "utick", &ticker("usr"));
    s.config(&format!(
        "{}\n{}",
        module("sysl", &sys, Scope::System),
        module("usrl", &usr, Scope::User)
    ));
    s.hal(&["module", "start", &web, "sysl", "usrl"]).expect(0);
    let sources = [(web.as_str(), "web "), ("sysl", "sys "), ("usrl", "usr ")];
    let lines_of = |docs: &[serde_json::Value], module: &str, word: &str| {
        docs.iter()
            .filter(|d| d["module"] == module && d["message"].as_str().unwrap().starts_with(word))
            .count()
    };
    // Every source has said three lines or more.
    let enough = eventually(Duration::from_secs(20), || {
        let docs = json_lines(&s.hal(&["--json", "module", "logs", &web, "sysl", "usrl"]));
        sources.iter().all(|(m, w)| lines_of(&docs, m, w) >= 3)
    });

    let r = s.hal(&["--json", "module", "logs", &web, "sysl", "usrl"]);
    r.expect(0);
    let docs = json_lines(&r);
    for (module, word) in sources {
        let n = lines_of(&docs, module, word);
        assert!(enough && n >= 3, "{module}: only {n} lines in {r:#?}");
    }
    let times: Vec<&str> = docs.iter().map(|d| d["time"].as_str().unwrap()).collect();
    assert!(
        times.windows(2).all(|w| w[0] <= w[1]),
        "not in time order: {times:?}"
    );

    let r = s.hal(&["module", "logs", &web, "sysl", "usrl", "-n", "2"]);
    r.expect(0);
    let prefix = format!("{web}/app |");
    assert_eq!(
        r.stdout.lines().filter(|l| l.starts_with(&prefix)).count(),
        2,
        "{r:#?}"
    );
    // Labels are padded to the widest source.
    assert!(
        r.stdout
            .lines()
            .any(|l| l.starts_with("sysl ") && l.contains(" | sys ")),
        "{r:#?}"
    );
    assert!(
        r.stdout
            .lines()
            .any(|l| l.starts_with("usrl ") && l.contains(" | usr ")),
        "{r:#?}"
    );

    let r = s.m.sh(&format!(
        "env HAL_CONFIG={} HAL_STATE_DIR={}/state timeout -s INT 4 hal --json module logs -f -n 1 {web} sysl usrl",
        s.config_path(),
        s.dir
    ));
    let docs = json_lines(&Run {
        stdout: r
            .stdout
            .lines()
            .filter(|l| l.starts_with('{'))
            .collect::<Vec<_>>()
            .join("\n"),
        ..r
    });
    for module in [web.as_str(), "sysl", "usrl"] {
        let n = docs.iter().filter(|d| d["module"] == module).count();
        assert!(n >= 3, "follow: only {n} lines of {module}");
    }
    s.hal(&["module", "stop", &web, "sysl", "usrl"]).expect(0);
}

#[test]
fn logs_of_units_need_no_docker() {
    let Some(s) = systemd::scene() else {
        return;
    };
    let unit = s.unit(Scope::System, "quiet", &ticker("q"));
    s.config(&module("q", &unit, Scope::System));
    s.hal(&["module", "start", "q"]).expect(0);
    let r = s.hal_with(
        &["DOCKER_HOST=unix:///nonexistent.sock"],
        &["module", "logs", "q", "-n", "1"],
    );
    r.expect(0);
    assert!(r.stdout.starts_with("q | "), "{r:#?}");
    s.status_with(&["DOCKER_HOST=unix:///nonexistent.sock"], &["q"])
        .code(0);
}

#[test]
fn missing_user_bus_is_exit_6_with_the_fix() {
    let Some(s) = systemd::scene() else {
        return;
    };
    let unit = s.unit(Scope::User, "sleep", SLEEP);
    let sys = s.unit(Scope::System, "sleep", SLEEP);
    s.config(&format!(
        "{}\n{}",
        module("usermod", &unit, Scope::User),
        module("sysmod", &sys, Scope::System)
    ));
    let no_bus = ["env", "-u", "XDG_RUNTIME_DIR"];

    let r = s.hal_with(&no_bus, &["module", "start", "usermod"]);
    r.expect(6);
    assert_eq!(
        r.stderr.trim(),
        "hal: start usermod: user manager not reachable: XDG_RUNTIME_DIR is not set (running under sudo or cron?): run as the user in a login session, or export XDG_RUNTIME_DIR=/run/user/0",
        "{r:#?}"
    );
    assert!(r.took < Duration::from_secs(10), "{r:#?}");

    let r = s.status_with(&no_bus, &["usermod", "sysmod"]).code(6);
    let d = r.entry();
    assert_eq!(d["state"], "unknown");
    assert!(
        d["reason"]
            .as_str()
            .unwrap()
            .contains("XDG_RUNTIME_DIR is not set")
    );
    // The system manager needs no user bus.
    assert_eq!(r.module("sysmod")["state"], "inactive");
    s.hal_with(&no_bus, &["module", "start", "sysmod"])
        .expect(0);

    // What sudo leaves behind: root, no runtime dir, SUDO_USER set.
    let r = s.hal_with(
        &["env", "-u", "XDG_RUNTIME_DIR", "SUDO_USER=ana"],
        &["module", "start", "usermod"],
    );
    r.expect(6);
    assert!(
        r.stderr
            .contains("(running under sudo): run hal as ana without sudo"),
        "{r:#?}"
    );

    // A runtime dir without a bus in it.
    let r = s.hal_with(&["XDG_RUNTIME_DIR=/tmp"], &["module", "start", "usermod"]);
    r.expect(6);
    assert!(
        r.stderr.contains("no user bus in XDG_RUNTIME_DIR=/tmp"),
        "{r:#?}"
    );

    // Another user's runtime dir (su without a login).
    let r = s.hal_with(
        &[
            "runuser",
            "-u",
            "ana",
            "--",
            "env",
            "HAL_STATE_DIR=/tmp/ana-state",
        ],
        &["module", "start", "usermod"],
    );
    r.expect(6);
    assert!(
        r.stderr
            .contains("XDG_RUNTIME_DIR=/run/user/0 belongs to uid 0, not to this user (uid 1000"),
        "{r:#?}"
    );

    // None of those starts counted against the limit.
    let r = s.status(&["usermod"]).code(3);
    assert_eq!(r["limit"]["used"], 0, "{r:#?}");
    s.hal(&["module", "stop", "sysmod"]).expect(0);
}

#[test]
fn system_unit_as_non_root_says_needs_root() {
    let Some(s) = systemd::scene() else {
        return;
    };
    let sys = s.unit(Scope::System, "sleep", SLEEP);
    s.config(&module("sysmod", &sys, Scope::System));
    let ana = [
        "runuser",
        "-u",
        "ana",
        "--",
        "env",
        "HAL_STATE_DIR=/tmp/ana-sys",
    ];
    let r = s.hal_with(&ana, &["module", "start", "sysmod"]);
    r.expect(1);
    assert!(
        r.stderr
            .starts_with("hal: start sysmod: needs root: run with sudo ("),
        "{r:#?}"
    );
    // Reading the state needs no privilege.
    let r = s.status_with(&ana, &["sysmod"]).code(3);
    assert_eq!(r.state(), "inactive");
}

#[test]
fn non_root_user_units_and_their_split_journal() {
    let Some(s) = systemd::scene() else {
        return;
    };
    let unit = format!("{}-ana.service", s.id);
    let dir = "/home/ana/.config/systemd/user";
    s.m.write(
        &format!("{dir}/{unit}"),
        &format!("[Service]\n{}\n", ticker("ana")),
    );
    s.m.sh_ok(
        "chown -R ana:ana /home/ana/.config && runuser -u ana -- env XDG_RUNTIME_DIR=/run/user/1000 systemctl --user daemon-reload",
    );
    s.config(&module("mine", &unit, Scope::User));
    let as_ana = [
        "runuser",
        "-u",
        "ana",
        "--",
        "env",
        "XDG_RUNTIME_DIR=/run/user/1000",
        "HAL_STATE_DIR=/tmp/ana-own",
    ];
    let r = s.hal_with(&as_ana, &["--json", "module", "start", "mine"]);
    r.expect(0);
    assert_eq!(doc_of(&r, "mine")["state"], "active", "{r:#?}");
    // ana's units log to her own journal file, split from the system journal.
    let split = eventually(Duration::from_secs(20), || {
        s.m.sh("ls /var/log/journal/*/user-1000*.journal").code == Some(0)
    });
    assert!(split, "journald did not split ana's journal");
    let shown = eventually(Duration::from_secs(20), || {
        s.hal_with(&as_ana, &["module", "logs", "mine", "-n", "3"])
            .stdout
            .lines()
            .filter(|l| l.starts_with("mine | ana "))
            .count()
            == 3
    });
    assert!(shown, "ana's unit lines are not shown to ana");
    let r = s.hal_with(&as_ana, &["module", "stop", "mine"]);
    r.expect(0);
    s.m.sh(&format!(
        "rm -f {dir}/{unit}; runuser -u ana -- env XDG_RUNTIME_DIR=/run/user/1000 systemctl --user daemon-reload"
    ));
}

#[test]
fn one_call_mixes_stacks_and_units() {
    let Some(s) = systemd::scene() else {
        return;
    };
    let web = web_stack(&s);
    let sys = s.unit(Scope::System, "sleep", SLEEP);
    let usr = s.unit(Scope::User, "sleep", SLEEP);
    s.config(&format!(
        "{}\n{}",
        module("notifier", &usr, Scope::User),
        module("sysd", &sys, Scope::System)
    ));

    let r = s.hal(&["--json", "module", "start", &web, "notifier", "sysd"]);
    r.expect(0);
    for m in [web.as_str(), "notifier", "sysd"] {
        let d = doc_of(&r, m);
        assert_eq!(d["ok"], true, "{m}: {r:#?}");
        assert_eq!(d["state"], "active", "{m}: {r:#?}");
    }
    assert_eq!(doc_of(&r, &web)["kind"], "stack");
    assert_eq!(doc_of(&r, "notifier")["kind"], "host");

    let r = s.status(&[&web, "notifier", "sysd"]).code(0);
    assert_eq!(
        r.services()[0]["container"],
        format!("{web}-app-1").as_str()
    );
    assert_eq!(r.module("sysd")["services"][0]["unit"], sys.as_str());

    let r = s.hal(&["module", "stop", &web, "notifier", "sysd"]);
    r.expect(0);
    for m in [web.as_str(), "notifier", "sysd"] {
        assert!(
            r.stdout
                .lines()
                .any(|l| l.starts_with(&format!("{m}: inactive"))),
            "{m}: {r:#?}"
        );
    }
    assert!(containers(&web).is_empty());
    let r = s.status(&[&web, "notifier", "sysd"]).code(3);
    for m in [web.as_str(), "notifier", "sysd"] {
        assert_eq!(r.module(m)["state"], "inactive", "{m}: {r:#?}");
    }
}

#[test]
fn missing_systemctl_is_named() {
    let Some(s) = systemd::scene() else {
        return;
    };
    let unit = s.unit(Scope::System, "sleep", SLEEP);
    s.config(&module("sysmod", &unit, Scope::System));
    let config = format!("HAL_CONFIG={}", s.config_path());
    let state = format!("HAL_STATE_DIR={}/state", s.dir);
    let hal = s.m.sh_ok("command -v hal").trim().to_string();
    let cmd = s.m.exec(&[
        "env",
        &config,
        &state,
        "PATH=/nonexistent",
        &hal,
        "module",
        "start",
        "sysmod",
    ]);
    let r = run_with_timeout(cmd, Duration::from_secs(60));
    assert!(matches!(r.code, Some(1) | Some(6)), "{r:#?}");
    assert!(r.stderr.starts_with("hal: start sysmod: "), "{r:#?}");
    assert!(
        r.stderr.contains("systemctl"),
        "the message must name systemctl: {r:#?}"
    );
    assert_eq!(r.stderr.lines().count(), 1, "{r:#?}");
}
