//! Verbs on host modules (init units): start, stop, reset-failed, status and logs, answering like stacks do.

mod assess;
pub(crate) mod init;
pub(crate) mod pick;
pub(crate) mod timer;

pub(crate) use self::assess::{assess, service_status};
use self::init::show_one;
pub(crate) use self::pick::Inits;
pub(crate) use self::timer::log_units;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::stream::StreamExt;

use crate::error::{HalError, OneLine};
use crate::host::init::{Activity, Init, InitError, JournalQuery, Load, MainExit, UnitStatus};
use crate::logs::stream::Lines;
use crate::module::Module;
use crate::module::config::Scope;
use crate::module::diagnosed::Detailed;
use crate::module::outcome::{Outcome, StartPlan};
use crate::module::progress::Progress;
use crate::module::reason::{Reason, Reasons};
use crate::module::recorded_causes::SeenCause;
use crate::module::status::{ModuleStatus, State};
use crate::util::timefmt::Stamp;

const POLL: Duration = Duration::from_millis(250);
/// A started unit must stay active this long before the start counts as done:
/// a service that dies right after its start job succeeded did not start.
const UNIT_SETTLE: Duration = Duration::from_secs(1);
/// Journal lines shown for a unit that did not come up (the init adds a few of its own).
const DIAG_LINES: u64 = 8;
/// How long reading those lines may take.
const DIAG_TIMEOUT: Duration = Duration::from_secs(5);

/// Whether the init can be reached at all (cheap; no child process).
pub(crate) fn reachable(init: &dyn Init) -> Result<(), HalError> {
    init.reachable()
}

/// A unit whose start job is done and that still has to stay active a moment.
pub(crate) struct UnitSettling {
    init: Arc<dyn Init>,
    name: String,
    unit: String,
    timeout: Duration,
    began: Instant,
}

/// What a unit's launch left: done, or started and settling (see [`UnitSettling`]).
pub(crate) enum UnitLaunch {
    Done(Outcome),
    Wait(UnitSettling),
}

/// A host module's unit as it is, when it is active already: a start of it
/// starts nothing (as `systemctl start` of an active unit) and counts nothing.
/// `None`: not a host module, or a start has work to do (inactive, failed, or
/// on its way up or down).
pub(crate) async fn already_active(hosts: &Inits, m: &Module) -> anyhow::Result<Option<Outcome>> {
    let Some((unit, scope)) = m.host_unit() else {
        return Ok(None);
    };
    let s = show_one(&*hosts.init(scope), unit).await?;
    Ok(matches!(s.activity, Activity::Active).then(|| outcome(&s)))
}

/// Asks the init to start the unit; a start job that fails is reported with
/// the unit's result, exit status and last journal lines. With the plan's
/// `wait`, the rest (staying active a moment) is [`wait`]'s, so that the
/// caller can free its `--jobs` slot in between; its `timeout` bounds both.
pub(crate) async fn launch(
    init: Arc<dyn Init>,
    progress: &dyn Progress,
    name: &str,
    unit: &str,
    plan: &StartPlan,
) -> anyhow::Result<UnitLaunch> {
    let (wait, timeout) = (plan.wait, plan.timeout);
    let began = Instant::now();
    progress.step(name, &format!("starting {unit}"));
    if let Err(e) = init.start(unit, wait, timeout).await {
        return Err(match e.downcast_ref::<InitError>() {
            Some(InitError::JobFailed(_)) => did_not_start(&*init, name, unit, None, None).await,
            Some(InitError::Timeout(_)) => {
                did_not_start(&*init, name, unit, None, Some(timeout)).await
            }
            Some(InitError::NotFound(_)) => not_found(unit),
            _ => e,
        });
    }
    if !wait {
        return Ok(UnitLaunch::Done(outcome(&show_one(&*init, unit).await?)));
    }
    Ok(UnitLaunch::Wait(UnitSettling {
        init,
        name: name.to_string(),
        unit: unit.to_string(),
        timeout,
        began,
    }))
}

