//! End to end (issue 16, part C): `logs --until`, every module's logs, `-n all`, journalctl-style WHEN, `-f` ending when its reader goes, and timer modules in a real systemd.

use std::io::{BufRead, BufReader};
use std::time::{Duration, Instant};

use crate::lib_paths::timefmt;
use crate::rig::compose::Stack;
use crate::rig::systemd::{Scene, Scope, scene};
use crate::rig::{engine, eventually, run, stack};

/// A service that prints `NAME-early`, waits 3 s, prints `NAME-late`, then stays quiet.
fn two_lines(name: &str) -> Stack {
    stack().service(name).runs(&format!(
        "echo {name}-early; sleep 3; echo {name}-late; sleep 100000"
    ))
}

/// `(prefix, time, message)` of each `--timestamps` line.
fn parse(out: &str) -> Vec<(String, timefmt::Stamp, String)> {
    out.lines()
        .map(|l| {
            let (prefix, rest) = l.split_once(" | ").unwrap();
            let (time, msg) = rest.split_once(' ').unwrap();
            (
                prefix.trim().to_string(),
                timefmt::parse(time).unwrap(),
                msg.to_string(),
            )
        })
        .collect()
}

#[test]
fn logs_until_every_module_tail_all_and_when_forms() {
    let Some(rig) = engine() else { return };
    let a = rig.stack("a", two_lines("x"));
    let b = rig.stack("b", two_lines("y"));
    run(&rig, &["module", "start", &a, &b]).expect(0);
    let both_late = || {
        let r = run(&rig, &["module", "logs", &a, &b]);
        r.stdout.contains("x-late") && r.stdout.contains("y-late")
    };
    assert!(eventually(Duration::from_secs(30), both_late));

    // No module named: every module, merged in time order.
    let all = run(&rig, &["module", "logs", "--timestamps"]);
    all.expect(0);
    let lines = parse(&all.stdout);
    let msgs: Vec<&str> = lines.iter().map(|l| l.2.as_str()).collect();
    for want in ["x-early", "x-late", "y-early", "y-late"] {
        assert!(msgs.contains(&want), "{want} missing:\n{}", all.stdout);
    }
    assert!(
        lines.iter().any(|l| l.0 == format!("{a}/x")),
        "{}",
        all.stdout
    );
    assert!(
        lines.iter().any(|l| l.0 == format!("{b}/y")),
        "{}",
        all.stdout
    );
    assert!(lines.windows(2).all(|w| w[0].1 <= w[1].1), "{}", all.stdout);

    // --until: the early line, not the late one (3 s apart).
    let early = lines.iter().find(|l| l.2 == "x-early").unwrap().1;
    let cut = format!("@{}", early.secs() + 2);
    let r = run(&rig, &["module", "logs", "--until", &cut, &a]);
    r.expect(0);
    assert!(r.stdout.contains("x-early"), "{r:#?}");
    assert!(!r.stdout.contains("x-late"), "{r:#?}");
    // A bare number is a Unix time, as docker reads it.
    let bare = (early.secs() + 2).to_string();
    let r = run(&rig, &["module", "logs", "--until", &bare, &a]);
    assert!(
        r.stdout.contains("x-early") && !r.stdout.contains("x-late"),
        "{r:#?}"
    );
    let r = run(&rig, &["module", "logs", "--since", &bare, &a]);
    assert!(
        !r.stdout.contains("x-early") && r.stdout.contains("x-late"),
        "{r:#?}"
    );

    // -n all is every line; -n 1 the last of each source.
    let r = run(&rig, &["module", "logs", "-n", "all", &a]);
    r.expect(0);
    assert_eq!(r.stdout.lines().count(), 2, "{r:#?}");
    let r = run(&rig, &["module", "logs", "-n", "1", &a, &b]);
    r.expect(0);
    assert_eq!(r.stdout.lines().count(), 2, "{r:#?}");
    assert!(!r.stdout.contains("early"), "{r:#?}");
    run(&rig, &["module", "logs", "-n", "some", &a]).expect(2);

    // journalctl's words: yesterday and -1h include everything, tomorrow nothing.
    for since in ["yesterday", "-1h", "today", "1h30m"] {
        let r = run(&rig, &["module", "logs", "--since", since, &a]);
        r.expect(0);
        assert_eq!(r.stdout.lines().count(), 2, "--since {since}: {r:#?}");
    }
    let r = run(&rig, &["module", "logs", "--since", "tomorrow", &a]);
    r.expect(0);
    assert_eq!(r.stdout, "", "{r:#?}");
    let r = run(&rig, &["module", "logs", "--since", "soon", &a]);
    r.expect(2);
    assert!(r.stderr.contains("a bare number is a Unix time"), "{r:#?}");
    // --until ends the output: it cannot be followed.
    run(&rig, &["module", "logs", "-f", "--until", "now", &a]).expect(2);
}

