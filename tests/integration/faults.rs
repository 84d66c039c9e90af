//! End to end: signals, a missing or babbling compose, a cut socket, and planted symlinks — each gets a clear message and its exit code.

use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::rig::{self, ComposeCalls, Rig, await_line, eventually, hal, script, stack, wait_child};

/// A stack that takes a minute to turn healthy: hal waits for it.
fn slow_to_health() -> rig::compose::Stack {
    stack().service("app").healthy_after(60).keeps_running()
}

fn signal(child: &Child, sig: &str) {
    Command::new("kill")
        .args([sig, &child.id().to_string()])
        .status()
        .unwrap();
}

/// A compose stand-in: answers `version` like v2, sleeps in `up`, recording its pid.
fn slow_compose(rig: &mut Rig) -> std::path::PathBuf {
    let pidfile = rig.dir.join("compose.pid");
    let script = script(
        &rig.dir,
        "slow-compose",
        &format!(
            "#!/bin/sh\ncase \"$*\" in\n  *version*) echo 2.26.1 ;;\n  *config*) exec docker compose \"$@\" ;;\n  *' up '*) echo $$ > '{}'; exec sleep 60 ;;\n  *) exec docker compose \"$@\" ;;\nesac\n",
            pidfile.display()
        ),
    );
    rig.env
        .push(("HAL_COMPOSE".into(), script.display().to_string()));
    pidfile
}

fn alive(pid: &str) -> bool {
    std::path::Path::new(&format!("/proc/{pid}")).exists()
        && !std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .unwrap_or_default()
            .contains(") Z ")
}

#[test]
fn ctrl_c_during_compose_up_exits_130_kills_the_child_and_frees_the_lock() {
    let Some(mut rig) = rig::engine() else { return };
    let pidfile = slow_compose(&mut rig);
    let m = rig.stack("slow", stack().service("app").keeps_running());
    let mut child = hal(&rig).args(["module", "start", &m]).spawn();
    assert!(
        eventually(Duration::from_secs(20), || pidfile.exists()),
        "compose up never ran"
    );
    let compose_pid = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .to_string();
    let sent = Instant::now();
    signal(&child, "-INT");
    let out = wait_child(&mut child, Duration::from_secs(10));
    assert_eq!(out.status.code(), Some(130), "{out:?}");
    assert!(
        sent.elapsed() < Duration::from_secs(3),
        "took {:?}",
        sent.elapsed()
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("hal: interrupted"),
        "{out:?}"
    );
    assert!(
        eventually(Duration::from_secs(5), || !alive(&compose_pid)),
        "compose child {compose_pid} left running"
    );
    // The lock is free and the state file is whole: a real start works at once.
    rig.env.retain(|(k, _)| k != "HAL_COMPOSE");
    hal(&rig)
        .args(["module", "start", &m])
        .within(Duration::from_secs(60))
        .code(0);
    let text = std::fs::read_to_string(rig.state.join("state.json")).unwrap();
    serde_json::from_str::<serde_json::Value>(&text).unwrap();
}

#[test]
fn signals_during_wait_restart_and_rescue() {
    let Some(mut rig) = rig::engine() else { return };
    let calls = ComposeCalls::install(&mut rig);
    let m = rig.stack("slow", slow_to_health());
    for (args, sig, code) in [
        (vec!["module", "start"], "-INT", 130),
        (vec!["module", "restart"], "-INT", 130),
        (vec!["--yes", "module", "rescue"], "-INT", 130),
        (vec!["module", "start"], "-TERM", 143),
    ] {
        let mut full = args.clone();
        full.push(&m);
        let ups = calls.ups();
        let mut child = rig.cmd(&full).spawn().unwrap();
        // Its `compose up` returned: hal waits for health.
        calls.await_up(ups + 1);
        signal(&child, sig);
        let out = wait_child(&mut child, Duration::from_secs(10));
        assert_eq!(out.status.code(), Some(code), "{full:?} {sig}: {out:?}");
    }
}

