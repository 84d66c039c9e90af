//! What hal prints while it works: batch results stream as modules finish (to a
//! pipe and to a real terminal, with a bounded progress area), and one colour
//! decision is obeyed by every command.

use std::process::Command;
use std::time::{Duration, Instant};

use crate::rig::compose::Stack;
use crate::rig::{self, Lines, engine, eventually, path_str, run, stack};

const ESC: u8 = 0x1b;

// ---------------------------------------------------------------- streaming

/// A module of one service, off the network, healthy only after `secs`
/// seconds (30 checks a second apart may fail before then).
fn slow_module(secs: u32) -> Stack {
    stack()
        .service("app")
        .runs(&format!("sleep {secs}; touch /tmp/ready; sleep 100000"))
        .healthcheck("/tmp/ready", "interval: 1s\ntimeout: 2s\nretries: 30")
        .network_mode("none")
}

/// A module of one idle service, off the network.
fn quick_module() -> Stack {
    stack().service("app").network_mode("none")
}

#[test]
fn piped_lines_arrive_as_each_module_finishes() {
    let Some(rig) = engine() else { return };
    let fast = rig.stack("fast", quick_module());
    let slow = rig.stack("slow", slow_module(6));

    // The slow one is named first: lines come in the order modules finish.
    let began = Instant::now();
    let mut child = rig.cmd(&["module", "start", &slow, &fast]).spawn().unwrap();
    let mut out = Lines::of(&mut child);
    let stderr = child.stderr.take().unwrap();
    let err = std::thread::spawn(move || std::io::read_to_string(stderr).unwrap());
    let mut lines: Vec<(Duration, String)> = Vec::new();
    while let Some(line) = out.next(rig::run::LIMIT) {
        lines.push((began.elapsed(), line));
    }
    let status = child.wait().unwrap();
    let ended = began.elapsed();
    let stderr = err.join().unwrap();
    assert!(status.success(), "{lines:?}\n{stderr}");
    assert_eq!(lines.len(), 2, "{lines:?}");
    let (first_at, first) = &lines[0];
    assert!(first.starts_with(&format!("{fast}: active")), "{lines:?}");
    assert!(
        lines[1].1.starts_with(&format!("{slow}: active")),
        "{lines:?}"
    );
    // The fast module's line was there seconds before the slow one was done.
    assert!(
        ended.saturating_sub(*first_at) >= Duration::from_secs(3),
        "the first line came at {first_at:?}, hal ended at {ended:?}: not streamed"
    );
    // The summary comes last, on stderr.
    let last = stderr.lines().last().unwrap_or_default();
    assert!(last.starts_with("hal: start 2 of 2 modules in"), "{stderr}");

    // --json: one document at the end, in the order given.
    run(&rig, &["module", "stop", &slow, &fast]).expect(0);
    let run = run(&rig, &["--json", "module", "start", &slow, &fast]);
    run.expect(0);
    let doc = run.json();
    let names: Vec<&str> = doc["modules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, [slow.as_str(), fast.as_str()]);
}

/// A tmux server of this test's own, ended (by its socket) when dropped.
struct Tmux {
    socket: String,
}

impl Tmux {
    fn cmd(&self, args: &[&str]) -> std::process::Output {
        Command::new("tmux")
            .args(["-f", "/dev/null", "-L", &self.socket])
            .args(args)
            .output()
            .unwrap()
    }

    /// The pane: the visible screen, or with `history` everything it ever showed.
    fn capture(&self, history: bool) -> String {
        let mut args = vec!["capture-pane", "-p", "-t", "hal"];
        if history {
            args.extend(["-S", "-"]);
        }
        String::from_utf8_lossy(&self.cmd(&args).stdout).into_owned()
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.cmd(&["kill-server"]);
    }
}

/// Shell-quotes `s` for the script the pane runs.
fn quoted(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

#[test]
fn a_terminal_gets_a_bounded_progress_area_and_the_summary_last() {
    let Some(()) = rig::need("tmux", "-V") else {
        return;
    };
    let Some(rig) = engine() else { return };
    const ROWS: usize = 24;
    const MODULES: usize = 30;
    let names: Vec<String> = (0..MODULES)
        .map(|i| rig.stack(&format!("m{i:02}"), slow_module(2)))
        .collect();

    // The pane runs hal with this rig's environment, then says it is done.
    let script = rig.dir.join("run.sh");
    let env = [
        ("HAL_SERVICES_DIR", path_str(&rig.root)),
        ("HAL_STATE_DIR", path_str(&rig.state)),
        ("HAL_CONFIG", path_str(&rig.config)),
    ];
    let mut text = String::from("unset NO_COLOR CLICOLOR_FORCE HAL_YES HAL_COMPOSE\n");
    for (k, v) in env {
        text.push_str(&format!("export {k}={}\n", quoted(v)));
    }
    text.push_str(&format!(
        "{} module start --all --jobs 30\necho \"EXIT=$?\"\nsleep 600\n",
        quoted(env!("CARGO_BIN_EXE_hal"))
    ));
    std::fs::write(&script, text).unwrap();

    let tmux = Tmux {
        socket: format!("hal-test-{}", rig.prefix),
    };
    let out = tmux.cmd(&[
        "new-session",
        "-d",
        "-s",
        "hal",
        "-x",
        "100",
        "-y",
        &ROWS.to_string(),
        "sh",
        path_str(&script),
    ]);
    assert!(out.status.success(), "tmux: {out:?}");

    // While it runs, the screen never holds more than it has rows, and the
    // area (everything below the finished lines) stays within them too.
    let mut biggest_area = 0;
    let mut saw_more = false;
    let mut screen = String::new();
    let finished = eventually(Duration::from_secs(240), || {
        screen = tmux.capture(false);
        let lines: Vec<&str> = screen.lines().collect();
        assert!(lines.len() <= ROWS, "{} lines:\n{screen}", lines.len());
        let area = lines
            .iter()
            .rev()
            .skip_while(|l| l.trim().is_empty())
            .take_while(|l| !l.contains(" active (start took"))
            .count();
        biggest_area = biggest_area.max(area);
        saw_more |= screen.contains("more running");
        screen.contains("EXIT=")
    });
    assert!(finished, "hal did not finish:\n{screen}");
    assert!(
        saw_more,
        "30 modules on 24 rows, but never a `+N more` line"
    );
    assert!(biggest_area < ROWS, "the area took {biggest_area} rows");

    // The end: the summary is the last thing hal wrote.
    let screen_lines: Vec<&str> = screen
        .lines()
        .map(str::trim_end)
        .filter(|l| !l.is_empty())
        .collect();
    let at = screen_lines
        .iter()
        .position(|l| l.starts_with("EXIT="))
        .unwrap();
    assert_eq!(screen_lines[at], "EXIT=0", "{screen}");
    assert!(
        screen_lines[at - 1].starts_with(&format!("hal: start {MODULES} of {MODULES} modules in")),
        "{screen}"
    );

    // Everything the pane ever showed: one line per module, no spinner left behind.
    let history = tmux.capture(true);
    for name in &names {
        let count = history
            .lines()
            .filter(|l| l.starts_with(&format!("{name}: active (start took")))
            .count();
        assert_eq!(count, 1, "{name}: {count} result lines\n{history}");
    }
    let leftovers: Vec<&str> = history
        .lines()
        .filter(|l| {
            l.contains("more running") || l.contains(": starting") || l.contains(": waiting")
        })
        .collect();
    assert!(leftovers.is_empty(), "lines left behind: {leftovers:#?}");
}

// ---------------------------------------------------------------- colour

#[derive(Copy, Clone, Debug)]
struct Case {
    flag: &'static str,
    no_color: bool,
    force: bool,
    dumb: bool,
}

impl Case {
    fn all() -> Vec<Case> {
        let mut out = Vec::new();
        for flag in ["auto", "always", "never"] {
            for no_color in [false, true] {
                for force in [false, true] {
                    for dumb in [false, true] {
                        out.push(Case {
                            flag,
                            no_color,
                            force,
                            dumb,
                        });
                    }
                }
            }
        }
        out
    }

    /// docs/decisions.md's rule (Colour); the streams here are pipes, never terminals.
    fn colour(self) -> bool {
        match self.flag {
            "always" => true,
            "never" => false,
            _ if self.no_color => false,
            _ if self.force => true,
            _ => false,
        }
    }

    fn apply(self, c: &mut Command) {
        c.env_remove("NO_COLOR").env_remove("CLICOLOR_FORCE");
        if self.no_color {
            c.env("NO_COLOR", "1");
        }
        if self.force {
            c.env("CLICOLOR_FORCE", "1");
        }
        c.env("TERM", if self.dumb { "dumb" } else { "xterm-256color" });
    }
}

#[test]
fn one_colour_decision_everywhere() {
    let Some(rig) = engine() else { return };
    let web = rig.stack("web", quick_module());
    // An invalid module: `list` colours its kind.
    let bad = rig.root.join("Bad");
    std::fs::create_dir_all(&bad).unwrap();
    std::fs::write(bad.join("compose.yaml"), quick_module().to_string()).unwrap();

    let commands: [(&str, Vec<&str>, i32); 3] = [
        ("list", vec!["module", "list"], 0),
        ("status", vec!["status", web.as_str()], 3),
        ("clap error", vec!["bogus"], 2),
    ];
    for case in Case::all() {
        for (what, args, code) in &commands {
            let mut all = vec!["--color", case.flag];
            all.extend(args.iter().copied());
            let mut c = rig.cmd(&all);
            case.apply(&mut c);
            let out = c.output().unwrap();
            assert_eq!(out.status.code(), Some(*code), "{what} {case:?}: {out:?}");
            let escapes = |b: &[u8]| b.contains(&ESC);
            let shown = if *what == "clap error" {
                &out.stderr
            } else {
                &out.stdout
            };
            if case.colour() {
                assert!(
                    escapes(shown),
                    "{what} {case:?}: no colour where it is on: {}",
                    String::from_utf8_lossy(shown)
                );
            } else {
                assert!(
                    !escapes(&out.stdout) && !escapes(&out.stderr),
                    "{what} {case:?}: an escape byte where colour is off: {out:?}"
                );
            }
        }
    }
}
