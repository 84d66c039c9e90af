//! History that outlives containers: `hal logs` reads the journal (the `journald` log driver) across restarts and stops, with or without the compose labels, never another project's lines; with per-container logs doctor and logs say so; a crash's last lines are kept before hal removes the container.

use std::process::Command;
use std::time::Duration;

use crate::rig::{self, Lines, Rig, eventually, hal, stack};

/// The label fields hal reads a module's history by (the `labels=` log-opt).
const LABELS: &str = "com.docker.compose.project,com.docker.compose.service,com.docker.compose.project.working_dir,com.docker.compose.container-number";

/// Whether the shared engine's default log driver is the journal.
pub(crate) fn engine_logs_to_journal() -> bool {
    Command::new("docker")
        .args(["info", "-f", "{{.LoggingDriver}}"])
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "journald")
}

/// A live journal takes a line (a socket left by a dead journald does not).
pub(crate) fn journal_live() -> bool {
    Command::new("sh")
        .args(["-c", "echo hal-test probe | systemd-cat -t hal-test"])
        .status()
        .is_ok_and(|s| s.success())
}

/// A rig on the engine and a live journal, or a skip naming the fix.
fn journal_rig() -> Option<Rig> {
    let rig = rig::engine()?;
    rig::need_that(
        journal_live(),
        "no journald answers systemd-cat",
        "scripts/provision.sh starts one (step journald)",
    )?;
    Some(rig)
}

/// One service that prints `NAME-<n>` once per start (n counts starts, kept in
/// the module directory) and idles, logging to the journal with the labels.
pub(crate) fn counting(name: &str) -> String {
    stack()
        .service("app")
        .runs(&format!(
            "n=$(cat /m/n 2>/dev/null || echo 0); n=$((n+1)); echo $n > /m/n; echo {name}-$n; sleep 100000"
        ))
        .volume("./:/m")
        .keeps_running()
        .line(&format!(
            "logging:\n      driver: journald\n      options:\n        labels: \"{LABELS}\""
        ))
        .to_string()
}

/// The messages `hal logs MODULE --since …` prints, in order.
pub(crate) fn messages(rig: &Rig, module: &str, since: &str) -> Vec<String> {
    let run = hal(rig)
        .args(["logs", "--no-prefix", module, "--since", since])
        .code(0);
    run.stdout.lines().map(str::to_string).collect()
}

#[test]
fn journal_history_spans_restart_and_stop_start_and_no_other_project() {
    let Some(rig) = journal_rig() else { return };
    let m = rig.stack("hist", counting("line"));
    // A project of the same name in another directory writes to the journal
    // first: none of its lines are this module's.
    let elsewhere = rig.dir.join("elsewhere").join(&m);
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::fs::write(elsewhere.join("compose.yaml"), counting("other")).unwrap();
    let compose = |args: &[&str]| {
        let ok = Command::new("docker")
            .arg("compose")
            .args(["-p", &m])
            .args(args)
            .current_dir(&elsewhere)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .unwrap()
            .success();
        assert!(ok, "docker compose {args:?}");
    };
    compose(&["up", "-d"]);
    assert!(eventually(Duration::from_secs(10), || elsewhere
        .join("n")
        .exists()));
    compose(&["down", "-t", "0"]);

    hal(&rig).args(["start", &m]).code(0);
    hal(&rig).args(["restart", &m]).code(0);
    hal(&rig).args(["stop", &m]).code(0);
    hal(&rig).args(["start", &m]).code(0);
    let want = ["line-1", "line-2", "line-3"];
    let mut got = Vec::new();
    let all_there = eventually(Duration::from_secs(10), || {
        got = messages(&rig, &m, "10 min ago");
        got.len() >= 3
    });
    assert!(all_there, "{got:?}");
    assert_eq!(
        got, want,
        "every generation's lines, in order, none of the other project's"
    );
    let run = hal(&rig)
        .args(["logs", &m, "--since", "10 min ago"])
        .code(0);
    assert!(
        run.stdout
            .lines()
            .all(|l| l.starts_with(&format!("{m}/app |"))),
        "{run}"
    );
    assert!(!run.stderr.contains("not kept"), "{run}");
    let json = hal(&rig).args(["--json", "logs", &m, "-n", "1"]).code(0);
    let doc: serde_json::Value = serde_json::from_str(json.stdout.trim()).unwrap();
    assert_eq!(doc["message"], "line-3", "{json}");
    assert_eq!(doc["source"], "app", "{json}");
    hal(&rig).args(["stop", &m]).code(0);
}

/// [`counting`], logging to the journal as most compose files write it: no `labels=`.
fn counting_unlabelled(name: &str) -> String {
    stack()
        .service("app")
        .runs(&format!(
            "n=$(cat /m/n 2>/dev/null || echo 0); n=$((n+1)); echo $n > /m/n; echo {name}-$n; sleep 100000"
        ))
        .volume("./:/m")
        .keeps_running()
        .line("logging:\n      driver: journald")
        .to_string()
}

