//! Timer modules: a timer unit and the job it starts (`Triggers=`) read as one module — the last run's result and the next run in status, a failed last run as `failed`, the job's journal in logs.

use std::collections::BTreeMap;

use futures_util::stream::StreamExt;

use crate::host::assess::assess as assess_unit;
use crate::host::init::{
    Activity, Init, JournalQuery, Load, MainExit, UnitStatus, is_timer, show_one,
};
use crate::host::pick::Inits;
use crate::module::config::Scope;
use crate::module::status::{State, TimerStatus};
use crate::util::timefmt::Stamp;

/// Lines of a failed job's journal read for its reason (the init's own lines left out).
const REASON_LINES: u64 = 12;
/// Of those, how many the reason keeps.
const REASON_KEEP: usize = 3;
/// How long reading them may take.
const REASON_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// The job a loaded timer starts, if `s` is such a timer.
pub(crate) fn job_of(s: &UnitStatus) -> Option<&str> {
    if s.load != Load::Loaded || !is_timer(&s.unit) {
        return None;
    }
    s.triggers.first().map(String::as_str)
}

/// The status of the job of each timer among `statuses`, keyed by the timer
/// (one call to the init). Best effort: an init that cannot tell leaves them out.
pub(crate) async fn jobs(init: &dyn Init, statuses: &[UnitStatus]) -> BTreeMap<String, UnitStatus> {
    let wanted: Vec<(String, String)> = statuses
        .iter()
        .filter_map(|s| Some((s.unit.clone(), job_of(s)?.to_string())))
        .collect();
    if wanted.is_empty() {
        return BTreeMap::new();
    }
    let mut names: Vec<String> = wanted.iter().map(|(_, j)| j.clone()).collect();
    names.sort();
    names.dedup();
    let Ok(found) = init.show(&names).await else {
        return BTreeMap::new();
    };
    wanted
        .into_iter()
        .filter_map(|(timer, job)| Some((timer, found.iter().find(|s| s.unit == job)?.clone())))
        .collect()
}

/// Forgets the failed state of the job of timer `unit` (nothing for other units).
pub(crate) async fn forget_failed_job(init: &dyn Init, unit: &str) -> anyhow::Result<()> {
    if !is_timer(unit) {
        return Ok(());
    }
    let timer = show_one(init, unit).await?;
    let Some(job) = job_of(&timer) else {
        return Ok(());
    };
    let job = show_one(init, job).await?;
    if last_run_failed(&job) {
        init.reset_failed(&job.unit).await?;
    }
    Ok(())
}

/// Whether the job's last run failed: the init holds it failed.
pub(crate) fn last_run_failed(job: &UnitStatus) -> bool {
    job.activity == Activity::Failed
}

/// A timer module's state: the timer's, unless it is active and its job's
/// last run failed; then `failed`, saying how and when.
pub(crate) fn assess(timer: &UnitStatus, job: Option<&UnitStatus>) -> (State, Option<String>) {
    let own = assess_unit(timer);
    match job {
        Some(j) if own.0 == State::Active && last_run_failed(j) => {
            let (_, why) = assess_unit(j);
            let when = j
                .exited_at
                .or(timer.last_trigger)
                .map(|t| format!(" (last run {})", t.rfc3339()))
                .unwrap_or_default();
            let why = why.unwrap_or_else(|| format!("{} failed", j.unit));
            (State::Failed, Some(format!("{why}{when}")))
        }
        _ => own,
    }
}

/// The runs of a timer, as `status` publishes them.
pub(crate) fn runs(timer: &UnitStatus, job: &UnitStatus) -> TimerStatus {
    let ran = timer.last_trigger.is_some() || job.exited_at.is_some() || job.main_exit.is_some();
    TimerStatus {
        job: job.unit.clone(),
        last_run: timer.last_trigger.map(Stamp::whole_second),
        last_exit: job.exited_at.map(Stamp::whole_second),
        last_result: ran.then(|| job.result.clone().unwrap_or_else(|| "success".into())),
        last_exit_code: job.main_exit.map(|e| match e {
            MainExit::Exited(n) => n,
            MainExit::Signal(n) => 128 + n,
        }),
        next_run: timer.next_run.map(Stamp::whole_second),
    }
}

