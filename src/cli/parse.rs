//! Reading the command line: clap's parse, with a suggestion for a mistyped verb that names the likeliest one.

use std::ffi::OsString;

use clap::Parser;
use clap::error::{ContextKind, ContextValue, ErrorKind};

use crate::cli::Cli;

/// Parses `args` (the program name first) as [`Cli::try_parse_from`] does.
///
/// For a mistyped subcommand clap lists every verb similar enough, least
/// similar first (`hal strat`: 'status', 'start'); hal names only the most
/// similar one, so the tip points at the verb that was meant.
pub fn parse_from<I, T>(args: I) -> Result<Cli, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    Cli::try_parse_from(args).map_err(best_suggestion)
}

fn best_suggestion(mut e: clap::Error) -> clap::Error {
    if e.kind() == ErrorKind::InvalidSubcommand
        && let Some(ContextValue::Strings(similar)) = e.get(ContextKind::SuggestedSubcommand)
        && let Some(best) = similar.last().cloned()
    {
        e.insert(
            ContextKind::SuggestedSubcommand,
            ContextValue::Strings(vec![best]),
        );
    }
    e
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

/// The one line a script gets for clap's error: its first line, without `error: `.
pub fn message(e: &clap::Error) -> String {
    let text = e.render().to_string();
    let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    first.trim().trim_start_matches("error: ").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tip(args: &[&str]) -> String {
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
            let text = tip(typed);
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
    fn message_is_one_line() {
        let e = parse_from(["hal", "strat"]).unwrap_err();
        let m = message(&e);
        assert!(m.contains("unrecognized subcommand 'strat'"), "{m}");
        assert!(!m.contains('\n'));
    }
}