/// Waits until a started unit is active and stays so for a moment.
pub(crate) async fn wait(progress: &dyn Progress, p: UnitSettling) -> anyhow::Result<Outcome> {
    let UnitSettling {
        init,
        name,
        unit,
        timeout,
        began,
    } = p;
    let (init, name, unit) = (&*init, name.as_str(), unit.as_str());
    progress.step(name, &format!("waiting for {unit}"));
    // The unit is active since `.0` with `.1` restarts so far.
    let mut active: Option<(Instant, Option<i64>)> = None;
    loop {
        let s = show_one(init, unit).await?;
        match s.activity {
            // Active for a while already (starting a running unit changes nothing);
            // the init's stamp has whole seconds, hence twice the margin.
            Activity::Active
                if active.is_none()
                    && s.active_since
                        .is_some_and(|t| Stamp::now().since(t) >= UNIT_SETTLE + UNIT_SETTLE) =>
            {
                return Ok(outcome(&s));
            }
            Activity::Active => match active {
                Some((since, n)) if n == s.restarts => {
                    if since.elapsed() >= UNIT_SETTLE {
                        return Ok(outcome(&s));
                    }
                }
                _ => active = Some((Instant::now(), s.restarts)),
            },
            Activity::Failed => return Err(did_not_start(init, name, unit, Some(s), None).await),
            // The start job succeeded and the unit already ended well (a one-shot job).
            Activity::Inactive if s.load == Load::Loaded && s.result.is_none() => {
                return Ok(outcome(&s));
            }
            Activity::Inactive => return Err(did_not_start(init, name, unit, Some(s), None).await),
            _ => active = None,
        }
        if began.elapsed() >= timeout {
            if s.activity == Activity::Active {
                return Ok(outcome(&s));
            }
            return Err(did_not_start(init, name, unit, Some(s), Some(timeout)).await);
        }
        tokio::time::sleep(POLL).await;
    }
}

/// Stops the unit, then reads the state it left. A failed unit stopped by request
/// has its failed state cleared, so it reads `inactive` as a stopped stack does;
/// so has a timer's failed job (else a restart would leave the module failed).
pub(crate) async fn stop(
    init: &dyn Init,
    progress: &dyn Progress,
    name: &str,
    unit: &str,
    timeout: Duration,
) -> anyhow::Result<Outcome> {
    progress.step(name, &format!("stopping {unit}"));
    init.stop(unit, timeout).await?;
    timer::forget_failed_job(init, unit).await?;
    let mut s = show_one(init, unit).await?;
    if s.load == Load::NotFound {
        return Err(not_found(unit));
    }
    if s.activity == Activity::Failed {
        init.reset_failed(unit).await?;
        s = show_one(init, unit).await?;
    }
    Ok(outcome(&s))
}

/// Forgets the unit's failed state and the init's own start count (and, for
/// a timer, its job's: a failed last run is what made the module failed).
pub(crate) async fn reset_failed(init: &dyn Init, unit: &str) -> anyhow::Result<()> {
    init.reset_failed(unit).await?;
    timer::forget_failed_job(init, unit).await
}

/// The unit's journal as log lines.
pub(crate) fn journal(init: &dyn Init, unit: &str, q: JournalQuery) -> Lines {
    init.journal(unit, q)
}

/// The status of every host module given, from one `show` call per scope.
/// The flag is set when an init could not be asked (those modules are `unknown`).
pub(crate) async fn node_status(
    hosts: &Inits,
    modules: &[Module],
) -> (BTreeMap<String, ModuleStatus>, bool) {
    let (user, system) = futures_util::future::join(
        scope_status(&*hosts.init(Scope::User), modules, Scope::User),
        scope_status(&*hosts.init(Scope::System), modules, Scope::System),
    )
    .await;
    let mut out = user.0;
    out.extend(system.0);
    (out, user.1 || system.1)
}

async fn scope_status(
    init: &dyn Init,
    modules: &[Module],
    scope: Scope,
) -> (BTreeMap<String, ModuleStatus>, bool) {
    let mine: Vec<(&Module, &str)> = modules
        .iter()
        .filter_map(|m| {
            let (unit, s) = m.host_unit()?;
            (s == scope).then_some((m, unit))
        })
        .collect();
    let mut out = BTreeMap::new();
    if mine.is_empty() {
        return (out, false);
    }
    let mut units: Vec<String> = mine.iter().map(|(_, u)| (*u).to_string()).collect();
    units.sort();
    units.dedup();
    match init.show(&units).await {
        Ok(statuses) => {
            let jobs = timer::jobs(init, &statuses).await;
            for (m, unit) in mine {
                if let Some(s) = statuses.iter().find(|s| s.unit == unit) {
                    let job = jobs.get(unit);
                    let mut st = module_status(m, s, job);
                    // A failed job's own last words, as a failed start shows them.
                    if let Some(j) =
                        job.filter(|j| st.state == State::Failed && timer::last_run_failed(j))
                        && let Some(Reason::Said(r)) = st.reason.0.last_mut()
                        && let Some(words) = timer::last_words(init, j).await
                    {
                        *r = format!("{r}: {words}");
                    }
                    out.insert(m.name.clone(), st);
                }
            }
            (out, false)
        }
        Err(e) => {
            let why = OneLine(&e).to_string();
            for (m, _) in mine {
                out.insert(
                    m.name.clone(),
                    ModuleStatus {
                        reason: Reasons::said(Some(why.clone())),
                        ..ModuleStatus::of(m, State::Unknown)
                    },
                );
            }
            (out, true)
        }
    }
}