/// The last few lines the failed job itself wrote, on one line (the init's
/// own "Failed with result…" lines left out: the reason says that already).
pub(crate) async fn last_words(init: &dyn Init, job: &UnitStatus) -> Option<String> {
    let q = JournalQuery {
        tail: Some(REASON_LINES),
        pid: job.main_pid,
        ..JournalQuery::default()
    };
    let collect = init
        .journal(&job.unit, q)
        .filter_map(|l| async move { l.ok().map(|l| l.message) })
        .collect::<Vec<_>>();
    let lines = tokio::time::timeout(REASON_TIMEOUT, collect)
        .await
        .unwrap_or_default();
    let own: Vec<&str> = lines
        .iter()
        .map(|l| l.trim())
        .filter(|l| !l.is_empty() && !from_the_init(l, &job.unit))
        .collect();
    let keep = &own[own.len().saturating_sub(REASON_KEEP)..];
    (!keep.is_empty()).then(|| keep.join("; "))
}

/// systemd's own lines about a unit: `x.service: Main process exited…`, `Started …`, `Failed to start …`.
fn from_the_init(line: &str, unit: &str) -> bool {
    const WORDS: [&str; 6] = [
        "Starting ",
        "Started ",
        "Finished ",
        "Failed to start ",
        "Stopped ",
        "Deactivated successfully",
    ];
    line.starts_with(&format!("{unit}: ")) || WORDS.iter().any(|w| line.starts_with(w))
}

/// One journal to read for `logs`: a host module's unit, or the job its timer starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct LogUnit {
    pub module: String,
    pub unit: String,
    pub scope: Scope,
    /// The main process of its last run, for a user unit (see
    /// `init::systemd::journal::user_unit_matches`).
    pub pid: Option<u32>,
}

