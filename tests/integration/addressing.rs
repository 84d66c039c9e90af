//! The operator's habits, end to end with the real binary and engine: `status --failed`, `-q`,
//! the `hal start|stop|…` shortcuts and their suggestions, shell patterns, `MODULE/SERVICE`,
//! `stop -t` and the JSON error document.

use std::time::Duration;

use crate::rig::compose::Stack;
use crate::rig::{FIXTURE, Rig, Run, docker, engine, hal, module_names, run, stack};

const FOREVER: &str = "while true; do sleep 1 & wait; done";

/// A container's id and start time.
fn identity(container: &str) -> String {
    docker(&["inspect", "-f", "{{.Id}} {{.State.StartedAt}}", container])
        .trim()
        .to_string()
}

/// A stack with one long-running service, `app`.
fn forever() -> Stack {
    stack().service("app").runs(FOREVER)
}

/// A stack with two long-running services, `www` and `worker`, each saying who it is.
fn two_services(rig: &Rig, short: &str) -> String {
    rig.stack(
        short,
        stack()
            .service("www")
            .runs(&format!("echo www says hi; {FOREVER}"))
            .service("worker")
            .runs(&format!("echo worker says hi; {FOREVER}")),
    )
}

#[test]
fn status_failed_lists_only_what_needs_a_person() {
    let Some(rig) = engine() else { return };
    let ok = rig.stack("ok", forever());
    let parked = rig.stack("parked", forever());
    let never = rig.stack("never", forever());
    let wanted = rig.stack("wanted", forever());
    let sick = rig.stack("sick", stack().service("app").runs("echo boom; exit 3"));
    // A stray directory whose name is no module name: invalid, never a person's problem.
    let stray = rig.root.join("Stray Dir");
    std::fs::create_dir_all(&stray).unwrap();
    std::fs::write(stray.join("compose.yaml"), "services: {}\n").unwrap();

    run(&rig, &["start", &ok, &parked, &wanted]).expect(0);
    run(&rig, &["stop", &parked]).expect(0);
    run(&rig, &["start", &sick, "--timeout", "20s"]).expect(1);

    // Everything but stray, never and parked is fine: only the plain status says 3.
    run(&rig, &["status"]).expect(3);
    let none = run(
        &rig,
        &["status", "--failed", &ok, &parked, &never, "Stray Dir"],
    );
    none.expect(0);
    assert!(none.stdout.is_empty(), "{none:?}");
    assert!(
        none.stderr.contains("no module needs attention"),
        "{none:?}"
    );
    let doc = rig.status_of(&["--failed", &ok, &parked]).code(0);
    assert!(module_names(doc.doc()).is_empty(), "{doc}");

    // wanted is stopped behind hal's back: wanted up, not active.
    let container = format!("{wanted}-app-1");
    docker(&["stop", &container]);
    let failed = rig.status_of(&["--failed"]).run;
    failed.expect(3);
    let mut listed = module_names(&failed.json());
    listed.sort();
    let mut expected = vec![sick.clone(), wanted.clone()];
    expected.sort();
    assert_eq!(listed, expected, "{failed:?}");
    assert_eq!(failed.state_of(&sick), "failed");

    // The human table says what each module is wanted to be.
    let table = run(&rig, &["module", "status", "--failed"]);
    table.expect(3);
    assert!(table.stdout.contains("DESIRED"), "{table:?}");
    assert!(!table.stdout.contains(&parked), "{table:?}");
    let all = run(&rig, &["status"]);
    let row = |name: &str| {
        all.stdout
            .lines()
            .find(|l| l.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("no row for {name}: {all:?}"))
            .split_whitespace()
            .collect::<Vec<_>>()
    };
    assert_eq!(row(&ok)[..4], [ok.as_str(), "stack", "active", "up"]);
    assert_eq!(
        row(&parked)[..4],
        [parked.as_str(), "stack", "inactive", "down"]
    );
    assert_eq!(row(&never)[..4], [never.as_str(), "stack", "inactive", "-"]);

    // An engine that cannot be asked is still exit 6, --failed or not.
    let down = run(
        &rig,
        &[
            "-H",
            "unix:///nonexistent/docker.sock",
            "status",
            "--failed",
            &ok,
        ],
    );
    down.expect(6);
}

