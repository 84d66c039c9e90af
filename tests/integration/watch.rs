//! End to end: `hal watch` restarts what fails, leaves what a person stopped, holds a crash loop, and survives losing the engine.

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::rig::watch::{SUBSCRIBED, Watch, lines_about};
use crate::rig::{self, containers, docker, eventually, hal, path_str, stack};

/// The one container of a single-service module.
pub(crate) fn container_of(m: &str) -> String {
    let names = containers(m);
    assert_eq!(names.len(), 1, "{m}: {names:?}");
    names[0].clone()
}

#[test]
fn watch_restarts_a_killed_container_and_ends_on_sigterm() {
    let Some(rig) = rig::engine() else { return };
    let m = rig.idle("app");
    hal(&rig).args(["module", "start", &m]).code(0);
    let before = docker(&["inspect", "-f", "{{.Id}}", &container_of(&m)]);

    let started = docker(&["inspect", "-f", "{{.State.StartedAt}}", &container_of(&m)]);

    let mut w = Watch::spawn(&rig, &[]);
    docker(&["kill", &container_of(&m)]);
    let why = w.expect(Duration::from_secs(30), |l| {
        l.starts_with(&format!("{m}: repairing: "))
    });
    assert!(why.contains("exited with code 137"), "{why}");
    assert!(
        why.ends_with(&format!("; starting container {m}-app-1 again")),
        "{why}"
    );
    w.expect(Duration::from_secs(45), |l| {
        l.starts_with(&format!("{m}: restarted, active ("))
    });
    assert_eq!(rig.state_of(&m), "active");
    // The same container, started again through the Engine API: no recreate.
    let after = docker(&["inspect", "-f", "{{.Id}}", &container_of(&m)]);
    assert_eq!(before, after, "the container was recreated");
    let again = docker(&["inspect", "-f", "{{.State.StartedAt}}", &container_of(&m)]);
    assert_ne!(started, again, "the container was not started again");
    // The automatic restart counted against the limit.
    let doc = rig.status(&m);
    assert_eq!(doc["limit"]["used"], 2, "{doc}");

    let (code, took) = w.signal("TERM");
    assert_eq!(code, Some(0), "{}", w.dump());
    assert!(took < Duration::from_secs(1), "SIGTERM took {took:?}");
}

/// Between resyncs only the engine's events and the pass (`--interval`) say
/// what to read. A stack made after the watch started, whose container died
/// before the watch knew of it (its `die` event was about no module then), is
/// read at the next pass and repaired, with no resync to find it.
#[test]
fn a_stack_made_after_the_watch_started_is_read_at_the_next_pass() {
    let Some(rig) = rig::engine() else { return };
    // A stack from the start, so the watch is connected to the engine's events.
    rig.idle("first");
    let mut w = Watch::spawn_with(&rig, &[], &["--interval", "10s", "--resync", "1h"]);
    // Its first pass (which would find any stack) is over, the next is 10 s on.
    w.expect(Duration::from_secs(20), |l| l == SUBSCRIBED);
    let m = rig.stack("late", stack().service("app").runs("exit 3"));
    hal(&rig).args(["module", "start", "--no-wait", &m]).code(0);
    let why = w.expect(Duration::from_secs(30), |l| {
        l.starts_with(&format!("{m}: repairing: "))
    });
    assert!(why.contains("exited with code 3"), "{why}");
}

