//! Verbs on host modules (init units): start, stop, reset-failed, status and logs, answering like stacks do.

pub mod init;
pub mod pick;

pub use self::pick::Hosts;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::stream::StreamExt;

use crate::error::{Detailed, HalError, OneLine};
use crate::host::init::{Activity, Init, InitError, JournalQuery, Load, MainExit, UnitStatus};
use crate::logs::stream::Lines;
use crate::module::config::Scope;
use crate::module::outcome::Outcome;
use crate::module::progress::Progress;
use crate::module::status::{LimitStatus, ModuleStatus, ServiceStatus, State};
use crate::module::{Kind, Module};
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
pub fn reachable(init: &dyn Init) -> Result<(), HalError> {
    init.reachable()
}

/// A unit whose start job is done and that still has to stay active a moment.
pub struct Pending {
    init: Arc<dyn Init>,
    name: String,
    unit: String,
    timeout: Duration,
    began: Instant,
}

/// What a launch left: done, or started and waiting for `active`.
pub enum Launch {
    Done(Outcome),
    Wait(Pending),
}

/// Asks the init to start the unit; a start job that fails is reported with
/// the unit's result, exit status and last journal lines. With `wait`, the
/// rest (staying active a moment) is [`wait`]'s, so that the caller can free
/// its `--jobs` slot in between.
pub async fn launch(
    init: Arc<dyn Init>,
    progress: &dyn Progress,
    name: &str,
    unit: &str,
    wait: bool,
    timeout: Duration,
) -> anyhow::Result<Launch> {
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
        return Ok(Launch::Done(outcome(&show_one(&*init, unit).await?)));
    }
    Ok(Launch::Wait(Pending {
        init,
        name: name.to_string(),
        unit: unit.to_string(),
        timeout,
        began,
    }))
}