#[test]
fn quiet_status_leaves_only_the_exit_code() {
    let Some(rig) = engine() else { return };
    let up = rig.stack("up", forever());
    let off = rig.stack("off", forever());
    run(&rig, &["start", &up]).expect(0);

    for (args, code) in [
        (vec!["-q", "status", up.as_str()], 0),
        (vec!["-q", "status"], 3),
        (vec!["--quiet", "module", "status", off.as_str()], 3),
        (vec!["-q", "status", "--failed"], 0),
    ] {
        let r = run(&rig, &args);
        r.expect(code);
        assert!(r.stdout.is_empty(), "{args:?} printed: {r:?}");
        assert!(r.stderr.is_empty(), "{args:?} printed: {r:?}");
    }
    // An error still says why, once, on stderr (docs/commands.md: how `-q` is read).
    let ghost = format!("{up}-ghost");
    let r = run(&rig, &["-q", "status", &ghost]);
    r.expect(4);
    assert!(r.stdout.is_empty(), "-q printed on stdout: {r:?}");
    let lines: Vec<&str> = r.stderr.lines().collect();
    assert!(
        lines.len() == 1 && lines[0].starts_with("hal: no such module"),
        "-q must leave the error's one line: {r:?}"
    );
    // A script that asks for JSON gets it, quiet or not.
    let doc = hal(&rig).arg("-q").status(&[&up]).code(0);
    assert_eq!(doc.state(), "active");
}

#[test]
fn shortcuts_do_what_the_module_verbs_do() {
    let Some(rig) = engine() else { return };
    let web = two_services(&rig, "web");

    let help = run(&rig, &["--help"]);
    help.expect(0);
    for verb in ["start", "stop", "restart", "logs", "list"] {
        assert!(
            help.stdout
                .lines()
                .any(|l| l.trim_start().starts_with(&format!("{verb} "))),
            "{verb} missing from --help: {}",
            help.stdout
        );
    }

    let started = run(&rig, &["--json", "start", &web]);
    started.expect(0);
    let doc = started.json();
    assert_eq!(doc["modules"][0]["action"], "start");
    assert_eq!(doc["modules"][0]["state"], "active");
    assert_eq!(rig.state_of(&web), "active");

    assert_eq!(
        run(&rig, &["list"]).expect(0).stdout,
        run(&rig, &["module", "list"]).expect(0).stdout
    );
    let logs = run(&rig, &["logs", &web]);
    logs.expect(0);
    assert_eq!(logs.stdout, run(&rig, &["module", "logs", &web]).stdout);
    assert!(logs.stdout.contains("www says hi"), "{logs:?}");

    let restarted = run(&rig, &["--json", "restart", &web]);
    restarted.expect(0);
    assert_eq!(restarted.json()["modules"][0]["action"], "restart");

    run(&rig, &["stop", &web]).expect(0);
    let st = rig.status(&web).code(3);
    assert_eq!(st.state(), "inactive");
    assert_eq!(st["desired"], "down");
}

#[test]
fn a_mistyped_verb_gets_the_verb_that_fits() {
    let rig = Rig::new();
    for (args, meant) in [
        (&["strat", "web"][..], "start"),
        (&["module", "strat", "web"][..], "start"),
        (&["stpo", "web"][..], "stop"),
        (&["module", "restat", "web"][..], "restart"),
    ] {
        let r = run(&rig, args);
        r.expect(2);
        assert!(
            r.stderr
                .contains(&format!("a similar subcommand exists: '{meant}'")),
            "{args:?}: {r:?}"
        );
    }
    // `hal start web` is a verb now: no tip, it looks for the module.
    let r = run(&rig, &["start", "web"]);
    r.expect(4);
    assert!(r.stderr.contains("no such module: web"), "{r:?}");
}

