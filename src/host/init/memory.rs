//! A second init, in memory: scripted units (fine, failing, dying, slow, missing) that the unit tests drive the host backend with.
//!
//! It implements [`Init`] as systemd does, from a script instead of a
//! manager, and records every call, so that a test can say what happened.

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use futures_util::future::{BoxFuture, FutureExt};
use futures_util::stream::StreamExt;

use super::{
    Activity, Init, InitError, JournalQuery, Load, LoadProblem, MainExit, ManagerHealth, UnitStatus,
};
use crate::error::HalError;
use crate::logs::line::{Line, Stream};
use crate::logs::stream::Lines;
use crate::util::timefmt::Stamp;

/// What a unit does when it is started.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Script {
    /// Starts and stays active.
    Runs,
    /// Its start job fails: the main process exits with this status.
    FailsToStart(i64),
    /// The start job succeeds, the next look finds it active, and then it is
    /// failed: the main process exited with this status right after starting.
    DiesAfterStart(i64),
    /// Activating for this many looks, then active.
    SlowToStart(u32),
    /// Runs to the end and succeeds (a one-shot job).
    Finishes,
}

#[derive(Clone, Debug)]
struct Unit {
    script: Script,
    activity: Activity,
    result: Option<String>,
    main_exit: Option<MainExit>,
    main_pid: Option<u32>,
    active_since: Option<Stamp>,
    /// Looks (`show`) since the last start.
    looks: u32,
    journal: Vec<String>,
    /// A timer's job, and its next run.
    triggers: Vec<String>,
    next_run: Option<Stamp>,
    exited_at: Option<Stamp>,
}

/// The scripted init. Units it was not told about are not found.
#[derive(Debug, Default)]
pub(crate) struct Memory {
    units: Mutex<BTreeMap<String, Unit>>,
    calls: Mutex<Vec<String>>,
    /// Why the manager cannot be reached, when it cannot.
    down: Option<String>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Memory {
    pub(crate) fn new() -> Memory {
        Memory::default()
    }

    /// A unit, inactive until started, doing what `script` says then.
    pub(crate) fn unit(self, name: &str, script: Script) -> Memory {
        lock(&self.units).insert(
            name.to_string(),
            Unit {
                script,
                activity: Activity::Inactive,
                result: None,
                main_exit: None,
                main_pid: None,
                active_since: None,
                looks: 0,
                journal: Vec::new(),
                triggers: Vec::new(),
                next_run: None,
                exited_at: None,
            },
        );
        self
    }

    /// A timer, active (waiting), that starts `job` (which must be a unit too), next at `next`.
    pub(crate) fn timer(self, name: &str, job: &str, next: Stamp) -> Memory {
        let m = self.unit(name, Script::Runs);
        if let Some(u) = lock(&m.units).get_mut(name) {
            u.activity = Activity::Active;
            u.triggers = vec![job.to_string()];
            u.next_run = Some(next);
        }
        m
    }

    /// The job `name` last ran and ended at `at` with exit status `code`
    /// (non-zero: the unit is failed, as systemd leaves a failed job).
    pub(crate) fn ran(self, name: &str, code: i64, at: Stamp) -> Memory {
        if let Some(u) = lock(&self.units).get_mut(name) {
            u.exited_at = Some(at);
            u.main_pid = Some(4343);
            if code == 0 {
                u.activity = Activity::Inactive;
                u.main_exit = Some(MainExit::Exited(0));
            } else {
                fail(u, code);
            }
        }
        self
    }

    /// The lines the unit's journal holds.
    pub(crate) fn journal(self, name: &str, lines: &[&str]) -> Memory {
        if let Some(u) = lock(&self.units).get_mut(name) {
            u.journal = lines.iter().map(|l| (*l).to_string()).collect();
        }
        self
    }

    /// A manager that cannot be reached, for this reason.
    pub(crate) fn down(self, why: &str) -> Memory {
        Memory {
            down: Some(why.to_string()),
            ..self
        }
    }

    /// Every call so far, e.g. `start web.service`, `reset-failed web.service`.
    pub(crate) fn calls(&self) -> Vec<String> {
        lock(&self.calls).clone()
    }

    fn record(&self, call: String) {
        lock(&self.calls).push(call);
    }

    fn unreachable(&self) -> Result<(), HalError> {
        match &self.down {
            Some(why) => Err(HalError::InitUnreachable(why.clone())),
            None => Ok(()),
        }
    }

    fn look(&self, name: &str) -> UnitStatus {
        let mut units = lock(&self.units);
        let Some(u) = units.get_mut(name) else {
            return status(name, Load::NotFound, None);
        };
        u.looks += 1;
        match u.script {
            Script::DiesAfterStart(code) if u.activity == Activity::Active && u.looks > 1 => {
                fail(u, code);
            }
            Script::SlowToStart(n) if u.activity == Activity::Activating && u.looks > n => {
                u.activity = Activity::Active;
                u.active_since = Some(Stamp::now());
            }
            _ => {}
        }
        status(name, Load::Loaded, Some(u))
    }
}

fn fail(u: &mut Unit, code: i64) {
    u.activity = Activity::Failed;
    u.result = Some("exit-code".into());
    u.main_exit = Some(MainExit::Exited(code));
}

fn status(name: &str, load: Load, u: Option<&Unit>) -> UnitStatus {
    let activity = u.map_or(Activity::Inactive, |u| u.activity.clone());
    let words = match &activity {
        Activity::Active => "active/running".to_string(),
        Activity::Activating => "activating/start".to_string(),
        Activity::Failed => "failed/failed".to_string(),
        Activity::Inactive => "inactive/dead".to_string(),
        other => format!("{other:?}").to_lowercase(),
    };
    UnitStatus {
        unit: name.to_string(),
        load,
        activity,
        words,
        auto_restart: false,
        result: u.and_then(|u| u.result.clone()),
        main_exit: u.and_then(|u| u.main_exit),
        main_pid: u.and_then(|u| u.main_pid),
        restarts: Some(0),
        active_since: u.and_then(|u| u.active_since),
        changed: None,
        exited_at: u.and_then(|u| u.exited_at),
        triggers: u.map(|u| u.triggers.clone()).unwrap_or_default(),
        next_run: u.and_then(|u| u.next_run),
        last_trigger: None,
    }
}

impl Init for Memory {
    fn name(&self) -> &'static str {
        "memory"
    }