#[test]
fn missing_or_babbling_compose_is_named() {
    let Some(mut rig) = rig::engine() else { return };
    let m = rig.stack("x", stack().service("app"));

    rig.env
        .push(("HAL_COMPOSE".into(), "/nonexistent/compose".into()));
    let run = hal(&rig).args(["module", "start", &m]).code(1);
    assert!(
        run.stderr
            .contains("HAL_COMPOSE=\"/nonexistent/compose\" does not answer"),
        "{run}"
    );

    let garbage = script(
        &rig.dir,
        "garbage",
        "#!/bin/sh\necho '%%% not a version %%%'\n",
    );
    rig.env = vec![("HAL_COMPOSE".into(), garbage.display().to_string())];
    let run = hal(&rig).args(["module", "start", &m]).code(1);
    assert!(run.stderr.contains("reports an unknown version"), "{run}");

    let failing = script(
        &rig.dir,
        "failing",
        "#!/bin/sh\ncase \"$*\" in *version*) echo 2.26.1 ;; *) echo '\u{1b}[31m<<garbage>>' >&2; exit 17 ;; esac\n",
    );
    rig.env = vec![("HAL_COMPOSE".into(), failing.display().to_string())];
    let run = hal(&rig).args(["module", "start", &m]).code(1);
    assert!(
        run.stderr.contains("exited with status 17") && run.stderr.contains("<<garbage>>"),
        "{run}"
    );
    assert_eq!(run.stderr.lines().count(), 1, "{run}");

    // No compose on PATH at all.
    let run = hal(&rig)
        .args(["module", "start", &m])
        .env_remove("HAL_COMPOSE")
        .env("PATH", "/nonexistent")
        .within(Duration::from_secs(30))
        .code(1);
    assert!(run.stderr.contains("no compose found"), "{run}");
}

#[test]
fn a_cut_socket_mid_start_exits_6_without_hanging() {
    let Some(mut rig) = rig::engine() else { return };
    let Some(()) = rig::need("socat", "-V") else {
        return;
    };
    let calls = ComposeCalls::install(&mut rig);
    let sock = rig.dir.join("docker.sock");
    let mut proxy = Command::new("socat")
        .arg(format!("UNIX-LISTEN:{},fork", sock.display()))
        .arg("UNIX-CONNECT:/var/run/docker.sock")
        .spawn()
        .unwrap();
    assert!(eventually(Duration::from_secs(5), || sock.exists()));
    let host = format!("unix://{}", sock.display());
    let m = rig.stack("slow", slow_to_health());
    let mut child = hal(&rig).args(["-H", &host, "module", "start", &m]).spawn();
    // Cut while hal waits for health, on the Engine API alone.
    calls.await_up(1);
    proxy.kill().unwrap();
    proxy.wait().unwrap();
    let _ = std::fs::remove_file(&sock);
    let out = wait_child(&mut child, Duration::from_secs(20));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(6), "{out:?}");
    assert!(
        err.contains(&format!("Docker not reachable at {host}")),
        "{err}"
    );
}

#[test]
fn planted_symlinks_are_refused() {
    let rig = Rig::new();
    std::fs::create_dir_all(&rig.state).unwrap();
    std::fs::set_permissions(
        &rig.state,
        std::os::unix::fs::PermissionsExt::from_mode(0o700),
    )
    .unwrap();
    let precious = rig.dir.join("precious");
    std::fs::write(&precious, "do not touch").unwrap();
    std::os::unix::fs::symlink(&precious, rig.state.join("state.lock")).unwrap();
    rig.stack("x", stack().service("app").runs("sleep 1"));
    let name = rig.name("x");
    let run = hal(&rig).args(["module", "reset-failed", &name]).code(1);
    assert!(
        run.stderr.contains("state.lock") && run.stderr.contains("symlink"),
        "{run}"
    );
    assert_eq!(std::fs::read_to_string(&precious).unwrap(), "do not touch");

    // A state directory others can write to is refused, not used.
    std::fs::remove_file(rig.state.join("state.lock")).unwrap();
    std::fs::set_permissions(
        &rig.state,
        std::os::unix::fs::PermissionsExt::from_mode(0o777),
    )
    .unwrap();
    let run = hal(&rig).args(["module", "reset-failed", &name]).code(1);
    assert!(run.stderr.contains("writable by others"), "{run}");
}

