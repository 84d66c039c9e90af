//! What a verb did to one module: the outcome or the error and what an update found besides, handed to the printer as its view (`output::reports`, which owns the JSON shape).

use std::time::Duration;

use crate::error::{Exit, OneLine, exit_of};
use crate::module::Module;
use crate::module::outcome::{Outcome, UpdateFacts, Would};
use crate::module::reason::{Reason, Reasons};
use crate::module::recorded_causes::StartCause;
use crate::module::service_action::ModulePlan;
use crate::module::status::State;
use crate::output::reports::{PlanJson, ReportJson, ReportView, UpdateJson};

use super::verb::{Step, Verb};

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
    /// Under `--dry-run` (and `update --check`): each service's action and
    /// why, the plan `hal plan` says.
    pub plan: Option<ModulePlan>,
    /// Only for `update`: what it found and did besides its outcome.
    pub update: Option<UpdateFacts>,
    /// Only for `update`: the namespace followers its gate restarted into the
    /// module's new containers, each its report (said after it, `follow.rs`).
    pub followed: Vec<Report>,
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
            plan: None,
            update: None,
            followed: Vec::new(),
        }
    }

    /// An update whose turn came after `max` failed updates (`--max-failures`): not tried, its state as found.
    pub(crate) fn skipped(
        t: &crate::module::target::Target,
        state: Option<State>,
        max: usize,
    ) -> Report {
        Report {
            module: t.module.clone(),
            service: None,
            result: Ok(Outcome {
                state: state.unwrap_or(State::Unknown),
                reason: Reasons::one(Reason::NotUpdated { max_failures: max }),
                warnings: Vec::new(),
            }),
            took: Duration::ZERO,
            changed: false,
            would: None,
            plan: None,
            update: Some(UpdateFacts {
                skipped: true,
                ..UpdateFacts::default()
            }),
            followed: Vec::new(),
        }
    }

    /// Whether a start-like verb left the module up, as far as a dependent
    /// cares: no error and not failed.
    pub(crate) fn came_up(&self) -> bool {
        self.result
            .as_ref()
            .is_ok_and(|o| !matches!(o.state, State::Failed))
    }

    /// The error's code; under `update --check`, 3 when an update is available.
    pub(crate) fn exit(&self) -> Exit {
        let available = self.update.as_ref().and_then(|u| u.available);
        match &self.result {
            Err(e) => exit_of(e),
            Ok(_) if available == Some(true) => Exit::NotActive,
            Ok(_) => Exit::Ok,
        }
    }

    /// `web`, or `web/worker` when one service was acted on.
    pub(crate) fn label(&self) -> String {
        match &self.service {
            Some(s) => format!("{}/{s}", self.module.name),
            None => self.module.name.clone(),
        }
    }

    /// The JSON shape of what `verb` did.
    pub(crate) fn to_json(&self, verb: &Verb) -> ReportJson {
        let rolled_back = self.update.as_ref().and_then(|u| u.rolled_back);
        let (state, reason, warnings) = match &self.result {
            Ok(o) => (Some(o.state), o.reason.clone(), o.warnings.clone()),
            // A start that failed leaves the module failed, with the cause; a
            // rollback that came back is active on the old images.
            Err(e) => {
                let state = match rolled_back {
                    Some(true) => Some(State::Active),
                    Some(false) => Some(State::Failed),
                    None => verb.starts().then_some(State::Failed),
                };
                let said = self.update.as_ref().map(|u| u.beside_error.clone());
                (
                    state,
                    Reasons::said(Some(cause(e))),
                    said.unwrap_or_default(),
                )
            }
        };
        let (error, details) = match &self.result {
            Err(e) => (
                Some(OneLine(e).to_string()),
                crate::module::diagnosed::details_of(e).to_vec(),
            ),
            Ok(_) => (None, Vec::new()),
        };
        ReportJson {
            name: self.module.name.clone(),
            service: self.service.clone(),
            kind: self.module.kind_tag(),
            action: verb.name(),
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
            plan: self.plan.as_ref().map(PlanJson::of),
            pulled_in_by: None,
            stopped_first_for: None,
            update: self.update.as_ref().map(UpdateJson::of),
        }
    }

    /// What the printer reads of this report of `verb`, its document row included.
    pub(crate) fn view(&self, verb: &Verb) -> ReportView<'_> {
        ReportView {
            label: self.label(),
            kind: self.module.kind_tag(),
            result: self.result.as_ref(),
            took: self.took,
            changed: self.changed,
            would: self.would,
            plan: self.plan.as_ref(),
            update: self.update.as_ref(),
            doc: self.to_json(verb),
        }
    }
}

/// A failure's cause on one line: the summary of a diagnosed failure, or
/// the error without the runner's [`Step`] (`start web`).
pub(crate) fn cause(e: &anyhow::Error) -> String {
    start_cause(e).to_string()
}

/// A failure's cause, typed: the summary of a diagnosed failure, or the
/// error (the engine's, compose's, systemd's) without the runner's [`Step`].
pub(crate) fn start_cause(e: &anyhow::Error) -> StartCause {
    match crate::module::diagnosed::diagnosis_of(e) {
        Some(d) => StartCause::Diagnosed {
            summary: d.summary.clone(),
            seen: d.seen.clone(),
        },
        None => StartCause::Error(without_step(e)),
    }
}

/// The error on one line without the runner's [`Step`], which the report says apart.
pub(crate) fn without_step(e: &anyhow::Error) -> String {
    match e.downcast_ref::<Step>() {
        Some(_) => crate::error::UnderContext(e).to_string(),
        None => OneLine(e).to_string(),
    }
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
        let err = anyhow::Error::new(crate::module::diagnosed::Detailed {
            summary: "did not start: service db exited with code 1".into(),
            details: vec!["db: state exited".into(), "  db | boom".into()],
            seen: Vec::new(),
        })
        .context(Step {
            action: "start",
            label: "web".into(),
        });
        let r = Report {
            module,
            service: None,
            result: Err(err),
            took: Duration::ZERO,
            changed: false,
            would: None,
            plan: None,
            update: None,
            followed: Vec::new(),
        };
        let opts = crate::module::outcome::StartOpts {
            pull: None,
            wait: true,
            timeout: None,
        };
        let j = r.to_json(&crate::run::verb::Verb::Start { opts, force: false });
        assert_eq!(j.state, Some(State::Failed));
        assert_eq!(
            j.reason.text().as_deref(),
            Some("did not start: service db exited with code 1")
        );
        assert_eq!(
            j.diagnosis.as_deref(),
            Some("db: state exited\n  db | boom")
        );
        let plain = anyhow::anyhow!("compose up: refused").context(Step {
            action: "start",
            label: "web".into(),
        });
        assert_eq!(cause(&plain), "compose up: refused");
        assert_eq!(
            Report {
                result: Err(plain),
                ..r
            }
            .to_json(&crate::run::verb::Verb::Stop { grace: None })
            .state,
            None
        );
    }
}
