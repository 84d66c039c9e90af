//! The operator's day, part B: batch results stream as modules finish (a pipe and a real
//! terminal), one colour decision obeyed everywhere, global options under their own
//! heading, `hal.toml(5)` from the config's own key table, and hal(1)'s ENVIRONMENT.

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::rig::{compose, engine, fresh, in_ci, path_str, run, svc};
use clap::CommandFactory;
use clap_mangen::roff::{Roff, bold, italic, roman};

/// Prints `SKIP <test>: <why>`.
fn skip(why: &str) {
    crate::rig::skip(why);
}
use hal::module::config::{Config, DEFAULT_PULL_TIMEOUT, DEFAULT_TIMEOUT, PullPolicy};
use hal::module::keys::{self, KEYS, Table};

const ESC: u8 = 0x1b;

fn hal_bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_hal"))
}

// ---------------------------------------------------------------- streaming

/// A service that is healthy only after `secs` seconds.
fn slow_service(secs: u32) -> String {
    svc(
        "app",
        &format!("sleep {secs}; touch /tmp/ready; sleep 100000"),
        "    network_mode: none\n    healthcheck:\n      test: [\"CMD\", \"test\", \"-f\", \"/tmp/ready\"]\n      interval: 1s\n      timeout: 2s\n      retries: 30\n",
    )
}

fn quick_service() -> String {
    svc("app", "sleep 100000", "    network_mode: none\n")
}

#[test]
fn piped_lines_arrive_as_each_module_finishes() {
    let Some(rig) = engine() else { return };
    let fast = rig.stack("fast", compose(&[quick_service()]));
    let slow = rig.stack("slow", compose(&[slow_service(6)]));

    // The slow one is named first: lines come in the order modules finish.
    let began = Instant::now();
    let mut child = rig.cmd(&["module", "start", &slow, &fast]).spawn().unwrap();
    let stdout = child.stdout.take().unwrap();
    let stderr = child.stderr.take().unwrap();
    let err = std::thread::spawn(move || std::io::read_to_string(stderr).unwrap());
    let mut lines: Vec<(Duration, String)> = Vec::new();
    for line in BufReader::new(stdout).lines() {
        lines.push((began.elapsed(), line.unwrap()));
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

/// tmux, when it is there: CI must have it (scripts/provision.sh installs it).
fn tmux_or_skip(test: &str) -> bool {
    let ok = Command::new("tmux")
        .arg("-V")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        assert!(
            !in_ci(),
            "{test}: tmux is missing and CI=true forbids skipping (scripts/provision.sh installs it)"
        );
        skip(&format!("{test}: no tmux (run scripts/provision.sh)"));
    }
    ok
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
    if !tmux_or_skip("a_terminal_gets_a_bounded_progress_area_and_the_summary_last") {
        return;
    }
    let Some(rig) = engine() else { return };
    const ROWS: usize = 24;
    const MODULES: usize = 30;
    let names: Vec<String> = (0..MODULES)
        .map(|i| rig.stack(&format!("m{i:02}"), compose(&[slow_service(2)])))
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
    let deadline = Instant::now() + Duration::from_secs(240);
    let mut biggest_area = 0;
    let mut saw_more = false;
    let screen = loop {
        let screen = tmux.capture(false);
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
        if screen.contains("EXIT=") {
            break screen;
        }
        assert!(Instant::now() < deadline, "hal did not finish:\n{screen}");
        std::thread::sleep(Duration::from_millis(150));
    };
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

    /// The README's rule; the streams here are pipes, never terminals.
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
    let web = rig.stack("web", compose(&[quick_service()]));
    // An invalid module: `list` colours its kind.
    let bad = rig.root.join("Bad");
    std::fs::create_dir_all(&bad).unwrap();
    std::fs::write(bad.join("compose.yaml"), compose(&[quick_service()])).unwrap();

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

// ---------------------------------------------------------------- help

/// Every command path: `[]`, `["module"]`, `["module", "start"]`, …
fn command_paths() -> Vec<Vec<String>> {
    fn walk(cmd: &clap::Command, path: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
        out.push(path.clone());
        for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
            if sub.get_name() == "help" {
                continue;
            }
            path.push(sub.get_name().to_string());
            walk(sub, path, out);
            path.pop();
        }
    }
    let mut out = Vec::new();
    walk(&hal::cli::Cli::command(), &mut Vec::new(), &mut out);
    out
}

/// The lines of the help section that starts with `heading` (up to the next heading).
fn section<'a>(help: &'a str, heading: &str) -> Vec<&'a str> {
    help.lines()
        .skip_while(|l| *l != heading)
        .skip(1)
        .take_while(|l| l.is_empty() || l.starts_with(' '))
        .collect()
}