/// A started module that says `tick` five times a second.
fn ticking(rig: &Rig) -> String {
    let m = rig.stack(
        "chat",
        stack()
            .service("app")
            .runs("while true; do echo tick; sleep 0.2; done")
            .keeps_running(),
    );
    hal(rig).args(["module", "start", &m]).code(0);
    m
}

#[test]
fn a_cut_socket_under_logs_follow_ends_with_6() {
    let Some(rig) = rig::engine() else { return };
    let m = ticking(&rig);
    let sock = rig.dir.join("docker.sock");
    // Its own process group: the forked children carry the live connections.
    let mut proxy = Command::new("socat")
        .arg(format!("UNIX-LISTEN:{},fork", sock.display()))
        .arg("UNIX-CONNECT:/var/run/docker.sock")
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .unwrap();
    assert!(eventually(Duration::from_secs(5), || sock.exists()));
    let host = format!("unix://{}", sock.display());
    let mut child = hal(&rig)
        .args(["-H", &host, "module", "logs", "-f", &m])
        .spawn();
    // Following: a line came through the proxy.
    await_line(&mut child, Duration::from_secs(20), |l| l.contains("tick"));
    Command::new("kill")
        .args(["-KILL", "--", &format!("-{}", proxy.id())])
        .status()
        .unwrap();
    proxy.wait().unwrap();
    let out = wait_child(&mut child, Duration::from_secs(20));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(6), "{out:?}");
    assert!(
        err.contains(&format!(
            "Docker not reachable at {host}: lost while following logs"
        )),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "one line: {err}");
}

/// The engine goes away just as `logs -f` asks to follow (the race the test above
/// met one time in eight): the request that got no answer and the lost event
/// stream are one loss, said once, naming the endpoint once.
#[test]
fn a_socket_cut_as_logs_follow_begins_is_one_line_and_6() {
    let Some(rig) = rig::engine() else { return };
    let m = ticking(&rig);
    let sock = rig.dir.join("cut.sock");
    // The backlog is read with follow=false; the cut is the first follow.
    rig::cut::cut_at(&sock, "follow=true");
    let host = format!("unix://{}", sock.display());
    let run = hal(&rig)
        .args(["-H", &host, "module", "logs", "-f", &m])
        .within(Duration::from_secs(30))
        .code(6);
    assert!(run.stdout.contains("tick"), "the backlog came first: {run}");
    assert!(
        run.stderr.contains(&format!(
            "hal: Docker not reachable at {host}: lost while following logs: "
        )),
        "{run}"
    );
    assert_eq!(run.stderr.matches("not reachable").count(), 1, "{run}");
    assert_eq!(run.stderr.lines().count(), 1, "one line: {run}");
}

/// A state directory hal did not make (`HAL_STATE_DIR`, here) keeps the mode it
/// was given: hal reads and writes in it and never chmods it (docs/decisions.md).
#[test]
fn a_given_state_directory_keeps_its_mode() {
    use std::os::unix::fs::PermissionsExt;
    let rig = Rig::new();
    std::fs::create_dir_all(&rig.state).unwrap();
    std::fs::set_permissions(&rig.state, std::fs::Permissions::from_mode(0o750)).unwrap();
    rig.stack("x", stack().service("app").runs("sleep 1"));
    let name = rig.name("x");
    hal(&rig).args(["module", "reset-failed", &name]).code(0);
    assert!(
        rig.state.join("state.lock").exists(),
        "hal wrote nothing in {}",
        rig.state.display()
    );
    let mode = std::fs::metadata(&rig.state).unwrap().permissions().mode();
    assert_eq!(
        mode & 0o7777,
        0o750,
        "hal changed the mode of a directory it did not make"
    );
}

/// A fake engine on a unix socket: a good ping, then `body` for every other call.
fn babbling_engine(sock: &std::path::Path, body: &'static str) {
    use std::io::{BufRead, BufReader, Write};
    let listener = std::os::unix::net::UnixListener::bind(sock).unwrap();
    std::thread::spawn(move || {
        for conn in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let mut reader = BufReader::new(conn.try_clone().unwrap());
                let mut conn = conn;
                loop {
                    let mut request = String::new();
                    if reader.read_line(&mut request).unwrap_or(0) == 0 {
                        return;
                    }
                    let mut line = String::new();
                    while reader.read_line(&mut line).unwrap_or(0) > 0 && line != "\r\n" {
                        line.clear();
                    }
                    let body = if request.contains("/_ping") {
                        "OK"
                    } else {
                        body
                    };
                    let answer = format!(
                        "HTTP/1.1 200 OK\r\nApi-Version: 1.41\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
                        body.len()
                    );
                    if conn.write_all(answer.as_bytes()).is_err() {
                        return;
                    }
                }
            });
        }
    });
}

