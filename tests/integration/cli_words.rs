//! End to end (issue 25, the command line): environment booleans as people write them, the
//! `reset-failed` shortcut and tips that send no one to a verb that stops, whole JSON error
//! documents, names quoted as typed, the nearest module name, journalctl's `--since` forms, and
//! a fix printed once when the engine refuses the user.

use std::process::{Command, Stdio};
use std::time::Duration;

use crate::rig::status::ModuleDoc;
use crate::rig::{Rig, engine, eventually, hal, need_that, run, run_with_timeout, stack};

/// `HAL_YES` as people write it. The rig removes it from every run; each run here sets it.
#[test]
fn hal_yes_takes_what_people_write() {
    let Some(rig) = engine() else { return };
    let web = rig.stack("web", stack().service("www").runs("sleep 100000"));
    // Any command: the value is read before the command runs.
    for yes in ["1", "0", "true", "FALSE", "yes", "no", "On", "off", ""] {
        let st = hal(&rig).env("HAL_YES", yes).args(["status", &web]).run();
        st.expect(3);
        assert!(!st.stderr.contains("invalid value"), "{st}");
    }
    // stop --all with no terminal: the confirmation is refused, or answered yes.
    hal(&rig).args(["start", &web]).code(0);
    for no in ["0", "false", "No", "off", ""] {
        let r = hal(&rig)
            .env("HAL_YES", no)
            .args(["module", "stop", "--all"])
            .code(2);
        assert!(r.stderr.contains("pass --yes"), "HAL_YES={no}: {r}");
    }
    assert_eq!(rig.state_of(&web), "active");
    for yes in ["yes", "1", "true", "YES", "on", "On"] {
        hal(&rig)
            .env("HAL_YES", yes)
            .args(["module", "stop", "--all"])
            .code(0);
        assert_eq!(rig.state_of(&web), "inactive", "HAL_YES={yes}");
    }
    let r = hal(&rig)
        .env("HAL_YES", "maybe")
        .args(["status", &web])
        .code(2);
    assert!(
        r.stderr.contains("1/0, true/false, yes/no or on/off"),
        "{r}"
    );
    hal(&rig).args(["stop", &web]).code(0);
}

#[test]
fn reset_failed_is_a_shortcut_like_start() {
    let Some(rig) = engine() else { return };
    let web = rig.stack("web", stack().service("www").runs("sleep 100000"));
    hal(&rig).args(["start", &web]).code(0);
    hal(&rig).args(["start", &web]).code(0);
    let starts = |rig: &Rig| rig.status(&web)["limit"]["used"].as_u64().unwrap();
    assert!(starts(&rig) > 0);
    let r = hal(&rig).args(["reset-failed", &web]).code(0);
    assert_eq!(starts(&rig), 0, "{r}");
    let help = run(&rig, &["--help"]);
    assert!(
        help.stdout
            .lines()
            .any(|l| l.trim_start().starts_with("reset-failed ")),
        "{}",
        help.stdout
    );
    hal(&rig).args(["stop", &web]).code(0);
}

#[test]
fn a_tip_never_sends_a_typo_to_a_verb_that_stops() {
    let rig = Rig::new();
    for args in [
        &["reset-faild", "web"][..],
        &["module", "reset-faild", "web"],
    ] {
        let r = run(&rig, args);
        r.expect(2);
        assert!(
            r.stderr
                .contains("tip: a similar subcommand exists: 'reset-failed'"),
            "{r}"
        );
        assert!(!r.stderr.contains("'restart'"), "{r}");
    }
    // The only close match may still be named.
    let r = run(&rig, &["restat", "web"]);
    assert!(r.stderr.contains("'restart'"), "{r}");
}

#[test]
fn a_json_usage_error_carries_the_whole_message() {
    let rig = Rig::new();
    let r = run(&rig, &["--json", "start"]);
    r.expect(2);
    let doc = r.json();
    assert_eq!(doc["error"]["exit_code"], 2);
    let message = doc["error"]["message"].as_str().unwrap();
    assert!(
        message.starts_with("the following required arguments were not provided:"),
        "{message}"
    );
    assert!(message.contains("<MODULE>"), "{message}");
}