    /// Any name without blanks: not systemd's rule, to show whose rule applies.
    fn unit_problem(&self, unit: &str) -> Option<String> {
        (unit.is_empty() || unit.contains(char::is_whitespace))
            .then(|| format!("{unit:?} has blanks, or nothing"))
    }

    fn reachable(&self) -> Result<(), HalError> {
        self.unreachable()
    }

    fn health(&self) -> BoxFuture<'_, ManagerHealth> {
        async move {
            match &self.down {
                Some(why) => ManagerHealth::Down {
                    why: why.clone(),
                    hint: "start it".into(),
                },
                None => ManagerHealth::Up {
                    state: "running".into(),
                    note: None,
                },
            }
        }
        .boxed()
    }

    fn load_problem<'a>(&'a self, unit: &'a str) -> BoxFuture<'a, Option<LoadProblem>> {
        async move {
            (!lock(&self.units).contains_key(unit)).then(|| LoadProblem {
                words: "not found".into(),
                look: "the script".into(),
            })
        }
        .boxed()
    }

    fn show<'a>(&'a self, units: &'a [String]) -> BoxFuture<'a, anyhow::Result<Vec<UnitStatus>>> {
        async move {
            self.unreachable()?;
            Ok(units.iter().map(|u| self.look(u)).collect())
        }
        .boxed()
    }

    fn start<'a>(
        &'a self,
        unit: &'a str,
        wait: bool,
        _timeout: Duration,
    ) -> BoxFuture<'a, anyhow::Result<()>> {
        async move {
            self.unreachable()?;
            self.record(format!("start {unit}"));
            let mut units = lock(&self.units);
            let Some(u) = units.get_mut(unit) else {
                return Err(InitError::NotFound(unit.to_string()).into());
            };
            if u.activity == Activity::Active {
                return Ok(());
            }
            u.looks = 0;
            u.result = None;
            u.main_exit = None;
            u.main_pid = Some(4242);
            u.active_since = Some(Stamp::now());
            u.activity = Activity::Active;
            match u.script {
                Script::Runs | Script::DiesAfterStart(_) => {}
                Script::FailsToStart(code) => {
                    fail(u, code);
                    if wait {
                        return Err(InitError::JobFailed(format!(
                            "Job for {unit} failed because the control process exited with error code"
                        ))
                        .into());
                    }
                }
                Script::SlowToStart(_) => {
                    u.activity = Activity::Activating;
                    u.active_since = None;
                }
                Script::Finishes => u.activity = Activity::Inactive,
            }
            Ok(())
        }
        .boxed()
    }

    fn stop<'a>(&'a self, unit: &'a str, _timeout: Duration) -> BoxFuture<'a, anyhow::Result<()>> {
        async move {
            self.unreachable()?;
            self.record(format!("stop {unit}"));
            // As systemd: stopping a failed unit leaves it failed.
            if let Some(u) = lock(&self.units).get_mut(unit)
                && u.activity != Activity::Failed
            {
                u.activity = Activity::Inactive;
            }
            Ok(())
        }
        .boxed()
    }

    fn reset_failed<'a>(&'a self, unit: &'a str) -> BoxFuture<'a, anyhow::Result<()>> {
        async move {
            self.unreachable()?;
            self.record(format!("reset-failed {unit}"));
            if let Some(u) = lock(&self.units).get_mut(unit)
                && u.activity == Activity::Failed
            {
                u.activity = Activity::Inactive;
                u.result = None;
            }
            Ok(())
        }
        .boxed()
    }

    fn enable_hint(&self, units: &[&str]) -> String {
        format!("enable {}", units.join(" "))
    }

    fn journal(&self, unit: &str, q: JournalQuery) -> Lines {
        self.record(format!("journal {unit}"));
        let lines = lock(&self.units)
            .get(unit)
            .map(|u| u.journal.clone())
            .unwrap_or_default();
        let skip = q.tail.map_or(0, |n| lines.len().saturating_sub(n as usize));
        let time = Stamp::now();
        futures_util::stream::iter(lines.into_iter().skip(skip).map(move |message| {
            Ok(Line {
                time,
                stream: Stream::Stdout,
                message,
            })
        }))
        .boxed()
    }

    fn settle_logs(&self) -> BoxFuture<'_, ()> {
        async move { self.record("settle-logs".into()) }.boxed()
    }
}