#[test]
fn watch_restarts_a_container_that_stays_unhealthy() {
    let Some(rig) = rig::engine() else { return };
    let m = rig.stack(
        "sick",
        stack()
            .service("app")
            .runs("touch /tmp/ok; sleep 100000")
            .keeps_running()
            .healthcheck("/tmp/ok", "interval: 1s\ntimeout: 1s\nretries: 1"),
    );
    hal(&rig).args(["module", "start", &m]).code(0);
    let mut w = Watch::spawn_json(&rig, "3s");
    let c = container_of(&m);
    let cut = Instant::now();
    docker(&["exec", &c, "rm", "/tmp/ok"]);
    assert!(
        eventually(Duration::from_secs(20), || rig.state_of(&m) == "degraded"),
        "the container did not turn unhealthy"
    );
    let line = w.expect_json(Duration::from_secs(30), |d| {
        d["module"] == m.as_str() && d["event"] == "trouble"
    });
    assert!(
        cut.elapsed() >= Duration::from_secs(3),
        "restarted before the grace period: {line}"
    );
    assert_eq!(line["action"], "restart", "{line}");
    let reason = line["reason"].as_str().unwrap();
    assert!(reason.starts_with("service app unhealthy for "), "{reason}");
    assert!(line["time"].as_str().unwrap().ends_with('Z'), "{line}");
    let done = w.expect_json(Duration::from_secs(45), |d| {
        d["module"] == m.as_str() && d["event"] == "restarted"
    });
    assert_eq!(done["state"], "active", "{done}");
    assert!(done["took_ms"].as_u64().is_some(), "{done}");
    assert_eq!(rig.state_of(&m), "active");
}

#[test]
fn watch_leaves_alone_what_a_person_stopped_or_hal_never_started() {
    let Some(rig) = rig::engine() else { return };
    let stopped = rig.idle("stopped");
    let foreign = rig.idle("foreign");
    let never = rig.idle("never");
    let canary = rig.idle("canary");
    hal(&rig)
        .args(["module", "start", &stopped, &canary])
        .code(0);
    // Started by plain compose, not by hal: no desired state.
    let file = rig.root.join(&foreign).join("compose.yaml");
    let up = Command::new("docker")
        .args(["compose", "-p", &foreign, "-f", path_str(&file), "up", "-d"])
        .output()
        .unwrap();
    assert!(up.status.success(), "{up:?}");

    let mut w = Watch::spawn(&rig, &[]);
    hal(&rig).args(["module", "stop", &stopped]).code(0);
    docker(&["kill", &container_of(&foreign)]);
    // The events of the stop and the kill are decided on once the canary,
    // killed after them, is back; `never` was read at the first pass.
    let lines = w.canary(&canary);
    for m in [&stopped, &foreign, &never] {
        let about: Vec<&String> = lines_about(&lines, m, "");
        assert!(about.is_empty(), "{m} was touched: {about:?}\n{}", w.dump());
    }
    assert!(containers(&stopped).is_empty());
    assert!(containers(&never).is_empty());
    let st = docker(&[
        "inspect",
        "-f",
        "{{.State.Status}}",
        &container_of(&foreign),
    ]);
    assert_eq!(st.trim(), "exited");

    let (code, took) = w.signal("INT");
    assert_eq!(code, Some(0), "{}", w.dump());
    assert!(took < Duration::from_secs(1), "SIGINT took {took:?}");
}