#[test]
fn names_are_quoted_as_typed_and_a_miss_gets_the_nearest_name() {
    let rig = Rig::new();
    let r = run(&rig, &["start", "../x"]);
    r.expect(2);
    assert!(r.stderr.contains("invalid module name \"../x\""), "{r}");

    let web = rig.stack("ux-web", stack().service("www").runs("sleep 100000"));
    rig.stack("ux-db", stack().service("db").runs("sleep 100000"));
    let typo = web.replace("ux-web", "ux-wbe");
    let r = run(&rig, &["start", &typo]);
    r.expect(4);
    assert!(r.stderr.contains(&format!("did you mean {web}?")), "{r}");
    let r = run(&rig, &["--json", "start", &typo]);
    r.expect(4);
    let message = r.json()["error"]["message"].as_str().unwrap().to_string();
    assert!(
        message.contains(&format!("did you mean {web}?")),
        "{message}"
    );
    // Nothing close: no guess.
    let r = run(&rig, &["start", &rig.name("zzzzzzzzz")]);
    r.expect(4);
    assert!(!r.stderr.contains("did you mean"), "{r}");
}

#[test]
fn logs_since_takes_journalctl_forms() {
    let Some(rig) = engine() else { return };
    let web = rig.stack(
        "web",
        stack().service("www").runs("echo hello-now; sleep 100000"),
    );
    hal(&rig).args(["start", &web]).code(0);
    let said = || run(&rig, &["logs", &web]).stdout.contains("hello-now");
    assert!(eventually(Duration::from_secs(30), said));
    for when in [
        "5 minutes ago",
        "5 min ago",
        "-5min",
        "1 hour 30 minutes ago",
        "today",
        "yesterday",
        "2000-01-01 00:00:00",
    ] {
        let r = run(&rig, &["logs", "--since", when, &web]);
        r.expect(0);
        assert!(r.stdout.contains("hello-now"), "--since {when:?}: {r}");
    }
    let r = run(&rig, &["logs", "--until", "5 minutes ago", &web]);
    r.expect(0);
    assert!(!r.stdout.contains("hello-now"), "{r}");
    hal(&rig).args(["stop", &web]).code(0);
}

/// A user the engine refuses (not in the `docker` group): each row says why in
/// a few words, and the fix, the same for every row, is printed once.
#[test]
fn a_fix_for_every_row_is_printed_once() {
    let Some(rig) = engine() else { return };
    let Some(()) = need_that(
        uid() == 0,
        "needs root, to run hal as nobody",
        "run the tests as root",
    ) else {
        return;
    };
    for short in ["a", "b", "c"] {
        rig.stack(short, stack().service("x").runs("sleep 100000"));
    }
    let readable = Command::new("chmod")
        .args(["-R", "a+rX"])
        .arg(&rig.dir)
        .status()
        .unwrap();
    assert!(readable.success());
    // hal as nobody, with no groups, with the rig's environment and the system engine.
    let as_nobody = |args: &[&str]| {
        let hal = rig.cmd(args);
        let mut c = Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(hal.get_program())
            .args(["-H", "unix:///var/run/docker.sock"])
            .args(hal.get_args())
            .env("HOME", "/nonexistent")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (k, v) in hal.get_envs() {
            match v {
                Some(v) => c.env(k, v),
                None => c.env_remove(k),
            };
        }
        run_with_timeout(c, Duration::from_secs(60))
    };
    let r = as_nobody(&["status"]);
    let Some(()) = need_that(
        r.stderr.contains("permission denied"),
        &format!("the engine does not refuse nobody: {r}"),
        "run the tests against the system engine's socket",
    ) else {
        return;
    };
    r.expect(6);
    assert_eq!(r.stderr.matches("docker group").count(), 1, "{r}");
    assert!(!r.stdout.contains("docker group"), "{r}");
    assert_eq!(r.stdout.matches("permission denied on").count(), 3, "{r}");
    let r = ModuleDoc::by(as_nobody, &[]).code(6);
    assert_eq!(r.run.stderr.matches("docker group").count(), 1, "{r}");
    for m in r.doc()["modules"].as_array().unwrap() {
        let reason = m["reason"].as_str().unwrap();
        assert!(reason.starts_with("permission denied on "), "{reason}");
        assert!(!reason.contains("docker group"), "{reason}");
    }
}

fn uid() -> u32 {
    let out = Command::new("id").arg("-u").output().unwrap();
    String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
}