fn module_status(m: &Module, s: &UnitStatus, job: Option<&UnitStatus>) -> ModuleStatus {
    let (state, reason) = timer::assess(s, job);
    let mut services = if s.load == Load::NotFound {
        Vec::new()
    } else {
        vec![service_status(s)]
    };
    services.extend(job.map(service_status));
    ModuleStatus {
        reason: Reasons::said(reason),
        since: s.changed.map(Stamp::whole_second),
        services,
        timer: job.map(|j| timer::runs(s, j)),
        ..ModuleStatus::of(m, state)
    }
}

fn outcome(s: &UnitStatus) -> Outcome {
    let (state, reason) = assess(s);
    Outcome {
        state,
        reason: Reasons::said(reason),
        warnings: Vec::new(),
    }
}

fn not_found(unit: &str) -> anyhow::Error {
    anyhow::anyhow!(
        "unit {unit} not found: check `unit` in the config, and that the unit is installed (and the init reloaded)"
    )
}

/// The error for a unit that failed to start or was not active in time: its
/// state in one line, then its result, exit status and last journal lines.
async fn did_not_start(
    init: &dyn Init,
    name: &str,
    unit: &str,
    status: Option<UnitStatus>,
    timed_out: Option<Duration>,
) -> anyhow::Error {
    let status = match status {
        Some(s) => Ok(s),
        None => show_one(init, unit).await,
    };
    let s = match status {
        Ok(s) => s,
        Err(e) => return e,
    };
    if s.load == Load::NotFound {
        return not_found(unit);
    }
    let (state, reason) = assess(&s);
    // What its status says of it, as the status says it.
    let seen: Vec<SeenCause> = reason.iter().cloned().map(SeenCause::Said).collect();
    let why = reason.unwrap_or_else(|| state.as_str().to_string());
    let summary = match timed_out {
        Some(t) => format!(
            "not active after {}: {why}",
            crate::util::duration::format(t)
        ),
        None => format!("did not start: {why}"),
    };
    let mut details = vec![format!(
        "{unit}: state {}, result {}, exit {}, {} restarts",
        s.words,
        s.result.as_deref().unwrap_or("success"),
        match s.main_exit {
            Some(MainExit::Exited(n)) => format!("status {n}"),
            Some(MainExit::Signal(n)) => format!("signal {n}"),
            None => "-".into(),
        },
        s.restarts.unwrap_or(0)
    )];
    // The log store takes in what a dying service wrote a moment after the
    // fact: ask it to catch up, then read until two reads agree (bounded).
    init.settle_logs().await;
    let mut lines = last_lines(init, unit, s.main_pid).await;
    for _ in 0..5 {
        tokio::time::sleep(Duration::from_millis(200)).await;
        let again = last_lines(init, unit, s.main_pid).await;
        if again == lines {
            break;
        }
        lines = again;
    }
    for line in lines {
        details.push(format!("  {name} | {line}"));
    }
    Detailed {
        summary,
        details,
        seen,
    }
    .into()
}

/// The unit's last few journal lines, its last main process's included (none
/// if the journal cannot be read in time).
async fn last_lines(init: &dyn Init, unit: &str, pid: Option<u32>) -> Vec<String> {
    let q = JournalQuery {
        follow: false,
        tail: Some(DIAG_LINES),
        since: None,
        until: None,
        pid,
    };
    let lines = init.journal(unit, q);
    let collect = lines
        .filter_map(|l| async move { l.ok().map(|l| l.message) })
        .collect::<Vec<_>>();
    tokio::time::timeout(DIAG_TIMEOUT, collect)
        .await
        .unwrap_or_default()
}

#[cfg(test)]
mod tests;
