//! Reading the command line: clap's parse, with a suggestion for a mistyped verb that names the likeliest one.

use std::ffi::OsString;

use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::{CommandFactory, Parser};

use crate::cli::Cli;

/// Parses `args` (the program name first) as [`Cli::try_parse_from`] does.
///
/// For a mistyped subcommand clap lists every verb similar enough, least
/// similar first (`hal strat`: 'status', 'start'); hal names one, the likeliest
/// (see [`tip`]), so the tip points at the verb that was meant.
pub fn parse_from<I, T>(args: I) -> Result<Cli, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    Cli::try_parse_from(args).map_err(best_suggestion)
}

/// Verbs that stop or restart something: a tip names one only when it is the
/// only close match (`hal reset-faild` must not send anyone to `restart`).
/// Every subcommand is in this list or the tests' `GENTLE`: a new one fails
/// `every_subcommand_says_whether_it_stops_something` until it is put in one.
const DISRUPTIVE: [&str; 5] = ["stop", "restart", "rescue", "adopt", "update"];

/// The verb to suggest for `typed`, out of clap's similar ones (least similar
/// first): the nearest close one that stops nothing; else a disruptive verb if
/// it is the only close match; else clap's likeliest one that stops nothing.
pub(crate) fn tip<'a>(typed: &str, similar: &'a [String]) -> Option<&'a str> {
    use crate::module::name::{distance, is_close};
    let gentle = |v: &&String| !DISRUPTIVE.contains(&v.as_str());
    let close: Vec<&String> = similar.iter().filter(|v| is_close(typed, v)).collect();
    // The last of equals: clap puts the most similar last.
    let nearest = |vs: Vec<&'a String>| {
        vs.into_iter()
            .rev()
            .min_by_key(|v| distance(typed, v))
            .map(String::as_str)
    };
    let close_gentle: Vec<&String> = close.iter().copied().filter(gentle).collect();
    if !close_gentle.is_empty() {
        return nearest(close_gentle);
    }
    if let [only] = close.as_slice() {
        return Some(only.as_str());
    }
    similar.iter().rev().find(gentle).map(String::as_str)
}

fn best_suggestion(e: clap::Error) -> clap::Error {
    if e.kind() != ErrorKind::InvalidSubcommand {
        return e;
    }
    let (Some(ContextValue::String(typed)), Some(ContextValue::Strings(similar))) = (
        e.get(ContextKind::InvalidSubcommand),
        e.get(ContextKind::SuggestedSubcommand),
    ) else {
        return e;
    };
    let best = tip(typed, similar).map(str::to_string);
    // clap has no way to drop a context: without a tip, the error is rebuilt
    // from the others.
    let mut out = clap::Error::new(ErrorKind::InvalidSubcommand).with_cmd(&Cli::command());
    for (kind, value) in e.context() {
        if kind != ContextKind::SuggestedSubcommand {
            out.insert(kind, value.clone());
        }
    }
    if let Some(best) = best {
        out.insert(
            ContextKind::SuggestedSubcommand,
            ContextValue::Strings(vec![best]),
        );
    }
    out
}

/// Whether `--json` is on the command line before any `--`: for a usage
/// error, which clap reports before there are parsed flags to ask.
pub fn wants_json<I, T>(args: I) -> bool
where
    I: IntoIterator<Item = T>,
    T: Into<OsString>,
{
    args.into_iter()
        .map(Into::into)
        .skip(1)
        .take_while(|a| a != "--")
        .any(|a| a == "--json")
}

