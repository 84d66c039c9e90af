//! One doctor check: its verdict, what it saw, and what to do — rendered as a line for people or JSON for scripts.

use serde::Serialize;

use crate::output::checks::{self, CheckLine, CheckVerdict};
use crate::output::view::{Style, View};
use crate::stack::Session;

/// The outcome of one check. `hint` says what to do and is set when `ok` is false.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub(super) struct Check {
    pub name: String,
    pub ok: bool,
    pub detail: String,
    pub hint: Option<String>,
    /// False when hal could not make the check (`detail` says why): it
    /// neither passes nor fails, and is never shown with a ✓.
    pub checked: bool,
}

impl Check {
    pub(super) fn pass(name: impl Into<String>, detail: impl Into<String>) -> Check {
        Check {
            name: name.into(),
            ok: true,
            detail: detail.into(),
            hint: None,
            checked: true,
        }
    }

    /// A check hal could not make, and why: "not checked: WHY".
    pub(super) fn not_checked(name: impl Into<String>, why: impl std::fmt::Display) -> Check {
        Check {
            name: name.into(),
            ok: true,
            detail: format!("not checked: {why}"),
            hint: None,
            checked: false,
        }
    }

    pub(super) fn fail(
        name: impl Into<String>,
        detail: impl Into<String>,
        hint: impl Into<String>,
    ) -> Check {
        Check {
            name: name.into(),
            ok: false,
            detail: detail.into(),
            hint: Some(hint.into()),
            checked: true,
        }
    }
}

/// The engine session a check needs, or the check's line saying it was not made
/// (the `docker` check says why): one rule for every check that needs it.
pub(super) fn session_for<'a>(
    session: Option<&'a Session>,
    check: &str,
) -> Result<&'a Session, Check> {
    session.ok_or_else(|| engine_missing(check))
}

/// The line of a check that needs the engine, when it did not answer.
pub(super) fn engine_missing(check: &str) -> Check {
    Check::not_checked(check, "the engine is not reachable")
}

/// Doctor's answer: `{"schema": 1, "checks": [{"name", "ok", "detail", "hint"}, …]}`,
/// or a line per check for people.
#[derive(Serialize)]
pub(super) struct Checks<'a> {
    schema: u32,
    checks: &'a [Check],
}

impl<'a> Checks<'a> {
    pub(super) fn new(checks: &'a [Check]) -> Checks<'a> {
        Checks {
            schema: crate::output::view::SCHEMA,
            checks,
        }
    }
}

impl View for Checks<'_> {
    fn human(&self, style: &Style) -> String {
        checks::lines(self.checks.iter().map(Check::line), style)
    }
}

impl Check {
    /// The check as people read it.
    fn line(&self) -> CheckLine<'_> {
        CheckLine {
            verdict: if !self.checked {
                CheckVerdict::NotChecked
            } else if self.ok {
                CheckVerdict::Pass
            } else {
                CheckVerdict::Fail
            },
            name: &self.name,
            detail: &self.detail,
            hint: self.hint.as_deref(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Vec<Check> {
        vec![
            Check::pass("docker", "reachable"),
            Check::fail("state-dir", "/x: read-only", "set HAL_STATE_DIR"),
        ]
    }

    fn lines(checks: &[Check], color: bool, quiet: bool) -> String {
        let style = Style {
            color,
            color_err: color,
            quiet,
        };
        Checks::new(checks).human(&style)
    }

    #[test]
    fn lines_align_and_carry_hints() {
        assert_eq!(
            lines(&sample(), false, false),
            "✓ docker     reachable\n✗ state-dir  /x: read-only\n             hint: set HAL_STATE_DIR\n"
        );
        assert_eq!(
            lines(&sample(), false, true),
            "✗ state-dir  /x: read-only\n             hint: set HAL_STATE_DIR\n"
        );
        assert!(lines(&sample(), true, false).contains("\x1b[32m✓\x1b[0m"));
    }

    #[test]
    fn json_has_the_published_fields() {
        let v = serde_json::to_value(Checks::new(&sample())).unwrap();
        assert_eq!(v["schema"], 1);
        assert_eq!(v["checks"][0]["ok"], true);
        assert_eq!(v["checks"][0]["hint"], serde_json::Value::Null);
        assert_eq!(v["checks"][1]["name"], "state-dir");
        assert_eq!(v["checks"][1]["hint"], "set HAL_STATE_DIR");
    }
}