#[test]
fn patterns_select_modules_and_a_miss_is_exit_4() {
    let Some(rig) = engine() else { return };
    let mail = rig.stack("mail", forever());
    let mailu = rig.stack("mailu", forever());
    let web = rig.stack("web", forever());
    // A stray directory the pattern matches, whose name is no module name.
    let stray = rig.name("mail.old");
    std::fs::create_dir_all(rig.root.join(&stray)).unwrap();
    std::fs::write(rig.root.join(&stray).join("compose.yaml"), "services: {}\n").unwrap();
    let pattern = format!("{}-mail*", rig.prefix);

    let started = run(&rig, &["--json", "start", &pattern]);
    started.expect(0);
    assert_eq!(module_names(&started.json()), [mail.clone(), mailu.clone()]);
    assert_eq!(rig.status_all(&web).state(), "inactive");

    // `?` and `[...]`, on status and on the verbs alike.
    let one = format!("{}-mai?", rig.prefix);
    let st = rig.status_of(&[&one]).code(0);
    assert_eq!(module_names(st.doc()), [mail.as_str()]);
    // status shows the invalid directory a pattern matches; the verbs never take it.
    let set = format!("{}-[mw]*", rig.prefix);
    let st = rig.status_of(&[&set]).run;
    st.expect(3);
    assert_eq!(
        module_names(&st.json()),
        [mail.clone(), stray.clone(), mailu.clone(), web.clone()]
    );
    assert_eq!(st.state_of(&stray), "invalid");
    let logs = run(&rig, &["logs", &pattern]);
    logs.expect(0);

    // A pattern that matches nothing is "no such module", naming the pattern.
    let miss = format!("{}-db*", rig.prefix);
    for verb in [&["stop"][..], &["module", "start"], &["status"], &["logs"]] {
        let mut args = verb.to_vec();
        args.push(&miss);
        let r = run(&rig, &args);
        r.expect(4);
        assert!(
            r.stderr.contains(&format!("no module matches {miss}")),
            "{args:?}: {r:?}"
        );
    }
    run(&rig, &["stop", &pattern]).expect(0);
    let st = rig.status_of(&[&pattern]).run;
    st.expect(3);
    assert_eq!(st.state_of(&mail), "inactive");
}

#[test]
fn one_service_of_a_stack() {
    let Some(rig) = engine() else { return };
    rig.set_config("[defaults]\npull = \"never\"\n\n[module.note]\nunit = \"note.service\"\n");
    let web = two_services(&rig, "web");
    run(&rig, &["module", "start", &web]).expect(0);
    let www = format!("{web}-www-1");
    let worker = format!("{web}-worker-1");
    let www_before = identity(&www);
    let worker_before = identity(&worker);

    // restart web/worker: worker starts again, www keeps its container and its uptime.
    let restarted = run(
        &rig,
        &["--json", "module", "restart", &format!("{web}/worker")],
    );
    restarted.expect(0);
    let doc = restarted.json();
    assert_eq!(doc["modules"][0]["name"], web.as_str());
    assert_eq!(doc["modules"][0]["service"], "worker");
    assert_eq!(doc["modules"][0]["state"], "active");
    assert_eq!(identity(&www), www_before, "www was touched");
    let worker_after = identity(&worker);
    assert!(!worker_after.is_empty(), "worker is gone");
    assert_ne!(worker_after, worker_before, "worker was not restarted");
    // It counted against the module's limit: start, then this restart.
    let st = rig.status(&web);
    assert_eq!(st["limit"]["used"], 2, "{st:?}");

    // A service that does not exist is exit 4, naming the ones that do.
    let ghost = run(&rig, &["restart", &format!("{web}/ghost")]);
    ghost.expect(4);
    assert!(
        ghost.stderr.contains("no such service") && ghost.stderr.contains("worker, www"),
        "{ghost:?}"
    );
    for verb in ["start", "stop", "status", "logs"] {
        run(&rig, &["module", verb, &format!("{web}/ghost")]).expect(4);
    }
    assert_eq!(identity(&www), www_before, "a refused verb touched www");
    // A host module has no services.
    let host = run(&rig, &["status", "note/x"]);
    host.expect(4);
    assert!(host.stderr.contains("host module"), "{host:?}");

    // status web/worker: that service's rows only.
    let st = rig.status(&format!("{web}/worker")).code(0);
    assert_eq!(st["service"], "worker", "{st}");
    assert_eq!(st.services().len(), 1, "{st}");
    assert_eq!(st.services()[0]["name"], "worker");
    let table = run(&rig, &["status", &format!("{web}/worker")]);
    table.expect(0);
    assert!(table.stdout.contains(&format!("{web}/worker")), "{table:?}");

    // logs web/worker: worker's lines only.
    let logs = run(&rig, &["module", "logs", &format!("{web}/worker")]);
    logs.expect(0);
    assert!(logs.stdout.contains("worker says hi"), "{logs:?}");
    assert!(!logs.stdout.contains("www says hi"), "{logs:?}");

    // stop web/worker: its container goes, www runs on, and the module is
    // still wanted up and not a person's problem.
    run(&rig, &["stop", &format!("{web}/worker")]).expect(0);
    assert_eq!(crate::rig::containers(&web), [www.as_str()]);
    assert_eq!(identity(&www), www_before, "stopping worker touched www");
    run(&rig, &["status", &format!("{web}/worker")]).expect(3);
    assert_eq!(rig.status(&web)["desired"], "up");
    run(&rig, &["status", "--failed", &web]).expect(0);

    // start web/worker brings it back alone.
    run(&rig, &["start", &format!("{web}/worker")]).expect(0);
    run(&rig, &["status", &format!("{web}/worker")]).expect(0);
    assert_eq!(identity(&www), www_before, "starting worker touched www");
    run(&rig, &["status", &web]).expect(0);
}

