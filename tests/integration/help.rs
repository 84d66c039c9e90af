//! What hal says about itself: every `--help` shows the global options under
//! their own heading, and hal(1)'s ENVIRONMENT names every variable hal reads.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use clap::CommandFactory;

use crate::lib_paths::Cli;
use crate::rig::{Rig, cli_tree, fresh};

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
    walk(&Cli::command(), &mut Vec::new(), &mut out);
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
    let globals: Vec<String> = Cli::command()
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
    let rig = Rig::new();
    for path in command_paths() {
        for help in ["-h", "--help"] {
            let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
            args.push(help);
            let out = rig.cmd(&args).output().unwrap();
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

// ---------------------------------------------------------------- each verb's own

/// Each verb's help offers `MODULE/SERVICE` in its arguments exactly when the
/// verb takes one (tried, changing nothing: `--dry-run`, `--check` or a verb
/// that only reads), and `--jobs`'s default in its help is the one it runs with.
#[test]
fn each_verbs_help_offers_what_the_verb_accepts() {
    let Some(rig) = crate::rig::engine() else {
        return;
    };
    let m = rig.stack("svc", crate::rig::stack().service("app").runs("sleep 1"));
    let one_service = format!("{m}/app");
    let mut tried = Vec::new();
    for v in cli_tree::verbs().into_iter().filter(|v| v.takes_modules()) {
        let path: Vec<&str> = v.path.iter().map(String::as_str).collect();
        let out = rig
            .cmd(&[&path[..], &["--help"]].concat())
            .output()
            .unwrap();
        let help = String::from_utf8(out.stdout).unwrap();
        let offered = section(&help, "Arguments:")
            .iter()
            .any(|l| l.contains("MODULE/SERVICE"));
        let flags = v.long_flags();
        let mut run = crate::rig::hal(&rig).args(["-q"]);
        for a in &path {
            run = run.arg(a);
        }
        for safe in ["--dry-run", "--check"] {
            if flags.iter().any(|f| f == safe) {
                run = run.arg(safe);
                break;
            }
        }
        let run = run.arg(&one_service).run();
        let accepted = run.code != Some(2);
        assert_eq!(
            offered,
            accepted,
            "hal {}: help offers MODULE/SERVICE: {offered}, takes it: {accepted}\n{run}\n{help}",
            path.join(" ")
        );
        tried.push((path.join(" "), accepted));

        if flags.iter().any(|f| f == "--jobs") {
            let said = jobs_default(&help);
            if v.path.last().is_some_and(|n| n == "update") {
                // What the verb runs with: clap's parse of a bare `update x`.
                let argv = [&["hal"][..], &path[..], &["x"]].concat();
                let mut matches = Cli::command().try_get_matches_from(argv).unwrap();
                for p in &path {
                    matches = matches.subcommand_matches(p).unwrap().clone();
                }
                let runs_with = matches.get_one::<u16>("jobs").copied();
                assert_eq!(said, runs_with.map(|n| n.to_string()), "{help}");
            } else {
                // `Node::jobs`: its unit test pins this text to its formula.
                assert_eq!(said.as_deref(), Some("4 per CPU, 8 to 16"), "{help}");
            }
        }
    }
    for (verb, takes) in [("update", false), ("start", true), ("reset-failed", false)] {
        assert!(tried.contains(&(verb.to_string(), takes)), "{tried:?}");
    }
}

/// The `[default: …]` of `--jobs` in a `--help` text (its entry: the flag's
/// line and the deeper-indented lines under it).
fn jobs_default(help: &str) -> Option<String> {
    let mut lines = help.lines().skip_while(|l| !l.contains("--jobs <N>"));
    let first = lines.next()?;
    let under = lines.take_while(|l| l.is_empty() || l.starts_with("          "));
    let entry = std::iter::once(first)
        .chain(under)
        .collect::<Vec<_>>()
        .join(" ");
    let entry = entry.split_whitespace().collect::<Vec<_>>().join(" ");
    let start = entry.find("[default: ")? + "[default: ".len();
    Some(entry[start..].split(']').next()?.to_string())
}