#[test]
fn journal_history_without_labels_spans_restart_and_stop_start() {
    let Some(rig) = journal_rig() else { return };
    let m = rig.stack("nolab", counting_unlabelled("gen"));
    hal(&rig).args(["start", &m]).code(0);
    let said = |want: &[&str]| {
        let mut got = Vec::new();
        let ok = eventually(Duration::from_secs(10), || {
            got = messages(&rig, &m, "10 min ago");
            got.len() >= want.len()
        });
        assert!(ok, "{got:?}");
        assert_eq!(got, want, "every generation's lines, in order, each once");
    };
    said(&["gen-1"]);
    hal(&rig).args(["restart", &m]).code(0);
    said(&["gen-1", "gen-2"]);
    hal(&rig).args(["stop", &m]).code(0);
    hal(&rig).args(["start", &m]).code(0);
    said(&["gen-1", "gen-2", "gen-3"]);
    // Without --since too, and with the prefix of its service.
    let run = hal(&rig).args(["logs", &m]).code(0);
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{run}");
    assert!(
        lines.iter().all(|l| l.starts_with(&format!("{m}/app |"))),
        "{run}"
    );
    // Before the first container hal saw, lines may be missing: said once.
    let run = hal(&rig)
        .args(["logs", &m, "--since", "1 hour ago"])
        .code(0);
    assert_eq!(run.stderr.matches("containers it saw").count(), 1, "{run}");
    let doc = hal(&rig).args(["--json", "doctor"]).run().json();
    let check = rig::check(&doc, "history").clone();
    assert_eq!(check["ok"], false, "{check:#}");
    let detail = check["detail"].as_str().unwrap_or_default();
    assert!(detail.contains(&format!("{m}/app")), "{check:#}");
    assert!(detail.contains("only the containers hal saw"), "{check:#}");
    let hint = check["hint"].as_str().unwrap_or_default();
    assert!(hint.contains(LABELS), "{hint}");
    hal(&rig).args(["stop", &m]).code(0);
}

#[test]
fn per_container_logs_fail_doctor_and_logs_note_the_cut() {
    let Some(rig) = rig::engine() else { return };
    if engine_logs_to_journal() {
        eprintln!("SKIP: the engine logs to the journal; this test is for per-container logs");
        return;
    }
    let m = rig.stack(
        "cut",
        stack().service("app").runs("echo hello; sleep 100000"),
    );
    let run = hal(&rig).args(["--json", "doctor"]).code(1);
    let doc = run.json();
    let check = rig::check(&doc, "history").clone();
    assert_eq!(check["ok"], false, "{check:#}");
    let hint = check["hint"].as_str().unwrap();
    assert!(hint.contains("\"log-driver\": \"journald\""), "{hint}");
    assert!(
        hint.contains("com.docker.compose.project.working_dir"),
        "{hint}"
    );
    assert!(hint.contains("restart"), "{hint}");

    hal(&rig).args(["start", &m]).code(0);
    let run = hal(&rig)
        .args(["logs", &m, "--since", "1 hour ago"])
        .code(0);
    assert_eq!(run.stderr.matches("not kept").count(), 1, "{run}");
    assert!(run.stderr.contains("hal doctor"), "{run}");
    // A tail reaches no further back than the lines there are: nothing to say.
    let run = hal(&rig).args(["logs", &m, "-n", "1"]).code(0);
    assert!(!run.stderr.contains("not kept"), "{run}");
    hal(&rig).args(["stop", &m]).code(0);
}

#[test]
fn a_killed_containers_exit_and_last_lines_survive_its_removal() {
    let Some(rig) = rig::engine() else { return };
    let m = rig.stack(
        "crash",
        stack()
            .service("db")
            .runs("echo db says goodbye; echo db-err >&2; sleep 100000")
            .restart("no"),
    );
    hal(&rig).args(["start", &m]).code(0);
    let container = format!("{m}-db-1");
    assert!(eventually(Duration::from_secs(10), || {
        let out = Command::new("docker")
            .args(["logs", &container])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stderr).contains("db-err")
    }));
    let killed = Command::new("docker")
        .args(["kill", &container])
        .status()
        .unwrap();
    assert!(killed.success());
    // A person's restart removes the container (compose down) and makes a new one.
    hal(&rig).args(["restart", &m]).code(0);

    let run = hal(&rig).args(["status", &m]).code(0);
    assert!(
        run.stdout
            .contains(&format!("last run of {m}/db: exit 137")),
        "{run}"
    );
    assert!(run.stdout.contains("db says goodbye"), "{run}");
    // The document has the same run, for a script; `status` of every module has none.
    let doc = rig.status(&m).code(0);
    let kept = &doc["last_runs"];
    assert_eq!(kept[0]["service"], "db", "{doc:#}");
    assert_eq!(kept[0]["exit_code"], 137, "{doc:#}");
    assert!(
        kept[0]["lines"]
            .as_array()
            .is_some_and(|l| l.iter().any(|l| l["message"] == "db says goodbye")),
        "{doc:#}"
    );
    let doc = rig.status(&format!("{m}/db")).code(0);
    assert_eq!(doc["last_runs"][0]["service"], "db", "{doc}");
    let all = rig.status_all(&m);
    let row = all.entry();
    assert!(row.get("last_runs").is_none(), "{row:#}");
    let run = hal(&rig).args(["logs", &m]).code(0);
    let lines: Vec<&str> = run.stdout.lines().collect();
    let ended = lines
        .iter()
        .position(|l| l.contains("ended: exit 137"))
        .unwrap_or_else(|| panic!("no end of the killed run: {run}"));
    assert!(
        lines[..ended].iter().any(|l| l.contains("db says goodbye")),
        "{run}"
    );
    assert!(
        lines[ended..].iter().any(|l| l.contains("db says goodbye")),
        "the new run: {run}"
    );
    hal(&rig).args(["stop", &m]).code(0);
}