#[test]
fn every_help_shows_the_global_options_under_their_own_heading() {
    let globals: Vec<String> = hal::cli::Cli::command()
        .get_arguments()
        .filter(|a| a.is_global_set())
        .filter_map(|a| a.get_long().map(|l| format!("--{l}")))
        .collect();
    assert!(globals.len() >= 7, "{globals:?}");
    let flag_line = |l: &&str, g: &str| {
        l.trim_start()
            .split([',', ' '])
            .any(|w| w == g || w.starts_with(&format!("{g}=")))
    };
    for path in command_paths() {
        for help in ["-h", "--help"] {
            let out = hal_bin()
                .args(&path)
                .arg(help)
                .env("NO_COLOR", "1")
                .output()
                .unwrap();
            assert!(out.status.success(), "{path:?} {help}: {out:?}");
            let text = String::from_utf8(out.stdout).unwrap();
            let global = section(&text, "Global options:");
            let own = section(&text, "Options:");
            for g in &globals {
                assert!(
                    global.iter().any(|l| flag_line(l, g)),
                    "hal {} {help}: {g} is not under Global options:\n{text}",
                    path.join(" ")
                );
                assert!(
                    !own.iter().any(|l| flag_line(l, g)),
                    "hal {} {help}: {g} is mixed in with the command's own options:\n{text}",
                    path.join(" ")
                );
            }
        }
    }
}

// ---------------------------------------------------------------- hal.toml(5)