/// A service that takes 3 s to stop on SIGTERM, writing a marker when it
/// stopped cleanly: killed at 1 s, clean at 5 s.
#[test]
fn stop_grace_period_is_handed_to_compose() {
    let Some(rig) = engine() else { return };
    let out = rig.dir.join("out");
    std::fs::create_dir_all(&out).unwrap();
    let marker = out.join("marker");
    let script = "trap 'sleep 3; echo clean > /out/marker; exit 0' TERM; echo ready; \
                  while true; do sleep 1000 & wait; done";
    let yaml = format!(
        "services:\n  slow:\n    image: {}\n    command: [\"sh\", \"-c\", {:?}]\n    volumes: [\"{}:/out\"]\n",
        FIXTURE,
        script,
        out.display()
    );
    let slow = rig.stack("slow", &yaml);

    // -t 1: SIGKILL before the trap is done.
    run(&rig, &["module", "start", &slow]).expect(0);
    let r = run(&rig, &["module", "stop", "-t", "1", &slow]);
    r.expect(0);
    assert!(!marker.exists(), "the service was not killed at 1s: {r:?}");

    // -t 5 (long form, and on one service): it stops on its own.
    run(&rig, &["start", &slow]).expect(0);
    let r = run(&rig, &["stop", "--timeout", "5s", &format!("{slow}/slow")]);
    r.expect(0);
    assert!(
        std::fs::read_to_string(&marker).is_ok_and(|m| m.trim() == "clean"),
        "the service did not stop cleanly within 5s: {r:?}"
    );
    assert!(r.took >= Duration::from_secs(3), "{r:?}");
    assert!(crate::rig::containers(&slow).is_empty());
}

#[test]
fn json_errors_are_a_document_on_stdout() {
    let rig = Rig::new();
    let error = |r: &Run, code: i32| {
        r.expect(code);
        let doc = r.json();
        assert_eq!(doc["schema"], 1, "{r:?}");
        assert_eq!(doc["error"]["exit_code"], code, "{r:?}");
        let message = doc["error"]["message"].as_str().unwrap().to_string();
        // The person still reads it on stderr.
        assert!(
            r.stderr.starts_with("hal: ") || r.stderr.starts_with("error: "),
            "{r:?}"
        );
        message
    };
    let ghost = run(&rig, &["--json", "module", "start", "ghost"]);
    assert!(error(&ghost, 4).contains("no such module: ghost"));
    let miss = rig.status_of(&["ghost*"]).run;
    assert!(error(&miss, 4).contains("no module matches ghost*"));
    let bad_name = run(&rig, &["--json", "stop", "../x"]);
    error(&bad_name, 2);
    // Without --json, stdout stays empty.
    let plain = run(&rig, &["module", "start", "ghost"]);
    plain.expect(4);
    assert!(plain.stdout.is_empty(), "{plain:?}");
    // No engine for any module named: the command stops before any of them.
    let web = rig.stack("web", forever());
    let down = run(
        &rig,
        &[
            "--json",
            "-H",
            "unix:///nonexistent/docker.sock",
            "start",
            &web,
        ],
    );
    assert!(error(&down, 6).contains("Docker not reachable"));
    // A config that does not load: before there is a node at all.
    rig.set_config("[defaults]\npull = \"sometimes\"\n");
    let bad = rig.status_of(&[]).run;
    assert!(error(&bad, 2).contains("defaults.pull"));
    // clap's own usage errors get it too when --json is on the line.
    let usage = run(&rig, &["module", "start", "--bogus", "--json"]);
    assert!(error(&usage, 2).contains("--bogus"));
}
