//! The values flags take, parsed: durations, pull policies, the booleans people write in environment variables.

use clap::ValueEnum;

use crate::module::config::PullPolicy;
use crate::util::duration::DurationError;

/// `--pull`'s values, as the CLI spells and explains them; the config's
/// [`PullPolicy`] knows nothing of clap.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
enum Pull {
    /// Pull every image before starting; fall back to a cached image if the pull fails.
    Always,
    /// Pull only images that are not present locally.
    Missing,
    /// Never pull.
    Never,
}

impl From<Pull> for PullPolicy {
    fn from(p: Pull) -> PullPolicy {
        match p {
            Pull::Always => PullPolicy::Always,
            Pull::Missing => PullPolicy::Missing,
            Pull::Never => PullPolicy::Never,
        }
    }
}

pub(super) fn pull_policy() -> impl clap::builder::TypedValueParser<Value = PullPolicy> {
    use clap::builder::TypedValueParser;
    clap::builder::EnumValueParser::<Pull>::new().map(PullPolicy::from)
}

/// A value that is not an environment boolean (clap says which value, and of what).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("use 1/0, true/false, yes/no or on/off")]
pub(crate) struct NotABoolean;

/// An environment boolean as people write it: `1/0`, `true/false`, `yes/no`,
/// `on/off` (and `y/n`, `t/f`), in any case; empty is no.
pub(crate) fn yes_or_no(s: &str) -> Result<bool, NotABoolean> {
    match s.trim().to_ascii_lowercase().as_str() {
        "" | "0" | "false" | "f" | "no" | "n" | "off" => Ok(false),
        "1" | "true" | "t" | "yes" | "y" | "on" => Ok(true),
        _ => Err(NotABoolean),
    }
}

pub(crate) fn parse_duration(s: &str) -> Result<std::time::Duration, DurationError> {
    crate::util::duration::parse(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn environment_booleans_take_what_people_write() {
        for yes in ["1", "true", "TRUE", "yes", "Yes", "on", "ON", "y", " on "] {
            assert_eq!(yes_or_no(yes), Ok(true), "{yes}");
        }
        for no in ["0", "false", "False", "no", "NO", "off", "Off", "n", ""] {
            assert_eq!(yes_or_no(no), Ok(false), "{no}");
        }
        for bad in ["maybe", "2", "yess"] {
            assert!(yes_or_no(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn what_a_bad_value_is_told_reads_as_it_did() {
        assert_eq!(
            NotABoolean.to_string(),
            "use 1/0, true/false, yes/no or on/off"
        );
        assert_eq!(
            parse_duration("5x").unwrap_err().to_string(),
            "invalid duration \"5x\": unknown unit \"x\" (use ms, s, m, h or d)"
        );
    }
}