/// Waits until a started unit is active and stays so for a moment.
pub async fn wait(progress: &dyn Progress, p: Pending) -> anyhow::Result<Outcome> {
    let Pending {
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
/// has its failed state cleared, so it reads `inactive` as a stopped stack does.
pub async fn stop(
    init: &dyn Init,
    progress: &dyn Progress,
    name: &str,
    unit: &str,
    timeout: Duration,
) -> anyhow::Result<Outcome> {
    progress.step(name, &format!("stopping {unit}"));
    init.stop(unit, timeout).await?;
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

/// Forgets the unit's failed state and the init's own start count.
pub async fn reset_failed(init: &dyn Init, unit: &str) -> anyhow::Result<()> {
    init.reset_failed(unit).await
}

/// The unit's journal as log lines.
pub fn journal(init: &dyn Init, unit: &str, q: JournalQuery) -> Lines {
    init.journal(unit, q)
}

/// The status of every host module given, from one `show` call per scope.
/// The flag is set when an init could not be asked (those modules are `unknown`).
pub async fn node_status(
    hosts: &Hosts,
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
        .filter_map(|m| match &m.kind {
            Kind::Host { unit, scope: s } if *s == scope => Some((m, unit.as_str())),
            _ => None,
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
            for (m, unit) in mine {
                if let Some(s) = statuses.iter().find(|s| s.unit == unit) {
                    out.insert(m.name.clone(), module_status(m, s));
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
                        name: m.name.clone(),
                        service: None,
                        kind: m.kind_tag(),
                        state: State::Unknown,
                        reason: Some(why.clone()),
                        since: None,
                        desired: None,
                        limit: LimitStatus::default(),
                        services: Vec::new(),
                    },
                );
            }
            (out, true)
        }
    }
}

fn module_status(m: &Module, s: &UnitStatus) -> ModuleStatus {
    let (state, reason) = assess(s);
    ModuleStatus {
        name: m.name.clone(),
        service: None,
        kind: m.kind_tag(),
        state,
        reason,
        since: s.changed.map(Stamp::rfc3339),
        desired: None,
        limit: LimitStatus::default(),
        services: if s.load == Load::NotFound {
            Vec::new()
        } else {
            vec![service_status(s)]
        },
    }
}

/// A unit as one "service" of the status document.
pub fn service_status(s: &UnitStatus) -> ServiceStatus {
    ServiceStatus {
        name: s.unit.clone(),
        container: None,
        unit: Some(s.unit.clone()),
        state: s.words.clone(),
        health: None,
        exit_code: s.main_exit.map(|e| match e {
            MainExit::Exited(n) => n,
            // As a shell (and Docker) reports a process killed by a signal.
            MainExit::Signal(n) => 128 + n,
        }),
        restart_count: s.restarts,
        started_at: s.active_since.map(Stamp::rfc3339),
        verdict: None,
    }
}

/// The spec's state of a unit, and why it is not `active`.
pub fn assess(s: &UnitStatus) -> (State, Option<String>) {
    let u = &s.unit;
    match &s.load {
        Load::NotFound => return (State::Invalid, Some(format!("unit {u} not found"))),
        Load::Masked => return (State::Invalid, Some(format!("unit {u} is masked"))),
        Load::Error(why) => {
            return (
                State::Invalid,
                Some(format!("unit {u} cannot be loaded: {why}")),
            );
        }
        Load::Loaded => {}
    }
    match &s.activity {
        Activity::Active => (State::Active, None),
        Activity::Activating if s.words.ends_with("/auto-restart") => (
            State::Starting,
            Some(format!(
                "{u} restarting after a failure{}{}",
                failure_words(s)
                    .map(|w| format!(" ({w})"))
                    .unwrap_or_default(),
                s.restarts
                    .map(|n| format!(", {n} restarts so far"))
                    .unwrap_or_default()
            )),
        ),
        Activity::Activating | Activity::Reloading => (
            State::Starting,
            Some(format!("{u} is {}", phrase(&s.words))),
        ),
        Activity::Deactivating | Activity::Inactive => (
            State::Inactive,
            Some(format!("{u} is {}", phrase(&s.words))),
        ),
        Activity::Failed => (
            State::Failed,
            Some(format!(
                "{u} failed: {}",
                failure_words(s).unwrap_or_else(|| "failed".into())
            )),
        ),
        Activity::Other(_) => (State::Unknown, Some(format!("{u} is {}", phrase(&s.words)))),
    }
}

/// `inactive/dead` → `inactive (dead)`.
fn phrase(words: &str) -> String {
    match words.split_once('/') {
        Some((state, sub)) if !sub.is_empty() && sub != state => format!("{state} ({sub})"),
        Some((state, _)) => state.to_string(),
        None => words.to_string(),
    }
}

/// `exit-code, status 3` or `signal, signal 9`: the result and how the main process ended.
fn failure_words(s: &UnitStatus) -> Option<String> {
    let exit = s.main_exit.and_then(|e| match e {
        MainExit::Exited(0) => None,
        MainExit::Exited(n) => Some(format!("status {n}")),
        MainExit::Signal(n) => Some(format!("signal {n}")),
    });
    match (s.result.as_deref(), exit) {
        (Some(r), Some(e)) => Some(format!("{r}, {e}")),
        (Some(r), None) => Some(r.to_string()),
        (None, Some(e)) => Some(e),
        (None, None) => None,
    }
}

fn outcome(s: &UnitStatus) -> Outcome {
    let (state, reason) = assess(s);
    Outcome {
        state,
        reason,
        warnings: Vec::new(),
    }
}

/// The main process of each user unit's last run (one `show` for all), for
/// reading the lines the journal filed under no unit (see
/// `init::systemd::journal::user_unit_matches`). System units need none:
/// their lines are always filed under the unit. Best effort: a unit the
/// manager cannot tell about is left out.
pub async fn last_main_pids(hosts: &Hosts, user_units: &[String]) -> BTreeMap<String, u32> {
    if user_units.is_empty() {
        return BTreeMap::new();
    }
    hosts
        .init(Scope::User)
        .show(user_units)
        .await
        .map(|all| {
            all.into_iter()
                .filter_map(|s| Some((s.unit, s.main_pid?)))
                .collect()
        })
        .unwrap_or_default()
}

async fn show_one(init: &dyn Init, unit: &str) -> anyhow::Result<UnitStatus> {
    let units = [unit.to_string()];
    init.show(&units)
        .await?
        .pop()
        .ok_or_else(|| anyhow::anyhow!("{} said nothing about {unit}", init.name()))
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
    Detailed { summary, details }.into()
}

/// The unit's last few journal lines, its last main process's included (none
/// if the journal cannot be read in time).
async fn last_lines(init: &dyn Init, unit: &str, pid: Option<u32>) -> Vec<String> {
    let q = JournalQuery {
        follow: false,
        tail: Some(DIAG_LINES),
        since: None,
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