/// An engine that answers, but with something hal cannot read, is reachable:
/// the command failed (exit 1, saying the answer could not be read and
/// quoting it), not exit 6.
#[test]
fn an_unreadable_engine_answer_is_exit_1_not_6() {
    let rig = Rig::new();
    let sock = rig.dir.join("babble.sock");
    babbling_engine(&sock, "<html>not json</html>");
    rig.stack("x", stack().service("app").runs("sleep 1"));
    let name = rig.name("x");
    let host = format!("unix://{}", sock.display());
    for args in [
        vec!["status"],
        vec!["status", name.as_str()],
        vec!["start", name.as_str()],
    ] {
        let mut h = hal(&rig).env("DOCKER_HOST", &host).arg("-q");
        for a in &args {
            h = h.arg(a);
        }
        let run = h.within(Duration::from_secs(60)).run();
        run.expect(1);
        assert!(
            run.stderr
                .contains("the engine's answer could not be read: got \"<html>not json</html>\""),
            "{args:?}: {run}"
        );
        // What came, not the decoder's words.
        assert!(!run.stderr.contains("line 1 column"), "{args:?}: {run}");
        assert!(!run.stderr.contains("not reachable"), "{args:?}: {run}");
    }
}

/// A long unreadable answer is quoted cut short; the row reads `unknown`, and
/// docs/states.md's definition of `unknown` covers it (hal cannot tell), not only
/// an engine that cannot be reached.
#[test]
fn an_unreadable_answer_is_quoted_short_and_its_row_is_the_documented_unknown() {
    const LONG: &str = "<html><body>a proxy's error page, far longer than any message should quote: \
lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor</body></html>";
    let rig = Rig::new();
    let sock = rig.dir.join("long.sock");
    babbling_engine(&sock, LONG);
    rig.stack("x", stack().service("app").runs("sleep 1"));
    let name = rig.name("x");
    let host = format!("unix://{}", sock.display());
    let run = hal(&rig)
        .env("DOCKER_HOST", &host)
        .within(Duration::from_secs(60))
        .status(&[&name])
        .code(1);
    assert_eq!(run.state(), "unknown", "{run}");
    let reason = run.reason();
    assert!(
        reason.contains("could not be read: got \"<html><body>a proxy's error page"),
        "{run}"
    );
    assert!(
        reason.contains(&format!("… ({} bytes)", LONG.len())) && !reason.contains("tempor"),
        "not cut short: {run}"
    );
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/states.md")).unwrap();
    let defined = readme
        .lines()
        .find(|l| l.starts_with("| `unknown` |"))
        .expect("docs/states.md defines unknown");
    assert!(
        defined.contains("cannot be reached") && defined.contains("cannot read"),
        "docs/states.md's unknown does not cover an answer hal cannot read: {defined}"
    );
}

/// RELIABILITY.md's "Docker socket absent" row quotes what hal says today.
#[test]
fn reliability_quotes_the_absent_socket_message() {
    let text =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/RELIABILITY.md")).unwrap();
    let row = text
        .lines()
        .find(|l| l.starts_with("| Docker socket absent"))
        .expect("RELIABILITY.md has the Docker socket absent row");
    let quoted = row.split('`').nth(3).expect("the row quotes a message");
    let rig = Rig::new();
    rig.stack("x", stack().service("app").runs("sleep 1"));
    let run = hal(&rig)
        .args(["-H", "unix:///nonexistent", "status"])
        .within(Duration::from_secs(30))
        .code(6);
    assert!(
        run.stderr.contains(&format!("hal: {quoted}")),
        "RELIABILITY.md quotes {quoted:?}; hal says: {run}"
    );
}
