//! End to end: `hal module logs` merges, prefixes, tails, follows and ends cleanly, on the real engine.

use std::time::Duration;

use crate::lib_paths::timefmt;
use crate::rig::{self, Lines, eventually, hal, run_with_timeout, stack, wait_child};

/// Five lines `NAME1`…`NAME5` on stdout, 0.3 s apart, then `NAME-err` on stderr;
/// `after` runs first (in the module directory, mounted on /m).
fn ticks(name: &str, after: &str) -> String {
    format!(
        "{after} for i in 1 2 3 4 5; do echo {name}$i; touch /m/{name}-spoke; sleep 0.3; done; echo {name}-err >&2; sleep 100000"
    )
}

#[test]
fn logs_merge_in_time_order_with_prefixes_json_and_tail() {
    let Some(rig) = rig::engine() else { return };
    // b speaks 0.1 s after a's first line, whatever the order compose starts
    // them in: their lines interleave, a's first.
    let m = rig.stack(
        "tick",
        stack()
            .service("a")
            .runs(&ticks("a", ""))
            .volume("./:/m")
            .keeps_running()
            .service("b")
            .runs(&ticks(
                "b",
                "until [ -f /m/a-spoke ]; do sleep 0.02; done; sleep 0.1;",
            ))
            .volume("./:/m")
            .keeps_running(),
    );
    hal(&rig).args(["module", "start", &m]).code(0);
    // Both have said everything: their last line is on stderr.
    let said_all = || {
        let r = hal(&rig).args(["module", "logs", &m]).run();
        r.stdout.contains("a-err") && r.stdout.contains("b-err")
    };
    assert!(
        eventually(Duration::from_secs(30), said_all),
        "no -err lines"
    );

    let run = hal(&rig)
        .args(["module", "logs", "--timestamps", &m])
        .code(0);
    // Each line: `module/service | TIME message`. The merge must be in time
    // order across sources and keep each source's own order.
    let mut parsed = Vec::new();
    for l in run.stdout.lines() {
        let (prefix, rest) = l.split_once(" | ").unwrap();
        let (time, msg) = rest.split_once(' ').unwrap();
        parsed.push((
            prefix.trim().to_string(),
            timefmt::parse(time).unwrap(),
            msg.to_string(),
        ));
    }
    assert_eq!(parsed.len(), 12, "{}", run.stdout);
    assert!(
        parsed.windows(2).all(|w| w[0].1 <= w[1].1),
        "not merged in time order:\n{}",
        run.stdout
    );
    for src in ["a", "b"] {
        let mine: Vec<&str> = parsed
            .iter()
            .filter(|p| p.0 == format!("{m}/{src}"))
            .map(|p| p.2.as_str())
            .collect();
        let want: Vec<String> = (1..=5)
            .map(|i| format!("{src}{i}"))
            .chain([format!("{src}-err")])
            .collect();
        assert_eq!(mine, want, "{}", run.stdout);
    }
    // Sources overlap in time, so a correct merge interleaves them.
    let switches = parsed.windows(2).filter(|w| w[0].0 != w[1].0).count();
    assert!(
        switches >= 2,
        "sources were not interleaved:\n{}",
        run.stdout
    );

    // --json: one object per line with the promised fields.
    let run = hal(&rig).args(["--json", "module", "logs", &m]).code(0);
    let docs: Vec<serde_json::Value> = run
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(docs.len(), 12);
    assert_eq!(docs[0]["module"], m.as_str());
    assert_eq!(docs[0]["source"], "a");
    assert_eq!(docs[0]["stream"], "stdout");
    assert_eq!(docs[0]["message"], "a1");
    assert!(docs[0]["time"].as_str().unwrap().ends_with('Z'));
    let err = docs.iter().find(|d| d["message"] == "a-err").unwrap();
    assert_eq!(err["stream"], "stderr");
    let times: Vec<&str> = docs.iter().map(|d| d["time"].as_str().unwrap()).collect();
    let mut sorted = times.clone();
    sorted.sort_by_key(|t| timefmt::parse(t).unwrap());
    assert_eq!(times, sorted);

    // -n 2: the last two lines of each source; --no-prefix; --timestamps.
    let run = hal(&rig)
        .args([
            "module",
            "logs",
            "-n",
            "2",
            "--no-prefix",
            "--timestamps",
            &m,
        ])
        .code(0);
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines.len(), 4, "{}", run.stdout);
    assert!(lines.iter().all(|l| !l.contains(" | ")), "{}", run.stdout);
    let msgs: Vec<&str> = lines.iter().map(|l| l.split_once(' ').unwrap().1).collect();
    // Each source's last two, merged in time order. How a's and b's lines
    // interleave depends on how far apart the engine started them (a loaded
    // machine starts b later), so only each source's own order is fixed.
    let mut got = msgs.clone();
    got.sort_unstable();
    assert_eq!(got, ["a-err", "a5", "b-err", "b5"], "{}", run.stdout);
    for (first, second) in [("a5", "a-err"), ("b5", "b-err")] {
        let at = |m: &str| msgs.iter().position(|x| *x == m).unwrap();
        assert!(at(first) < at(second), "{}", run.stdout);
    }
    let stamps: Vec<_> = lines
        .iter()
        .map(|l| timefmt::parse(l.split_once(' ').unwrap().0).unwrap())
        .collect();
    assert!(stamps.windows(2).all(|w| w[0] <= w[1]), "{}", run.stdout);
    assert!(timefmt::parse(lines[0].split_once(' ').unwrap().0).is_some());

    // --since in the future shows nothing; a bad --since is a usage error.
    let run = hal(&rig)
        .args(["module", "logs", "--since", "2999-01-01T00:00:00Z", &m])
        .code(0);
    assert!(run.stdout.is_empty(), "{run}");
    hal(&rig)
        .args(["module", "logs", "--since", "yesterday-ish", &m])
        .code(2);
}