/// The field names serde expects in `table`, from its own refusal of an unknown one.
fn fields_of(table: Table) -> BTreeSet<String> {
    let probe = match table {
        Table::Top => "zz_probe = 1\n",
        Table::Defaults => "[defaults]\nzz_probe = 1\n",
        Table::Module => "[module.x]\nzz_probe = 1\n",
        Table::Restart => "[defaults]\nrestart = { zz_probe = 1 }\n",
    };
    let err = Config::parse(probe, Path::new("probe.toml"))
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(err.contains("unknown field `zz_probe`"), "{table:?}: {err}");
    let (_, expected) = err
        .split_once("expected")
        .unwrap_or_else(|| panic!("{err}"));
    expected
        .split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

#[test]
fn every_config_key_is_documented_and_every_documented_key_is_taken() {
    for table in Table::ALL {
        let mut documented: BTreeSet<String> =
            keys::of(table).map(|k| k.name.to_string()).collect();
        if table == Table::Top {
            // The two tables, each with its own part of the manual.
            documented.extend(["defaults".to_string(), "module".to_string()]);
        }
        assert_eq!(
            fields_of(table),
            documented,
            "{}: the structs in src/module/config.rs and the table in src/module/keys.rs differ",
            table.header()
        );
    }

    // A config that sets every documented key to its example parses.
    let restart = format!(
        "{{ {} }}",
        keys::of(Table::Restart)
            .map(|k| format!("{} = {}", k.name, k.example))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let mut text = String::new();
    for (table, header) in [
        (Table::Top, ""),
        (Table::Defaults, "[defaults]\n"),
        (Table::Module, "[module.x]\n"),
    ] {
        text.push_str(header);
        for k in keys::of(table) {
            let value = if k.name == "restart" && table == Table::Defaults {
                restart.as_str()
            } else {
                k.example
            };
            text.push_str(&format!("{} = {value}\n", k.name));
        }
    }
    let cfg =
        Config::parse(&text, Path::new("every-key.toml")).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert!(cfg.modules["x"].critical, "{text}");
    assert_eq!(cfg.defaults.restart.unwrap().burst, 4, "{text}");

    // The documented defaults are hal's.
    let default_of = |table: Table, name: &str| {
        keys::of(table)
            .find(|k| k.name == name)
            .map(|k| k.default)
            .unwrap()
    };
    let none = Config::default().settings("x");
    let duration = |s: &str| hal::util::duration::parse(s).unwrap();
    assert_eq!(none.pull, PullPolicy::Always);
    assert_eq!(default_of(Table::Defaults, "pull"), none.pull.as_str());
    assert_eq!(
        duration(default_of(Table::Defaults, "timeout")),
        DEFAULT_TIMEOUT
    );
    assert_eq!(none.timeout, DEFAULT_TIMEOUT);
    assert_eq!(
        duration(default_of(Table::Defaults, "pull_timeout")),
        DEFAULT_PULL_TIMEOUT
    );
    assert_eq!(
        default_of(Table::Restart, "burst"),
        none.limit.burst.to_string()
    );
    assert_eq!(
        duration(default_of(Table::Restart, "interval")),
        none.limit.interval
    );
}

const EXAMPLE: &str = r#"services_dir = "/services"

[defaults]
pull = "always"
restart = { burst = 5, interval = "120s" }
timeout = "120s"

[module.notifier]
unit = "desktop_notifications.service"
scope = "user"

[module.mailu]
pull = "missing"
restart = { burst = 3, interval = "300s" }
critical = true
after = ["meshware"]
on_failure = ["/usr/local/bin/notify-admin", "--urgent"]"#;

fn rendered(roff: &Roff) -> Vec<u8> {
    let mut v = Vec::new();
    roff.to_writer(&mut v).unwrap();
    v
}

/// `man/hal.toml.5`, from the key table.
fn config_page() -> Vec<u8> {
    let source = format!("hal {}", env!("CARGO_PKG_VERSION"));
    let mut r = Roff::new();
    r.control("TH", ["HAL.TOML", "5", "\"\"", &source, "hal manual"]);
    r.control("SH", ["NAME"]);
    r.text([roman("hal.toml - the configuration file of hal")]);
    r.control("SH", ["SYNOPSIS"]);
    r.text([
        italic("/etc/hal/hal.toml"),
        roman(" (root), "),
        italic("~/.config/hal/hal.toml"),
        roman(" (other users), or the file named by "),
        bold("--config"),
        roman(" or "),
        bold("HAL_CONFIG"),
        roman("."),
    ]);
    r.control("SH", ["DESCRIPTION"]);
    r.text([roman(
        "The config file is TOML. It says where the stacks are, declares host modules \
(init units), and holds settings for every module or for one. A missing file is an empty \
config, unless it was named with --config or HAL_CONFIG. A malformed file, an unknown \
key or a bad value is an error that names the file, the line and the key, and hal exits 2.",
    )]);
    r.control("PP", []);
    r.text([roman(
        "A module's setting comes from its own [module.NAME] section, else from [defaults], \
else from hal's default. A [module.NAME] section with unit is a host module; without it, the \
section holds settings for the stack NAME found under the services root.",
    )]);
    r.control("PP", []);
    r.text([roman(
        "Durations are written 250ms, 90s, 5m, 1h30m or 2d, or as a bare number of seconds.",
    )]);
    r.control("SH", ["KEYS"]);
    for table in Table::ALL {
        r.control("SS", [table.header()]);
        for k in keys::of(table) {
            r.control("TP", []);
            r.text([
                bold(k.name),
                roman(" ("),
                italic(k.kind),
                roman(format!("; default: {})", k.default)),
            ]);
            r.text([roman(k.meaning)]);
        }
    }
    r.control("SH", ["EXAMPLE"]);
    r.control("PP", []).control("RS", ["4"]).control("nf", []);
    for line in EXAMPLE.lines() {
        r.text([roman(line)]);
    }
    r.control("fi", []).control("RE", []);
    r.control("SH", ["FILES"]);
    r.control("TP", []);
    r.text([italic("/etc/hal/hal.toml")]);
    r.text([roman("The config file when hal runs as root.")]);
    r.control("TP", []);
    r.text([italic("~/.config/hal/hal.toml")]);
    r.text([roman(
        "The config file of other users ($XDG_CONFIG_HOME/hal/hal.toml when XDG_CONFIG_HOME is set).",
    )]);
    r.control("SH", ["SEE ALSO"]);
    r.text([
        bold("hal"),
        roman("(1), "),
        bold("hal-watch"),
        roman("(1), "),
        bold("hal-rescue"),
        roman("(1), "),
        bold("systemd.unit"),
        roman("(5)"),
    ]);
    r.control("SH", ["VERSION"]);
    r.text([roman(format!("v{}", env!("CARGO_PKG_VERSION")))]);
    rendered(&r)
}

#[test]
fn the_config_manual_is_fresh() {
    fresh::check(
        &fresh::repo_dir("man"),
        &[("hal.toml.5".to_string(), config_page())],
        |name| name.ends_with(".5"),
    );
    let text = String::from_utf8(config_page()).unwrap();
    for k in KEYS {
        assert!(
            text.contains(&format!("\\fB{}\\fR", k.name)),
            "{} missing",
            k.name
        );
    }
}

#[test]
fn the_config_manual_renders_with_man() {
    let available = Command::new("man")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !available {
        assert!(!in_ci(), "man is missing and CI=true forbids skipping");
        skip("the_config_manual_renders_with_man: man is not installed");
        return;
    }
    let (ok, stderr, page) = fresh::render_man("hal.toml.5", &config_page());
    assert!(ok && stderr.trim().is_empty(), "{stderr}");
    for want in ["on_failure", "pull_timeout", "[module.NAME]", "interval"] {
        assert!(page.contains(want), "{want} not in\n{page}");
    }
}

// ---------------------------------------------------------------- hal(1)

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Upper-case string literals (`"DOCKER_CONFIG"`) on `line`.
fn variable_names(line: &str) -> Vec<String> {
    line.split('"')
        .skip(1)
        .step_by(2)
        .filter(|w| {
            w.len() >= 3
                && w.starts_with(|c: char| c.is_ascii_uppercase())
                && w.chars()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
        })
        .map(str::to_string)
        .collect()
}

/// Every environment variable `src/` reads: the names on a line that reads the
/// environment, or on the two lines before it (a list of names, then the call).
fn variables_read() -> BTreeSet<String> {
    let mut files = Vec::new();
    rust_files(&fresh::repo_dir("src"), &mut files);
    let mut names = BTreeSet::new();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        for (i, l) in lines.iter().enumerate() {
            // `.env("X", v)` sets a child's variable: not a read.
            let reads = [
                "env::var",
                "var(\"",
                "var_os(",
                "nonempty(",
                "user_dir(",
                "env = \"",
            ]
            .iter()
            .any(|p| l.contains(p))
                || (l.contains("env(\"") && !l.contains(".env(\""));
            if reads {
                for near in &lines[i.saturating_sub(2)..=i] {
                    names.extend(variable_names(near));
                }
            }
        }
    }
    names
}

#[test]
fn hal_1_documents_every_variable_hal_reads_and_points_to_hal_toml_5() {
    let read = variables_read();
    for want in [
        "DOCKER_CONFIG",
        "DOCKER_HOST",
        "NO_COLOR",
        "CLICOLOR_FORCE",
        "HAL_STATE_DIR",
    ] {
        assert!(read.contains(want), "the scan missed {want}: {read:?}");
    }
    let page = std::fs::read_to_string(fresh::repo_dir("man").join("hal.1")).unwrap();
    let environment: String = page
        .split(".SH ENVIRONMENT")
        .nth(1)
        .and_then(|s| s.split("\n.SH ").next())
        .unwrap()
        .to_string();
    let missing: Vec<&String> = read
        .iter()
        .filter(|v| !environment.contains(v.as_str()))
        .collect();
    assert!(
        missing.is_empty(),
        "hal(1) ENVIRONMENT does not mention {missing:?} (tests/manpages.rs MORE_ENVIRONMENT)"
    );
    let see_also = page
        .split(".SH \"SEE ALSO\"")
        .nth(1)
        .unwrap_or_else(|| page.split(".SH SEE ALSO").nth(1).unwrap());
    assert!(see_also.contains("\\fBhal.toml\\fR(5)"), "{see_also}");
}
