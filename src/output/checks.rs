//! doctor's lines for people: a mark (✓, ✗, or - for a check hal could not make), the check's name and what it saw, each failure followed by its hint.

use crate::output::ui::paint;
use crate::output::view::Style;

/// How a check came out: its mark and the mark's colour are decided here.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum CheckVerdict {
    Pass,
    Fail,
    /// hal could not make the check: neither a pass nor a failure.
    NotChecked,
}

impl CheckVerdict {
    fn mark(self, color: bool) -> String {
        match self {
            CheckVerdict::NotChecked => paint(color, "33", "-"),
            CheckVerdict::Pass => paint(color, "32", "✓"),
            CheckVerdict::Fail => paint(color, "31", "✗"),
        }
    }
}

/// One check as people read it.
pub(crate) struct CheckLine<'a> {
    pub verdict: CheckVerdict,
    pub name: &'a str,
    pub detail: &'a str,
    /// What to do, shown under a failure only.
    pub hint: Option<&'a str>,
}

/// One line per check (`✓ name  detail`), each failure followed by its hint,
/// the names aligned (over every check); under `-q` the failures only.
pub(crate) fn lines<'a>(checks: impl IntoIterator<Item = CheckLine<'a>>, style: &Style) -> String {
    let checks: Vec<CheckLine> = checks.into_iter().collect();
    let width = checks
        .iter()
        .map(|c| c.name.chars().count())
        .max()
        .unwrap_or(0);
    let mut out = String::new();
    for c in checks
        .iter()
        .filter(|c| !(style.quiet && c.verdict != CheckVerdict::Fail))
    {
        let mark = c.verdict.mark(style.color);
        out.push_str(&format!("{mark} {:width$}  {}\n", c.name, c.detail));
        if let Some(hint) = c.hint.filter(|_| c.verdict == CheckVerdict::Fail) {
            out.push_str(&format!("  {:width$}  hint: {hint}\n", ""));
        }
    }
    out
}
