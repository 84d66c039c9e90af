//! What a verb did to one module, for the printer: the outcome or the error, and its JSON shape.

use std::time::Duration;

use serde::Serialize;

use crate::error::{Exit, OneLine, exit_of};
use crate::module::Module;
use crate::module::outcome::{Outcome, Would};
use crate::module::status::State;

/// What happened to one module, or to one service of it.
pub(crate) struct Report {
    pub module: Module,
    /// The service acted on (`MODULE/SERVICE`), or `None` for the whole module.
    pub service: Option<String>,
    pub result: anyhow::Result<Outcome>,
    pub took: Duration,
    /// Whether the verb started, stopped, restarted or recreated anything
    /// (false when it found the module as asked, or failed).
    pub changed: bool,
    /// Under `--dry-run`: what the verb would do (nothing was done).
    pub would: Option<Would>,
}

/// The JSON shape of a [`Report`].
#[derive(Serialize)]
pub(crate) struct ReportJson {
    pub name: String,
    /// Only for `MODULE/SERVICE`: the service acted on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub service: Option<String>,
    pub kind: &'static str,
    pub action: &'static str,
    pub ok: bool,
    pub state: Option<State>,
    /// One line: why it is not active, or the cause of the failure.
    pub reason: Option<String>,
    pub error: Option<String>,
    /// A failure's diagnosis: which service is not up, its state and last log lines (several lines).
    pub diagnosis: Option<String>,
    pub exit_code: u8,
    pub took_ms: u64,
    pub warnings: Vec<String>,
    /// Whether anything was started, stopped, restarted or recreated.
    pub changed: bool,
    /// Only under `--dry-run`: `start`, `recreate`, `restart`, `stop` or `none`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub would: Option<Would>,
    /// Only for a module a start pulled in: the modules of the call that require it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pulled_in_by: Option<Vec<String>>,
    /// Only for a module a stop stopped first: the modules of the call it requires.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stopped_first_for: Option<Vec<String>>,
}

impl Report {
    /// The report of a target left untried, and why.
    pub(crate) fn untried(t: &crate::module::target::Target, why: anyhow::Error) -> Report {
        Report {
            module: t.module.clone(),
            service: t.service.clone(),
            result: Err(why),
            took: Duration::ZERO,
            changed: false,
            would: None,
        }
    }

    /// Whether a start-like verb left the module up, as far as a dependent
    /// cares: no error and not failed.
    pub(crate) fn came_up(&self) -> bool {
        self.result
            .as_ref()
            .is_ok_and(|o| !matches!(o.state, State::Failed))
    }

    pub(crate) fn exit(&self) -> Exit {
        self.result.as_ref().err().map_or(Exit::Ok, exit_of)
    }

    /// `web`, or `web/worker` when one service was acted on.
    pub(crate) fn label(&self) -> String {
        match &self.service {
            Some(s) => format!("{}/{s}", self.module.name),
            None => self.module.name.clone(),
        }
    }

    pub(crate) fn to_json(&self, action: &'static str) -> ReportJson {
        let (state, reason, warnings) = match &self.result {
            Ok(o) => (Some(o.state), o.reason.clone(), o.warnings.clone()),
            // A start that failed leaves the module failed, with the cause.
            Err(e) => (
                starts(action).then_some(State::Failed),
                Some(cause(e, action, &self.label())),
                Vec::new(),
            ),
        };
        let (error, details) = match &self.result {
            Err(e) => (
                Some(OneLine(e).to_string()),
                crate::error::details_of(e).to_vec(),
            ),
            Ok(_) => (None, Vec::new()),
        };
        ReportJson {
            name: self.module.name.clone(),
            service: self.service.clone(),
            kind: self.module.kind_name(),
            action,
            ok: self.result.is_ok(),
            state,
            reason,
            error,
            diagnosis: (!details.is_empty()).then(|| details.join("\n")),
            exit_code: self.exit().code(),
            took_ms: u64::try_from(self.took.as_millis()).unwrap_or(u64::MAX),
            warnings,
            changed: self.changed && self.result.is_ok(),
            would: self.would,
            pulled_in_by: None,
            stopped_first_for: None,
        }
    }
}

/// Whether a verb (by its report's word) starts the module.
fn starts(action: &str) -> bool {
    matches!(action, "start" | "restart" | "rescue" | "repair")
}

/// A failure's cause on one line: the summary of a diagnosed failure, or
/// the error without the `start web:` the runner adds.
pub(super) fn cause(e: &anyhow::Error, action: &str, label: &str) -> String {
    if let Some(d) = e
        .chain()
        .find_map(|c| c.downcast_ref::<crate::error::Detailed>())
    {
        return d.summary.clone();
    }
    let line = OneLine(e).to_string();
    let prefix = format!("{action} {label}: ");
    line.strip_prefix(&prefix)
        .map_or(line.clone(), str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::module::Kind;

    #[test]
    fn a_failed_start_is_failed_with_its_cause_on_one_line_and_the_diagnosis_apart() {
        let module = Module {
            name: "web".into(),
            kind: Kind::Invalid {
                reason: String::new(),
            },
        };
        let err = anyhow::Error::new(crate::error::Detailed {
            summary: "did not start: service db exited with code 1".into(),
            details: vec!["db: state exited".into(), "  db | boom".into()],
        })
        .context("start web");
        let r = Report {
            module,
            service: None,
            result: Err(err),
            took: Duration::ZERO,
            changed: false,
            would: None,
        };
        let j = r.to_json("start");
        assert_eq!(j.state, Some(State::Failed));
        assert_eq!(
            j.reason.as_deref(),
            Some("did not start: service db exited with code 1")
        );
        assert_eq!(
            j.diagnosis.as_deref(),
            Some("db: state exited\n  db | boom")
        );
        let plain = anyhow::anyhow!("compose up: refused").context("start web");
        assert_eq!(cause(&plain, "start", "web"), "compose up: refused");
        assert_eq!(
            Report {
                result: Err(plain),
                ..r
            }
            .to_json("stop")
            .state,
            None
        );
    }
}