#[test]
fn a_crash_looping_start_shows_each_line_of_its_last_run_once() {
    let Some(rig) = rig::engine() else { return };
    let m = rig.stack(
        "loop",
        stack()
            .service("app")
            .runs("echo boom-once; exit 3")
            .restart("always"),
    );
    let run = hal(&rig).args(["start", &m, "--timeout", "40s"]).code(1);
    let text = format!("{}{}", run.stdout, run.stderr);
    assert_eq!(text.matches("boom-once").count(), 1, "{run}");
    hal(&rig).args(["stop", &m]).code(0);
}

#[test]
fn the_follow_backlog_is_merged_in_time_order() {
    let Some(rig) = rig::engine() else { return };
    // In lock step, whatever the machine's load: a says a1 and waits for b1,
    // b waits for a1 and says b1, and so on; each waits a little before it
    // speaks, so the engine's times are in that order too.
    let a = "for i in 1 2 3 4; do sleep 0.05; echo a$i; touch /m/a$i; \
             until [ -f /m/b$i ]; do sleep 0.02; done; done; sleep 100000";
    let b = "for i in 1 2 3 4; do until [ -f /m/a$i ]; do sleep 0.02; done; \
             sleep 0.05; echo b$i; touch /m/b$i; done; sleep 100000";
    let m = rig.stack(
        "fback",
        stack()
            .service("a")
            .runs(a)
            .volume("./:/m")
            .keeps_running()
            .service("b")
            .runs(b)
            .volume("./:/m")
            .keeps_running(),
    );
    hal(&rig).args(["start", &m]).code(0);
    let want = ["a1", "b1", "a2", "b2", "a3", "b3", "a4", "b4"];
    // Every line is written before `-f` starts, so its backlog is all of them.
    let written = eventually(Duration::from_secs(20), || {
        let out = hal(&rig).args(["logs", "--no-prefix", &m]).run().stdout;
        out.lines().count() >= want.len()
    });
    assert!(written, "the services never said their lines");
    let mut child = rig.cmd(&["logs", "-f", "--no-prefix", &m]).spawn().unwrap();
    let mut lines = Lines::of(&mut child);
    let mut got: Vec<String> = Vec::new();
    while got.len() < want.len() {
        match lines.next(Duration::from_secs(20)) {
            Some(l) => got.push(l),
            None => break,
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    // Whatever it printed past the backlog before it was ended counts too.
    got.extend(lines.rest());
    assert_eq!(got, want, "the backlog of -f in time order, each line once");
    hal(&rig).args(["stop", &m]).code(0);
}

#[test]
fn journal_history_spans_a_watch_recreate() {
    let Some(rig) = journal_rig() else { return };
    let m = rig.stack("wrec", counting("gen"));
    hal(&rig).args(["start", &m]).code(0);
    let container = format!("{m}-app-1");
    assert!(eventually(Duration::from_secs(10), || {
        messages(&rig, &m, "10 min ago") == ["gen-1"]
    }));
    let mut w = crate::rig::watch::Watch::spawn(&rig, &[]);
    let gone = Command::new("docker")
        .args(["rm", "-f", &container])
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(gone.success());
    w.expect(Duration::from_secs(60), |l| {
        l.starts_with(&format!("{m}: ")) && l.contains("active")
    });
    let mut got = Vec::new();
    let both = eventually(Duration::from_secs(10), || {
        got = messages(&rig, &m, "10 min ago");
        got.len() >= 2
    });
    assert!(both, "{got:?}\n{}", w.dump());
    assert_eq!(got, ["gen-1", "gen-2"], "{}", w.dump());
    let (code, _) = w.signal("TERM");
    assert_eq!(code, Some(0), "{}", w.dump());
    hal(&rig).args(["stop", &m]).code(0);
}
