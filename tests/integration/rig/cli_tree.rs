//! The verbs and flags of hal, read from its clap tree (`Cli::command()`), so
//! a test's lists follow the CLI instead of repeating it.

use clap::CommandFactory;

use crate::lib_paths::Cli;

/// One command of the tree: its path of names (`["module", "start"]`; empty
/// for `hal` itself) and its definition.
#[derive(Debug, Clone)]
pub(crate) struct Verb {
    pub path: Vec<String>,
    pub cmd: clap::Command,
}

impl Verb {
    /// The names of its visible subcommands, in the order help shows them.
    pub(crate) fn subcommands(&self) -> Vec<String> {
        self.cmd
            .get_subcommands()
            .filter(|s| !s.is_hide_set())
            .map(|s| s.get_name().to_string())
            .collect()
    }

    /// Its visible long flags (`--all`), globals included.
    pub(crate) fn long_flags(&self) -> Vec<String> {
        self.cmd
            .get_arguments()
            .filter(|a| !a.is_hide_set())
            .filter_map(|a| a.get_long().map(|l| format!("--{l}")))
            .collect()
    }

    /// Its short flags (`-j`), globals included.
    pub(crate) fn short_flags(&self) -> Vec<String> {
        self.cmd
            .get_arguments()
            .filter(|a| !a.is_hide_set())
            .filter_map(|a| a.get_short().map(|s| format!("-{s}")))
            .collect()
    }

    /// Whether it takes module names (a positional `MODULE`).
    pub(crate) fn takes_modules(&self) -> bool {
        self.cmd.get_positionals().any(|a| {
            a.get_value_names()
                .is_some_and(|names| names.iter().any(|n| n == "MODULE"))
        })
    }

    /// The values flag `--long` accepts, when it names them (`--pull`).
    pub(crate) fn values_of(&self, long: &str) -> Vec<String> {
        let arg = self
            .cmd
            .get_arguments()
            .find(|a| a.get_long() == Some(long))
            .unwrap_or_else(|| panic!("{:?} has no --{long}", self.path));
        arg.get_possible_values()
            .iter()
            .filter(|v| !v.is_hide_set())
            .map(|v| v.get_name().to_string())
            .collect()
    }
}

/// Every command of hal, parents before their subcommands, as clap builds
/// them (global flags propagated, `help` added).
pub(crate) fn verbs() -> Vec<Verb> {
    let mut root = Cli::command();
    root.build();
    let mut out = Vec::new();
    walk(&root, Vec::new(), &mut out);
    out
}

fn walk(cmd: &clap::Command, path: Vec<String>, out: &mut Vec<Verb>) {
    out.push(Verb {
        path: path.clone(),
        cmd: cmd.clone(),
    });
    for sub in cmd.get_subcommands() {
        let mut p = path.clone();
        p.push(sub.get_name().to_string());
        walk(sub, p, out);
    }
}

/// The command at `path` (`&["module", "start"]`).
pub(crate) fn verb(path: &[&str]) -> Verb {
    verbs()
        .into_iter()
        .find(|v| v.path == path)
        .unwrap_or_else(|| panic!("hal has no command {path:?}"))
}

/// Every word of the tree: command names, long and short flags, and the
/// values flags name; each once, in tree order.
pub(crate) fn words() -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    for v in verbs() {
        let mut mine: Vec<String> = v.path.last().cloned().into_iter().collect();
        mine.extend(v.long_flags());
        mine.extend(v.short_flags());
        for a in v.cmd.get_arguments() {
            mine.extend(
                a.get_possible_values()
                    .iter()
                    .map(|p| p.get_name().to_string()),
            );
        }
        for w in mine {
            if !words.contains(&w) {
                words.push(w);
            }
        }
    }
    words
}