#[test]
fn a_crash_loop_under_watch_is_held_after_burst_restarts_and_on_failure_runs() {
    let Some(rig) = rig::engine() else { return };
    let m = rig.stack(
        "loop",
        stack()
            .service("app")
            .runs("echo crashing; exit 3")
            .keeps_running(),
    );
    let marker = rig.dir.join("on_failure.txt");
    rig.set_config(&format!(
        "[defaults]\npull = \"never\"\n\n[module.{m}]\nrestart = {{ burst = 3, interval = \"10m\" }}\non_failure = [\"/bin/sh\", \"-c\", \"echo \\\"$HAL_MODULE|$HAL_REASON\\\" > {}; echo notified\"]\n",
        marker.display()
    ));
    // Nobody but the owner may write the config or its directory.
    std::fs::set_permissions(&rig.config, std::fs::Permissions::from_mode(0o600)).unwrap();
    std::fs::set_permissions(&rig.dir, std::fs::Permissions::from_mode(0o700)).unwrap();

    // The first start counts too, and fails: Docker restarts the service in a loop.
    hal(&rig)
        .args(["module", "start", "--timeout", "30s", &m])
        .code(1);
    let canary = rig.idle("canary");
    hal(&rig).args(["module", "start", &canary]).code(0);
    let mut w = Watch::spawn(&rig, &[]);
    let held = w.expect(Duration::from_secs(50), |l| {
        l.starts_with(&format!("{m}: held: "))
    });
    assert!(held.contains("start limit hit: 3 starts in 10m"), "{held}");
    assert!(held.ends_with("; running on_failure"), "{held}");
    w.expect(Duration::from_secs(20), |l| {
        l.starts_with(&format!("{m}: on_failure exited with 0 ("))
    });
    // Burst 3 = the first start, the repair of the looping container, and,
    // as that did not bring it back, the module's recreate.
    let repairs = lines_about(&w.seen, &m, "repairing: ");
    let recreates = lines_about(&w.seen, &m, "recreating the module: ");
    assert_eq!(
        (repairs.len(), recreates.len()),
        (1, 1),
        "one repair, then one recreate\n{}",
        w.dump()
    );
    assert!(
        repairs[0].contains("is restarting in a loop")
            && repairs[0].ends_with(&format!("; restarting container {m}-app-1")),
        "{}",
        repairs[0]
    );
    assert!(
        recreates[0].ends_with("; the repair of its containers did not bring it back"),
        "{}",
        recreates[0]
    );
    let at = |l: &String| w.seen.iter().position(|x| x == l).unwrap();
    assert!(at(repairs[0]) < at(recreates[0]) && at(recreates[0]) < at(&held));
    assert!(
        !lines_about(&w.seen, &m, "on_failure: notified").is_empty(),
        "its output is logged\n{}",
        w.dump()
    );
    let note = std::fs::read_to_string(&marker).unwrap();
    assert!(note.starts_with(&format!("{m}|")), "{note}");
    assert!(note.contains("start limit hit"), "{note}");

    // Held: no more restarts, on_failure does not run again, status says failed
    // (its deaths since are decided on once the canary is back).
    let later = w.canary(&canary);
    assert!(
        lines_about(&later, &m, "restarting").is_empty()
            && lines_about(&later, &m, "repairing").is_empty()
            && lines_about(&later, &m, "recreating").is_empty()
            && lines_about(&later, &m, "held").is_empty(),
        "{later:?}"
    );
    let doc = rig.status(&m);
    assert_eq!(doc["state"], "failed", "{doc}");
    // Held, and until when: in the document and in the table.
    let held_doc = &doc["held"];
    assert!(
        held_doc["until"].as_str().is_some_and(|u| u.ends_with('Z')),
        "{doc}"
    );
    assert!(
        held_doc["reason"]
            .as_str()
            .unwrap()
            .contains("start limit hit"),
        "{doc}"
    );
    let table = hal(&rig).args(["status", &m]).run();
    assert!(
        table.stdout.contains("held by hal watch until "),
        "{table:?}"
    );
    assert!(
        doc["reason"].as_str().unwrap().contains("start limit hit"),
        "{doc}"
    );
}

#[test]
fn on_failure_is_refused_from_a_config_others_may_write() {
    let Some(rig) = rig::engine() else { return };
    let m = rig.stack(
        "loop",
        stack().service("app").runs("exit 3").keeps_running(),
    );
    let marker = rig.dir.join("ran");
    rig.set_config(&format!(
        "[defaults]\npull = \"never\"\n\n[module.{m}]\nrestart = {{ burst = 1, interval = \"10m\" }}\non_failure = [\"/bin/touch\", \"{}\"]\n",
        marker.display()
    ));
    std::fs::set_permissions(&rig.config, std::fs::Permissions::from_mode(0o666)).unwrap();
    hal(&rig)
        .args(["module", "start", "--timeout", "30s", &m])
        .code(1);
    let mut w = Watch::spawn(&rig, &[]);
    w.expect(Duration::from_secs(30), |l| {
        l.starts_with(&format!("{m}: held: ")) && l.ends_with("; on_failure not run")
    });
    let why = w.expect(Duration::from_secs(5), |l| {
        l.starts_with(&format!("{m}: on_failure not run: "))
    });
    assert!(
        why.contains("is writable by group and others (mode 0666"),
        "{why}"
    );
    // That line is the decision: the hook is never queued once it is printed
    // (src/watch/act.rs `held`), so the marker is checked at once, not after a wait.
    assert!(!marker.exists(), "on_failure ran from an untrusted config");
}

