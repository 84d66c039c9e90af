//! Shell completion: clap_complete's dynamic engine, plus module names read from the services root and config alone.
//!
//! The shell scripts in `completions/` are what `HAL_COMPLETE=bash|zsh|fish hal`
//! prints: they call `hal` back with `HAL_COMPLETE` set and the words typed so
//! far. (Not clap's default `COMPLETE`: a variable that generic may be set in a
//! user's environment for something else, and hal would then print a script
//! instead of running.)
//! `cli::complete_from_env` answers such a call and exits before anything else runs, so a
//! completion costs one process start, one config read and one directory scan:
//! never a Docker call.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use clap_complete::engine::CompletionCandidate;

use crate::module::inventory::Inventory;
use crate::module::load;

/// The command the generated scripts call back: `hal`, found on `PATH`.
pub(crate) const COMPLETER: &str = "hal";

/// The variable that asks hal for completions (or, alone, for a shell's script).
pub(crate) const VAR: &str = "HAL_COMPLETE";

/// Module names starting with `current`, for every MODULE argument.
///
/// `--services-dir` and `--config` typed earlier on the line are honoured, then
/// `HAL_SERVICES_DIR` / `HAL_CONFIG`, then the config and the defaults, as in a
/// real run. Names already on the line are not offered again. Nothing is ever
/// printed on stderr: a config that does not load counts as empty.
pub(crate) fn modules(current: &OsStr) -> Vec<CompletionCandidate> {
    let words = typed_words(std::env::args_os());
    let Some(current) = current.to_str() else {
        return Vec::new();
    };
    // A config that does not load still leaves the stacks to offer.
    let config = load::config(flag_value(&words, "--config").as_deref()).unwrap_or_default();
    let root = load::services_root(flag_value(&words, "--services-dir").as_deref(), &config);
    let inventory = load::inventory(&root, &config);
    candidates(&inventory, current, &words)
}

/// The candidates from `inventory` for the word `current`, leaving out names already typed.
fn candidates(
    inventory: &Inventory,
    current: &str,
    words: &[OsString],
) -> Vec<CompletionCandidate> {
    // The word being completed is among `words` too: it does not count as typed.
    let mut skipped_current = false;
    let typed: Vec<&OsString> = words
        .iter()
        .filter(|w| {
            if !skipped_current && w.as_os_str() == OsStr::new(current) {
                skipped_current = true;
                return false;
            }
            true
        })
        .collect();
    inventory
        .modules
        .iter()
        .filter(|m| m.name.starts_with(current) && crate::module::name::is_valid(&m.name))
        .filter(|m| !typed.iter().any(|w| w.as_os_str() == OsStr::new(&m.name)))
        .map(|m| {
            let help = match (m.invalid_reason(), m.is_stack()) {
                (Some(reason), _) => format!("invalid: {reason}"),
                (None, true) => "stack".to_string(),
                // A unit: where it is defined, `unit (scope)`.
                (None, false) => m.source(),
            };
            CompletionCandidate::new(&m.name).help(Some(help.into()))
        })
        .collect()
}

/// The words of the command line being completed: what follows `--` in
/// `hal -- hal module start …`, as the shell scripts call it.
fn typed_words(args: impl IntoIterator<Item = OsString>) -> Vec<OsString> {
    args.into_iter().skip_while(|a| a != "--").skip(1).collect()
}

/// The value of `--flag VALUE`, `--flag=VALUE` or bash's split `--flag = VALUE`;
/// the last one wins, as with clap. A leading `~/` is expanded.
fn flag_value(words: &[OsString], flag: &str) -> Option<PathBuf> {
    let mut found = None;
    let mut iter = words.iter().map(|w| w.to_string_lossy());
    while let Some(word) = iter.next() {
        if word == flag {
            let mut value = iter.next();
            if value.as_deref() == Some("=") {
                value = iter.next();
            }
            found = value.map(|v| v.into_owned());
        } else if let Some(v) = word.strip_prefix(flag).and_then(|r| r.strip_prefix('=')) {
            found = Some(v.to_string());
        }
    }
    found.filter(|v| !v.is_empty()).map(|v| expand_tilde(&v))
}

fn expand_tilde(value: &str) -> PathBuf {
    match (value.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => Path::new(&home).join(rest),
        _ => PathBuf::from(value),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::module::Kind;
    use crate::module::config::Config;

    fn words(line: &str) -> Vec<OsString> {
        line.split(' ').map(OsString::from).collect()
    }

    #[test]
    fn words_follow_the_escape() {
        let args = ["/usr/bin/hal", "--", "hal", "module", "start", ""].map(OsString::from);
        assert_eq!(typed_words(args), words("hal module start "));
        assert!(typed_words(["hal".into()]).is_empty());
    }

    #[test]
    fn flag_values_in_every_spelling() {
        let d = |line: &str| flag_value(&words(line), "--services-dir");
        assert_eq!(d("hal --services-dir /a module start "), Some("/a".into()));
        assert_eq!(d("hal --services-dir=/b status "), Some("/b".into()));
        assert_eq!(d("hal --services-dir = /c status "), Some("/c".into()));
        assert_eq!(
            d("hal --services-dir /a --services-dir /d x"),
            Some("/d".into())
        );
        assert_eq!(d("hal --services-dir"), None);
        assert_eq!(d("hal --services-dirx=/e"), None);
        assert_eq!(d("hal status "), None);
    }

    #[test]
    fn candidates_filter_by_prefix_and_skip_typed_names() {
        let cfg = Config::parse(
            "[module.notifier]\nunit = \"n.service\"\n",
            Path::new("hal.toml"),
        )
        .unwrap();
        let mut inv = load::inventory(Path::new("/nonexistent/hal"), &cfg);
        for name in ["web", "wiki", "Bad Name"] {
            inv.modules.push(crate::module::Module {
                name: name.into(),
                kind: Kind::Stack {
                    dir: PathBuf::new(),
                    file: PathBuf::new(),
                },
            });
        }
        let names = |current: &str, line: &str| -> Vec<String> {
            candidates(&inv, current, &words(line))
                .iter()
                .map(|c| c.get_value().to_string_lossy().into_owned())
                .collect()
        };
        assert_eq!(names("w", "hal module start w"), ["web", "wiki"]);
        assert_eq!(names("", "hal module start web "), ["notifier", "wiki"]);
        assert_eq!(names("web", "hal module start web"), ["web"]);
        assert!(names("B", "hal status B").is_empty());
    }
}