/// The journals of host modules `(module, unit, scope)`: each unit's, and a
/// timer's job's after it. One `show` per scope; best effort (a unit the init
/// cannot tell about is read alone).
pub(crate) async fn log_units(hosts: &Inits, modules: &[(String, String, Scope)]) -> Vec<LogUnit> {
    let mut out = Vec::new();
    for scope in [Scope::User, Scope::System] {
        let mine: Vec<&(String, String, Scope)> =
            modules.iter().filter(|(_, _, s)| *s == scope).collect();
        if mine.is_empty() {
            continue;
        }
        let init = hosts.init(scope);
        // System units' lines are always filed under the unit: only user units
        // and timers need asking.
        let ask: Vec<String> = mine
            .iter()
            .filter(|(_, u, _)| scope == Scope::User || is_timer(u))
            .map(|(_, u, _)| u.clone())
            .collect();
        let statuses = if ask.is_empty() {
            Vec::new()
        } else {
            init.show(&ask).await.unwrap_or_default()
        };
        let jobs = jobs(&*init, &statuses).await;
        let pid = |s: &UnitStatus| (scope == Scope::User).then_some(s.main_pid).flatten();
        for (module, unit, _) in mine {
            let own = statuses.iter().find(|s| &s.unit == unit);
            out.push(LogUnit {
                module: module.clone(),
                unit: unit.clone(),
                scope,
                pid: own.and_then(pid),
            });
            if let Some(job) = jobs.get(unit) {
                out.push(LogUnit {
                    module: module.clone(),
                    unit: job.unit.clone(),
                    scope,
                    pid: pid(job),
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use super::*;
    use crate::host::init::memory::{Memory, Script};
    use crate::host::{node_status, stop};
    use crate::module::progress::Silent;
    use crate::module::{Kind, Module};

    fn at(s: &str) -> Stamp {
        crate::util::timefmt::parse(s).unwrap()
    }

    fn module() -> Module {
        Module {
            name: "health".into(),
            kind: Kind::Host {
                unit: "health.timer".into(),
                scope: Scope::System,
            },
        }
    }

    fn hosts(init: Memory) -> (Arc<Memory>, Inits) {
        let init = Arc::new(init);
        (init.clone(), Inits::with(Arc::new(Memory::new()), init))
    }

    fn timer_node(code: i64) -> Memory {
        Memory::new()
            .timer("health.timer", "health.service", at("2026-12-01T00:00:00Z"))
            .unit("health.service", Script::Finishes)
            .journal(
                "health.service",
                &[
                    "Starting health.service - health check...",
                    "checking disks",
                    "job-output",
                    "health.service: Main process exited, code=exited, status=3/NOTSET",
                    "health.service: Failed with result 'exit-code'.",
                    "Failed to start health.service - health check.",
                ],
            )
            .ran("health.service", code, at("2026-11-30T12:00:00Z"))
    }

    #[tokio::test]
    async fn a_failed_last_run_makes_the_timer_failed_with_the_job_s_words() {
        let (_, hosts) = hosts(timer_node(3));
        let (all, _) = node_status(&hosts, &[module()]).await;
        let s = &all["health"];
        assert_eq!(s.state, State::Failed);
        assert_eq!(
            s.reason.text().as_deref(),
            Some(
                "health.service failed: exit-code, status 3 (last run 2026-11-30T12:00:00Z): checking disks; job-output"
            )
        );
        let t = s.timer.as_ref().unwrap();
        assert_eq!(t.job, "health.service");
        assert_eq!(t.last_result.as_deref(), Some("exit-code"));
        assert_eq!(t.last_exit_code, Some(3));
        assert_eq!(
            t.last_exit.map(Stamp::rfc3339).as_deref(),
            Some("2026-11-30T12:00:00Z")
        );
        assert_eq!(
            t.next_run.map(Stamp::rfc3339).as_deref(),
            Some("2026-12-01T00:00:00Z")
        );
        let names: Vec<&str> = s.services.iter().map(|x| x.name.as_str()).collect();
        assert_eq!(names, ["health.timer", "health.service"]);
        assert_eq!(s.services[1].exit_code, Some(3));
    }

    #[tokio::test]
    async fn a_good_last_run_leaves_the_timer_active() {
        let (_, hosts) = hosts(timer_node(0));
        let (all, _) = node_status(&hosts, &[module()]).await;
        let s = &all["health"];
        assert_eq!((s.state, s.reason.text().as_deref()), (State::Active, None));
        assert_eq!(
            s.timer.as_ref().unwrap().last_result.as_deref(),
            Some("success")
        );
    }

    #[tokio::test]
    async fn stopping_a_timer_forgets_its_failed_job() {
        let (init, hosts) = hosts(timer_node(3));
        stop(
            &*init,
            &Silent,
            "health",
            "health.timer",
            Duration::from_secs(5),
        )
        .await
        .unwrap();
        assert!(
            init.calls()
                .contains(&"reset-failed health.service".to_string())
        );
        let (all, _) = node_status(&hosts, &[module()]).await;
        assert_eq!(all["health"].state, State::Inactive);
    }

    #[tokio::test]
    async fn logs_read_the_timer_and_its_job() {
        let (_, hosts) = hosts(timer_node(3));
        let units = log_units(
            &hosts,
            &[("health".into(), "health.timer".into(), Scope::System)],
        )
        .await;
        let got: Vec<(&str, &str)> = units
            .iter()
            .map(|u| (u.module.as_str(), u.unit.as_str()))
            .collect();
        assert_eq!(
            got,
            [("health", "health.timer"), ("health", "health.service")]
        );
    }

    #[test]
    fn the_init_s_own_lines_are_left_out() {
        assert!(from_the_init(
            "x.service: Failed with result 'exit-code'.",
            "x.service"
        ));
        assert!(from_the_init("Started x.service - X.", "x.service"));
        assert!(!from_the_init("disk full", "x.service"));
    }
}