/// The config is read again as a whole while the watch runs, as compose reads
/// it at each `up`: a start limit and an `on_failure` added then count. One
/// that cannot be read keeps the one before, said once.
#[test]
fn the_watch_reads_the_whole_config_again_and_keeps_the_old_one_while_it_is_broken() {
    let Some(rig) = rig::engine() else { return };
    let m = rig.idle("app");
    let marker = rig.dir.join("on_failure.txt");
    let config = |s: &str| format!("[defaults]\npull = \"never\"\n\n[module.{m}]\n{s}");
    rig.set_config(&config("restart = { burst = 100, interval = \"10m\" }\n"));
    std::fs::set_permissions(&rig.config, std::fs::Permissions::from_mode(0o600)).unwrap();
    std::fs::set_permissions(&rig.dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    hal(&rig).args(["module", "start", &m]).code(0);
    let mut w = Watch::spawn_with(&rig, &[], &["--interval", "2s", "--resync", "1h"]);
    w.expect(Duration::from_secs(20), |l| l == SUBSCRIBED);

    let kept = "watch: config not read again, the one before is kept: ";
    rig.set_config(&config("restart = {\n"));
    w.expect(Duration::from_secs(15), |l| l.starts_with(kept));
    rig.set_config(&config("restart = {\n\n"));
    w.collect_for(Duration::from_secs(5));
    let said = w.seen.iter().filter(|l| l.starts_with(kept)).count();
    assert_eq!(said, 1, "{}", w.dump());

    rig.set_config(&config(&format!(
        "restart = {{ burst = 1, interval = \"10m\" }}\non_failure = [\"/bin/sh\", \"-c\", \"echo \\\"$HAL_MODULE\\\" > {}\"]\n",
        marker.display()
    )));
    w.expect(Duration::from_secs(15), |l| l == "watch: config read again");
    docker(&["stop", "-t", "0", &container_of(&m)]);
    let held = w.expect(Duration::from_secs(30), |l| {
        l.starts_with(&format!("{m}: held: "))
    });
    assert!(held.ends_with("; running on_failure"), "{held}");
    w.expect(Duration::from_secs(20), |l| {
        l.starts_with(&format!("{m}: on_failure exited with 0 ("))
    });
    let note = std::fs::read_to_string(&marker).unwrap_or_default();
    assert_eq!(note.trim(), m, "{}", w.dump());
}

/// The config file is looked at every second, not only at each pass: under
/// a JSON watch whose passes are an hour apart, a config broken and then
/// fixed is said (`problem`: the one before is kept), then read again.
#[test]
fn the_json_watch_says_a_config_broken_and_fixed_between_two_passes() {
    let Some(rig) = rig::engine() else { return };
    let m = rig.idle("app");
    let config = |s: &str| format!("[defaults]\npull = \"never\"\n\n[module.{m}]\n{s}");
    rig.set_config(&config("restart = { burst = 100, interval = \"10m\" }\n"));
    let mut w = Watch::spawn_json_with(&rig, &["--interval", "1h", "--resync", "1h"]);
    w.expect_json(Duration::from_secs(20), |d| d["event"] == "subscribed");

    rig.set_config(&config("restart = {\n"));
    let broken = w.expect_json(Duration::from_secs(10), |d| d["event"] == "problem");
    let why = broken["reason"].as_str().unwrap_or_default();
    assert!(
        why.starts_with("config not read again, the one before is kept: "),
        "{}",
        w.dump()
    );
    assert!(broken["module"].is_null(), "{}", w.dump());
    rig.set_config(&config("restart = { burst = 1, interval = \"10m\" }\n"));
    w.expect_json(Duration::from_secs(10), |d| d["event"] == "config_read");
}

/// The JSON watch's `dependencies_changed` says what its text line says:
/// how many edges it read (`edges`), and the line's words (`reason`).
#[test]
fn the_json_watch_says_how_many_edges_it_read_again() {
    let Some(rig) = rig::engine() else { return };
    let (db, app) = (rig.idle("db"), rig.idle("app"));
    let pull = "[defaults]\npull = \"never\"\n";
    rig.set_config(pull);
    let mut w = Watch::spawn_json_with(&rig, &["--interval", "2s", "--resync", "1h"]);
    w.expect_json(Duration::from_secs(20), |d| d["event"] == "subscribed");

    rig.set_config(&format!("{pull}\n[module.{app}]\nrequires = [\"{db}\"]\n"));
    let line = w.expect_json(Duration::from_secs(15), |d| {
        d["event"] == "dependencies_changed"
    });
    assert_eq!(line["edges"], 1, "{}", w.dump());
    assert_eq!(
        line["reason"],
        "dependencies read again: 1 edge(s) between modules",
        "{}",
        w.dump()
    );
}

/// A socat proxy to the real Docker socket, in its own process group so that
/// killing it also cuts the connections its forks hold.
struct Proxy {
    sock: String,
    child: Option<Child>,
}

impl Proxy {
    fn start(sock: &str) -> Proxy {
        let mut p = Proxy {
            sock: sock.to_string(),
            child: None,
        };
        p.restart();
        p
    }

    fn restart(&mut self) {
        let child = Command::new("socat")
            .args([
                &format!("UNIX-LISTEN:{},fork,unlink-early", self.sock),
                "UNIX-CONNECT:/var/run/docker.sock",
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .expect("socat (installed by scripts/provision.sh)");
        self.child = Some(child);
        let up = eventually(Duration::from_secs(10), || {
            Command::new("docker")
                .args(["-H", &format!("unix://{}", self.sock), "version"])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        });
        assert!(up, "the socat proxy did not come up");
    }

    fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = Command::new("kill")
                .args(["-KILL", "--", &format!("-{}", c.id())])
                .status();
            let _ = c.wait();
        }
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.kill();
        let _ = std::fs::remove_file(&self.sock);
    }
}

#[test]
fn watch_survives_losing_the_engine_and_acts_again_when_it_returns() {
    let Some(rig) = rig::engine() else { return };
    let Some(()) = rig::need("socat", "-V") else {
        return;
    };
    let m = rig.idle("app");
    hal(&rig).args(["module", "start", &m]).code(0);
    let sock = format!("/tmp/hal-{}.sock", rig.prefix);
    let mut proxy = Proxy::start(&sock);
    let host = format!("unix://{sock}");
    let mut w = Watch::spawn(&rig, &["-H", &host]);
    w.expect(Duration::from_secs(10), |l| {
        l.starts_with("docker: connected to")
    });

    proxy.kill();
    let lost = w.expect(Duration::from_secs(20), |l| {
        l.starts_with("docker: lost connection: ")
    });
    assert!(lost.contains("retrying in 1s"), "{lost}");
    // No busy loop while the engine is away: little CPU, few retries.
    let cpu = w.cpu_ticks();
    let lines = w.collect_for(Duration::from_secs(4));
    let used = w.cpu_ticks() - cpu;
    assert!(
        used < 50,
        "hal watch used {used} ticks of CPU in 4s without an engine\n{}",
        w.dump()
    );
    let retries = lines.iter().filter(|l| l.contains("retrying in")).count();
    assert!(
        (1..=4).contains(&retries),
        "{retries} retries in 4s: {lines:?}"
    );

    // Something fails while the engine is away; watch catches up once it is back.
    docker(&["kill", &container_of(&m)]);
    proxy.restart();
    w.expect(Duration::from_secs(40), |l| {
        l.starts_with("docker: connected again to ")
    });
    w.expect(Duration::from_secs(30), |l| {
        l.starts_with(&format!("{m}: repairing: "))
    });
    w.expect(Duration::from_secs(45), |l| {
        l.starts_with(&format!("{m}: restarted, active ("))
    });
    assert_eq!(rig.state_of(&m), "active");

    // And acts on new events as before.
    docker(&["kill", &container_of(&m)]);
    w.expect(Duration::from_secs(45), |l| {
        l.starts_with(&format!("{m}: restarted, active ("))
    });
}
