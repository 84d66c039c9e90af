//! `hal completions SHELL`: prints a shell's completion script, as rg, fd and bat do, so a node needs no source tree.
//!
//! The script is clap_complete's dynamic registration, byte for byte what
//! `HAL_COMPLETE=SHELL hal` prints and what `completions/` holds: it calls
//! `hal` back with `HAL_COMPLETE` set, so module names come from the node
//! itself (see `crate::cli::complete`). Printing it reads no config, no services
//! root and no engine.

use std::io::Write;

use anyhow::Context;
use clap::CommandFactory;
use clap_complete::env::Shells;

use crate::cli::complete::{COMPLETER, VAR};
use crate::cli::{Cli, CompletionsArgs};
use crate::error::Exit;

/// The shells a script can be printed for (clap_complete's built-in ones).
pub(crate) const SHELLS: [&str; 5] = ["bash", "elvish", "fish", "powershell", "zsh"];

/// Prints the completion script for the shell asked for on stdout.
pub(crate) fn run(a: CompletionsArgs) -> anyhow::Result<Exit> {
    let shell = a.shell.as_str();
    let mut script = Vec::new();
    write_script(shell, &mut script)?;
    crate::output::raw(&script)
        .with_context(|| format!("completions {shell}: write the script"))?;
    Ok(Exit::Ok)
}

/// Writes the registration script for `shell`, as `HAL_COMPLETE=SHELL hal` would.
pub(crate) fn write_script(shell: &str, buf: &mut dyn Write) -> anyhow::Result<()> {
    let shells = Shells::builtins();
    let Some(completer) = shells.completer(shell) else {
        anyhow::bail!(
            "completions {shell}: unknown shell, expected one of {}",
            SHELLS.join(", ")
        );
    };
    let mut cmd = Cli::command();
    cmd.build();
    let name = cmd.get_name();
    let bin = cmd.get_bin_name().unwrap_or(name);
    completer
        .write_registration(VAR, name, bin, COMPLETER, buf)
        .with_context(|| format!("completions {shell}: render the script"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_listed_shell_has_a_script_naming_hal() {
        for shell in SHELLS {
            let mut buf = Vec::new();
            write_script(shell, &mut buf).unwrap();
            let text = String::from_utf8(buf).unwrap();
            assert!(text.contains(VAR), "{shell}: {text}");
        }
        assert_eq!(Shells::builtins().names().count(), SHELLS.len());
    }

    #[test]
    fn the_cli_offers_exactly_these_shells() {
        let cmd = Cli::command();
        let sub = cmd.find_subcommand("completions").unwrap();
        let arg = sub.get_arguments().find(|a| a.get_id() == "shell").unwrap();
        let offered: Vec<String> = arg
            .get_possible_values()
            .iter()
            .map(|v| v.get_name().to_string())
            .collect();
        assert_eq!(offered, SHELLS);
    }

    #[test]
    fn an_unknown_shell_is_named_in_the_error() {
        let err = write_script("tcsh", &mut Vec::new()).unwrap_err();
        assert!(err.to_string().contains("tcsh"), "{err}");
    }
}