#[test]
fn logs_into_a_closed_pipe_end_quietly() {
    let Some(rig) = rig::engine() else { return };
    let m = rig.stack(
        "chatty",
        stack()
            .service("chatty")
            .runs("seq 1 200000; sleep 100000")
            .keeps_running(),
    );
    hal(&rig).args(["module", "start", &m]).code(0);
    assert!(eventually(Duration::from_secs(20), || {
        hal(&rig)
            .args(["module", "logs", "-n", "1", "--no-prefix", &m])
            .run()
            .stdout
            .trim()
            == "200000"
    }));
    let script =
        format!("\"$0\" module logs {m} | head -n 1; echo \"status=${{PIPESTATUS[0]}}\" >&2");
    let mut cmd = std::process::Command::new("bash");
    cmd.args(["-c", &script, env!("CARGO_BIN_EXE_hal")])
        .env("HAL_SERVICES_DIR", &rig.root)
        .env("HAL_STATE_DIR", &rig.state)
        .env("HAL_CONFIG", &rig.config)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let run = run_with_timeout(cmd, Duration::from_secs(60));
    assert_eq!(run.stdout.lines().count(), 1, "{run}");
    assert_eq!(
        run.stderr.trim(),
        "status=0",
        "hal must end quietly when the reader leaves: {run}"
    );
}

#[test]
fn follow_survives_recreation_and_ends_on_ctrl_c() {
    rig::each_engine(|rig| {
        let m = rig.stack(
            "boot",
            stack()
                .service("app")
                .runs("echo boot $HOSTNAME; while true; do sleep 1; done")
                .keeps_running(),
        );
        hal(&rig).args(["module", "start", &m]).code(0);

        let mut child = hal(&rig)
            .args(["module", "logs", "-f", "--no-prefix", &m])
            .spawn();
        let mut lines = Lines::of(&mut child);
        let first = lines
            .next(Duration::from_secs(20))
            .expect("no first boot line");
        assert!(first.starts_with("boot "), "{first}");

        // Recreate the container: a new id and a new hostname.
        hal(&rig).args(["module", "restart", &m]).code(0);
        let second = lines.find(Duration::from_secs(30), |l| {
            l.starts_with("boot ") && l != first
        });
        if second.is_none() {
            let _ = child.kill();
            let out = wait_child(&mut child, Duration::from_secs(5));
            panic!("follow did not pick up the recreated container: {out:?}");
        }

        // Ctrl-C ends it cleanly.
        let pid = child.id().to_string();
        std::process::Command::new("kill")
            .args(["-INT", &pid])
            .status()
            .unwrap();
        let out = wait_child(&mut child, Duration::from_secs(5));
        assert_eq!(out.status.code(), Some(0), "{out:?}");
    });
}