#[test]
fn follow_ends_when_the_reader_goes_while_quiet() {
    let Some(rig) = engine() else { return };
    let m = rig.stack(
        "quiet",
        stack().service("q").runs("echo ready; sleep 100000"),
    );
    run(&rig, &["module", "start", &m]).expect(0);

    let mut child = rig.cmd(&["module", "logs", "-f", &m]).spawn().unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    out.read_line(&mut first).unwrap();
    assert!(first.contains("ready"), "{first:?}");
    // The reader goes (as `head -1` does); the module stays quiet.
    drop(out);
    let gone = Instant::now();
    let ended = eventually(Duration::from_secs(5), || {
        child.try_wait().unwrap().is_some()
    });
    if !ended {
        let _ = child.kill();
    }
    let status = child.wait().unwrap();
    assert!(
        ended,
        "hal logs -f still running {:?} after its reader went",
        gone.elapsed()
    );
    assert!(status.success(), "{status:?}");
}

/// Installs `<scene>-<short>.timer` starting `job` a second after it starts; removed on drop.
struct Timer<'a> {
    s: &'a Scene,
    unit: String,
}

impl<'a> Timer<'a> {
    fn install(s: &'a Scene, short: &str, job: &str) -> Timer<'a> {
        let unit = format!("{}-{short}.timer", s.id);
        let text = format!(
            "[Unit]\nDescription=hal test timer {short}\n\n[Timer]\nOnActiveSec=1\nOnUnitActiveSec=1h\nAccuracySec=1ms\nUnit={job}\n"
        );
        s.m.write(&format!("/etc/systemd/system/{unit}"), &text);
        s.m.sh_ok("systemctl daemon-reload");
        Timer { s, unit }
    }
}

impl Drop for Timer<'_> {
    fn drop(&mut self) {
        let u = &self.unit;
        let _ = self.s.m.sh(&format!(
            "systemctl stop {u}; rm -f /etc/systemd/system/{u}; systemctl daemon-reload"
        ));
    }
}

#[test]
fn a_timer_whose_job_fails_reads_failed_and_shows_the_job_s_output() {
    let Some(s) = scene() else { return };
    let job = s.unit(
        Scope::System,
        "job",
        "Type=oneshot\nExecStart=/bin/sh -c 'echo job-output; exit 3'",
    );
    let timer = Timer::install(&s, "job", &job);
    s.config(&format!(
        "[module.tick]\nunit = \"{}\"\nscope = \"system\"\n",
        timer.unit
    ));

    s.hal(&["module", "start", "tick"]).expect(0);
    let failed = eventually(Duration::from_secs(30), || {
        s.m.sh(&format!("systemctl is-failed {job}")).stdout.trim() == "failed"
    });
    assert!(failed, "the timer's job did not run and fail");

    let r = s.status(&["tick"]).code(3);
    let d = r.entry();
    assert_eq!(d["state"], "failed", "{r:#?}");
    let reason = d["reason"].as_str().unwrap_or_default();
    assert!(reason.contains("status 3"), "{reason}");
    assert!(reason.contains("job-output"), "{reason}");
    assert_eq!(d["timer"]["job"], job.as_str(), "{d}");
    assert_eq!(d["timer"]["last_exit_code"], 3, "{d}");
    assert_eq!(d["timer"]["last_result"], "exit-code", "{d}");
    assert!(d["timer"]["last_run"].is_string(), "{d}");
    assert_eq!(d["services"][1]["unit"], job.as_str(), "{d}");
    assert_eq!(d["services"][1]["exit_code"], 3, "{d}");

    let r = s.hal(&["module", "status", "tick"]);
    r.expect(3);
    let row = r.stdout.lines().find(|l| l.contains("tick")).unwrap_or("");
    assert!(row.contains("failed") && row.contains("last run"), "{r:#?}");

    let r = s.hal(&["module", "logs", "tick"]);
    r.expect(0);
    assert!(
        r.stdout
            .lines()
            .any(|l| l.starts_with("tick") && l.ends_with("| job-output")),
        "{r:#?}"
    );

    // Stopping the module stops the timer, and forgets the failed run.
    s.hal(&["module", "stop", "tick"]).expect(0);
    let r = s.status(&["tick"]);
    assert_eq!(r.state(), "inactive", "{r:#?}");
    let state = s.m.sh(&format!("systemctl is-failed {job}"));
    assert_ne!(state.stdout.trim(), "failed", "{state:#?}");
    drop(timer);
}
