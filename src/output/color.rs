//! The one colour decision: made from `--color`, `NO_COLOR`, `CLICOLOR_FORCE`, `TERM` and
//! whether the stream is a terminal, and handed to every mechanism that draws colour
//! (hal's own ANSI codes, comfy-table's tables, indicatif's progress, clap's errors and help).

use std::ffi::OsString;
use std::io::{IsTerminal, Write};

/// What the person asked for with `--color`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

/// Colour on each stream, decided once.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Colors {
    pub stdout: bool,
    pub stderr: bool,
}

/// The rule, first match wins: `--color always|never`; `NO_COLOR` set and not empty
/// is off; `CLICOLOR_FORCE` set, not empty and not `0` is on; `TERM=dumb` is off;
/// otherwise on exactly when the stream is a terminal.
pub fn decide(choice: ColorChoice, env: &dyn Fn(&str) -> Option<OsString>, tty: bool) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            if env("NO_COLOR").is_some_and(|v| !v.is_empty()) {
                false
            } else if env("CLICOLOR_FORCE").is_some_and(|v| !v.is_empty() && v != "0") {
                true
            } else if env("TERM").is_some_and(|t| t == "dumb") {
                false
            } else {
                tty
            }
        }
    }
}

impl Colors {
    /// The decision for this process's stdout and stderr, from its environment.
    pub fn of_process(choice: ColorChoice) -> Colors {
        let env = |k: &str| std::env::var_os(k);
        Colors {
            stdout: decide(choice, &env, std::io::stdout().is_terminal()),
            stderr: decide(choice, &env, std::io::stderr().is_terminal()),
        }
    }

    /// Makes the libraries that colour on their own follow this decision:
    /// console (indicatif's styles) per stream, and crossterm (comfy-table), whose
    /// own reading of `NO_COLOR` would leave bare `ESC[m` and `ESC[0m` codes in a
    /// table hal was told to colour. A table is styled only when hal says so
    /// (`render::table`), so crossterm is told never to veto.
    pub fn apply(self) {
        console::set_colors_enabled(self.stdout);
        console::set_colors_enabled_stderr(self.stderr);
        crossterm::style::force_color_output(true);
    }
}

/// `--color`'s value as written on the command line, read before clap parses it
/// so that clap's own errors and help obey it too. The last one wins, as in clap;
/// a value clap would refuse counts as `auto` (clap then reports it).
pub fn prescan(args: &[OsString]) -> ColorChoice {
    let mut choice = ColorChoice::Auto;
    let mut it = args.iter().skip(1);
    while let Some(a) = it.next() {
        let Some(a) = a.to_str() else { continue };
        if a == "--" {
            break;
        }
        let value = if a == "--color" {
            it.next().and_then(|v| v.to_str())
        } else {
            a.strip_prefix("--color=")
        };
        if let Some(v) = value {
            choice = match v {
                "always" => ColorChoice::Always,
                "never" => ColorChoice::Never,
                _ => ColorChoice::Auto,
            };
        }
    }
    choice
}

/// Text that was rendered before hal's printer exists (clap's error, help or
/// version), in both forms, and the stream it belongs on.
pub struct Prerendered {
    pub plain: String,
    /// The same text with its ANSI styling.
    pub ansi: String,
    pub on_stderr: bool,
}

/// Prints prerendered text as the colour decision for its stream says.
pub fn print_prerendered(text: &Prerendered, colors: Colors) {
    let pick = |on: bool| if on { &text.ansi } else { &text.plain };
    if text.on_stderr {
        let _ = std::io::stderr().write_all(pick(colors.stderr).as_bytes());
    } else {
        let mut out = std::io::stdout();
        let _ = out.write_all(pick(colors.stdout).as_bytes());
        let _ = out.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<OsString> + 'a {
        move |k| {
            vars.iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| OsString::from(v))
        }
    }

    #[test]
    fn the_flag_beats_the_environment() {
        let env = with(&[("NO_COLOR", "1"), ("TERM", "dumb")]);
        assert!(decide(ColorChoice::Always, &env, false));
        let env = with(&[("CLICOLOR_FORCE", "1")]);
        assert!(!decide(ColorChoice::Never, &env, true));
    }

    #[test]
    fn auto_reads_no_color_then_clicolor_force_then_term_then_the_terminal() {
        let both = with(&[("NO_COLOR", "1"), ("CLICOLOR_FORCE", "1")]);
        assert!(!decide(ColorChoice::Auto, &both, true));
        let empty_no_color = with(&[("NO_COLOR", ""), ("CLICOLOR_FORCE", "1")]);
        assert!(decide(ColorChoice::Auto, &empty_no_color, false));
        let force_dumb = with(&[("CLICOLOR_FORCE", "1"), ("TERM", "dumb")]);
        assert!(decide(ColorChoice::Auto, &force_dumb, false));
        let force_zero = with(&[("CLICOLOR_FORCE", "0")]);
        assert!(!decide(ColorChoice::Auto, &force_zero, false));
        let dumb = with(&[("TERM", "dumb")]);
        assert!(!decide(ColorChoice::Auto, &dumb, true));
        let none = with(&[]);
        assert!(decide(ColorChoice::Auto, &none, true));
        assert!(!decide(ColorChoice::Auto, &none, false));
    }

    #[test]
    fn prescan_finds_the_flag_anywhere_before_double_dash() {
        let args = |v: &[&str]| v.iter().map(OsString::from).collect::<Vec<_>>();
        assert_eq!(
            prescan(&args(&["hal", "--color", "always", "x"])),
            ColorChoice::Always
        );
        assert_eq!(
            prescan(&args(&["hal", "module", "list", "--color=never"])),
            ColorChoice::Never
        );
        assert_eq!(
            prescan(&args(&["hal", "--color=never", "--color", "always"])),
            ColorChoice::Always
        );
        assert_eq!(
            prescan(&args(&["hal", "--", "--color", "always"])),
            ColorChoice::Auto
        );
        assert_eq!(
            prescan(&args(&["hal", "--color", "pink"])),
            ColorChoice::Auto
        );
    }
}