/// What a script gets for clap's error: the whole of it (what was missing,
/// the tip, the usage) without `error: ` and the pointer to `--help`.
pub fn message(e: &clap::Error) -> String {
    let text = e.render().to_string();
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim_end)
        .filter(|l| !l.starts_with("For more information, try "))
        .collect();
    let whole = lines.join("\n");
    whole.trim().trim_start_matches("error: ").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The subcommands that stop nothing: with [`DISRUPTIVE`], every one.
    const GENTLE: [&str; 10] = [
        "module",
        "plan",
        "status",
        "start",
        "logs",
        "list",
        "reset-failed",
        "watch",
        "doctor",
        "completions",
    ];

    #[test]
    fn every_subcommand_says_whether_it_stops_something() {
        fn walk(c: &clap::Command, names: &mut Vec<String>) {
            for sub in c.get_subcommands() {
                names.push(sub.get_name().to_string());
                walk(sub, names);
            }
        }
        let mut names = Vec::new();
        walk(&Cli::command(), &mut names);
        for name in &names {
            let n = name.as_str();
            assert!(
                DISRUPTIVE.contains(&n) != GENTLE.contains(&n),
                "`{n}` must be in exactly one of DISRUPTIVE and GENTLE"
            );
        }
        for n in DISRUPTIVE.iter().chain(&GENTLE) {
            assert!(names.iter().any(|s| s == n), "`{n}` is no subcommand");
        }
    }

    fn tip_of(args: &[&str]) -> String {
        let mut argv = vec!["hal"];
        argv.extend(args);
        match parse_from(argv) {
            Ok(_) => panic!("{args:?} parsed"),
            Err(e) => e.render().to_string(),
        }
    }

    #[test]
    fn a_mistyped_verb_suggests_the_likeliest_one() {
        for (typed, meant) in [
            (&["strat"][..], "start"),
            (&["module", "strat"][..], "start"),
            (&["stpo"][..], "stop"),
            (&["module", "stauts"][..], "status"),
            (&["restat"][..], "restart"),
            (&["lgos"][..], "logs"),
        ] {
            let text = tip_of(typed);
            assert!(
                text.contains(&format!("a similar subcommand exists: '{meant}'")),
                "{typed:?}: {text}"
            );
        }
    }

    #[test]
    fn the_shortcuts_parse() {
        for args in [
            &["hal", "start", "web"][..],
            &["hal", "stop", "-t", "5s", "web"],
            &["hal", "restart", "web/worker"],
            &["hal", "logs", "web"],
            &["hal", "list"],
            &["hal", "status", "--failed"],
            &["hal", "reset-failed", "web"],
            &["hal", "rescue", "--dry-run"],
        ] {
            assert!(parse_from(args).is_ok(), "{args:?}");
        }
    }

    #[test]
    fn json_is_found_before_the_double_dash() {
        assert!(wants_json(["hal", "--json", "module", "start"]));
        assert!(wants_json(["hal", "module", "start", "x", "--json"]));
        assert!(!wants_json(["hal", "module", "logs", "--", "--json"]));
        assert!(!wants_json(["--json"]));
    }

    #[test]
    fn message_is_whole() {
        let e = parse_from(["hal", "strat"]).unwrap_err();
        let m = message(&e);
        assert!(m.starts_with("unrecognized subcommand 'strat'"), "{m}");
        assert!(
            m.contains("tip: a similar subcommand exists: 'start'"),
            "{m}"
        );
        let e = parse_from(["hal", "start"]).unwrap_err();
        let m = message(&e);
        assert!(
            m.starts_with("the following required arguments were not provided:\n  <MODULE>..."),
            "{m}"
        );
        assert!(!m.contains("For more information"), "{m}");
    }

    #[test]
    fn a_tip_names_a_verb_that_stops_only_when_nothing_else_is_close() {
        let v = |xs: &[&str]| xs.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(
            tip("reset-faild", &v(&["restart", "reset-failed"])),
            Some("reset-failed")
        );
        assert_eq!(
            tip("reset-faild", &v(&["reset-failed", "restart"])),
            Some("reset-failed")
        );
        assert_eq!(tip("rstart", &v(&["restart", "start"])), Some("start"));
        assert_eq!(tip("rstart", &v(&["start", "restart"])), Some("start"));
        assert_eq!(tip("restat", &v(&["restart"])), Some("restart"));
        assert_eq!(tip("stpo", &v(&["status", "stop"])), Some("stop"));
        // Not close: never a verb that stops; something gentler, or nothing.
        assert_eq!(tip("rexxxxrt", &v(&["status", "restart"])), Some("status"));
        assert_eq!(tip("rexxxxrt", &v(&["restart"])), None);
    }

    #[test]
    fn reset_failed_tips_itself_not_restart() {
        for typed in [
            &["reset-faild"][..],
            &["module", "reset-faild"],
            &["resetfailed"],
        ] {
            let text = tip_of(typed);
            assert!(!text.contains("'restart'"), "{typed:?}: {text}");
            assert!(text.contains("'reset-failed'"), "{typed:?}: {text}");
        }
    }
}
