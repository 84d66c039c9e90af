//! hal(1)'s EXIT STATUS, as committed, is the code's exit-code text, every code and every word.

use clap::CommandFactory;

use crate::lib_paths::Cli;

/// The words of a roff text line as a reader sees them.
fn roff_words(line: &str) -> Vec<String> {
    let plain = line
        .replace("\\fB", "")
        .replace("\\fI", "")
        .replace("\\fR", "")
        .replace("\\fP", "")
        .replace("\\-", "-")
        .replace("\\*(Aq", "'")
        .replace("\\(aq", "'")
        .replace("\\&", "")
        .replace("\\e", "\\");
    plain.split_whitespace().map(String::from).collect()
}

/// hal(1)'s EXIT STATUS, as committed, says every word of the code's exit-code
/// descriptions (the long help's `Exit codes:`), in order, and nothing else: a
/// generator that keeps only a description's first line fails here.
#[test]
fn hal_1_exit_status_is_the_codes_whole_text() {
    let help = Cli::command()
        .get_after_long_help()
        .map(|t| t.to_string())
        .unwrap_or_default();
    let said: Vec<String> = help
        .lines()
        .skip_while(|l| !l.starts_with("Exit codes:"))
        .skip(1)
        .flat_map(str::split_whitespace)
        .map(String::from)
        .collect();
    assert!(said.len() > 20, "no exit codes in the long help: {help}");
    let page = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/man/hal.1")).unwrap();
    let section: Vec<&str> = page
        .lines()
        .skip_while(|l| *l != ".SH \"EXIT STATUS\"")
        .skip(1)
        .take_while(|l| !l.starts_with(".SH"))
        .collect();
    let written: Vec<String> = section
        .iter()
        .filter(|l| !l.starts_with('.'))
        .flat_map(|l| roff_words(l))
        .collect();
    assert_eq!(
        written.join(" "),
        said.join(" "),
        "hal(1)'s EXIT STATUS is not the code's exit-code text"
    );
    let tagged = section.iter().filter(|l| **l == ".TP").count();
    let coded = help
        .lines()
        .filter(|l| {
            l.split_whitespace()
                .next()
                .is_some_and(|w| w.parse::<u8>().is_ok())
        })
        .count();
    assert_eq!(tagged, coded, "one tagged paragraph per exit code");
}
