//! A [`WatchEvent`] as the log shows it: the human line (`subject: text`) and the JSON line's fields, from one table per event.

use super::event::{
    Cause, Failure, HoldEvent, HookEvent, OnFailure, Plan, Release, RepairEvent, WatchEvent,
    WatchOwn,
};
use super::line::{WatchLine, ms, secs};
use crate::util::duration::format as span;

impl WatchEvent {
    /// The event's line: each group of events has its own table.
    pub(super) fn line(&self) -> WatchLine {
        use WatchEvent::*;
        match self {
            Watch(e) => e.line(),
            ConfigRead => WatchLine::about("watch", "config_read", None, "config read again".into()),
            DependenciesChanged { edges } => {
                let text = format!("dependencies read again: {edges} edge(s) between modules");
                WatchLine::about("watch", "dependencies_changed", None, text.clone())
                    .reason(text)
                    .with("edges", *edges)
            }
            Repair(e) => e.line(),
            Hold(e) => e.line(),
            Hook(e) => e.line(),
            Round(e) => e.line(),
            Update(e) => e.line(),
            StateUnwritable { why } => WatchLine::about(
                "watch",
                "state_unwritable",
                None,
                format!(
                    "hal's state cannot be written ({why}); repairs go on, their start counts and holds kept in memory until it can"
                ),
            )
            .reason(why),
            StateWritable => WatchLine::about(
                "watch",
                "state_writable",
                None,
                "hal's state can be written again; what was kept in memory is written".into(),
            ),
        }
    }
}

impl WatchOwn {
    /// The watch's own events and the engine's.
    fn line(&self) -> WatchLine {
        match self {
            WatchOwn::Started {
                modules,
                stacks,
                hosts,
                grace,
                interval,
                resync,
            } => WatchLine::about(
                "watch",
                "started",
                Some("watch"),
                format!(
                    "watching {} ({}, {}; grace {}, interval {}, resync {}); only modules started by hal (desired up) are touched",
                    count(*modules, "module"),
                    count(*stacks, "stack"),
                    count(*hosts, "host unit"),
                    span(*grace),
                    span(*interval),
                    span(*resync),
                ),
            )
            .with("modules", *modules),
            WatchOwn::ModulesChanged { added, gone } => WatchLine::about(
                "watch",
                "modules_changed",
                None,
                format!("modules changed: added {}; gone {}", list(added), list(gone)),
            ),
            WatchOwn::Problem { module, why } => {
                let subject = module.as_deref().unwrap_or("watch");
                WatchLine {
                    module: module.clone(),
                    ..WatchLine::about(subject, "problem", None, why.clone()).reason(why)
                }
            }
            WatchOwn::Stopped { why } => {
                WatchLine::about("watch", "stopped", Some("exit"), format!("stopping ({why})"))
                    .reason(why)
            }
            WatchOwn::EngineUp {
                engine,
                endpoint,
                again,
            } => {
                let text = if *again {
                    format!("connected again to {endpoint}; checking every module")
                } else {
                    format!("connected to {endpoint}")
                };
                WatchLine::about(engine, "engine_up", Some("full_pass"), text).reason(endpoint)
            }
            WatchOwn::Subscribed { engine } => WatchLine::about(
                engine,
                "subscribed",
                None,
                "subscribed to container events".to_string(),
            ),
            WatchOwn::EngineLost {
                engine,
                what,
                why,
                retry_in,
            } => WatchLine::about(
                engine,
                "engine_lost",
                Some("reconnect"),
                format!("{what}: {why}; retrying in {}", span(*retry_in)),
            )
            .reason(why)
            .with("retry_in_ms", ms(*retry_in)),
            WatchOwn::EventUnreadable { engine, why } => {
                WatchLine::about(engine, "event_unreadable", None, why.clone()).reason(why)
            }
        }
    }
}

impl RepairEvent {
    /// A repair: the trouble it mends, how it went; waiting instead of repairing.
    fn line(&self) -> WatchLine {
        match self {
            RepairEvent::Trouble {
                module,
                reason,
                retry,
                plan,
            } => trouble(module, reason, *retry, plan),
            RepairEvent::Restarted {
                module,
                containers,
                took,
                what,
                warnings,
            } => {
                let notes = if warnings.is_empty() {
                    String::new()
                } else {
                    let said: Vec<String> = warnings.iter().map(ToString::to_string).collect();
                    format!("; {}", said.join("; "))
                };
                let text = format!("restarted, active ({}; {what}{notes})", secs(*took));
                WatchLine::module(module, "restarted", None, text)
                    .with("state", "active")
                    .with("repair", repair_word(*containers))
                    .with("took_ms", ms(*took))
            }
            RepairEvent::RepairFailed {
                module,
                how,
                error,
                took,
                next_try,
            } => {
                let (event, verb) = match how {
                    Failure::Refused => ("refused", "refused"),
                    Failure::Retry => ("retry_failed", "retry failed"),
                    Failure::Restart => ("restart_failed", "restart failed"),
                };
                let next = next_try
                    .map(|t| format!("; still held, next try after {} UTC", t.clock()))
                    .unwrap_or_default();
                let text = format!("{verb}: {error} ({}){next}", secs(*took));
                WatchLine::module(module, event, None, text)
                    .reason(error.to_string())
                    .with("took_ms", ms(*took))
            }
            RepairEvent::Waiting { module, reason } => {
                let reason = reason.to_string();
                WatchLine::module(module, "waiting", None, reason.clone()).reason(reason)
            }
        }
    }
}

impl HoldEvent {
    /// Holds.
    fn line(&self) -> WatchLine {
        match self {
            HoldEvent::Held {
                module,
                refusal,
                on_failure,
            } => {
                let tail = match on_failure {
                    OnFailure::None => "",
                    OnFailure::Refused => "; on_failure not run",
                    OnFailure::Runs => "; running on_failure",
                };
                WatchLine::module(
                    module,
                    "held",
                    Some("hold"),
                    format!("held: {refusal}{tail}"),
                )
                .reason(refusal.to_string())
            }
            HoldEvent::StillHeld {
                module,
                since,
                until,
                reason,
                notified,
            } => {
                let tail = if *notified {
                    "; on_failure already ran for this hold"
                } else {
                    ""
                };
                let text = format!(
                    "still held (since {} UTC, until {} UTC): {reason}{tail}",
                    since.clock(),
                    until.clock()
                );
                WatchLine::module(module, "held", Some("hold"), text)
                    .reason(reason.to_string())
                    .with("restored", true)
            }
            HoldEvent::Released { module, why } => {
                let (text, reason) = match why {
                    Release::Waiting(r) => (format!("hold released: {r}"), r.to_string()),
                    Release::CountReset => (
                        "hold released: its start count was reset".to_string(),
                        "start count reset".to_string(),
                    ),
                };
                WatchLine::module(module, "released", Some("release"), text).reason(reason)
            }
        }
    }
}

impl HookEvent {
    /// What `on_failure` did.
    fn line(&self) -> WatchLine {
        match self {
            HookEvent::Refused { module, why } => {
                let text = format!("on_failure not run: {why}");
                WatchLine::module(module, "on_failure_refused", None, text).reason(why)
            }
            HookEvent::Output { module, line } => {
                let text = format!("on_failure: {line}");
                WatchLine::module(module, "on_failure_output", None, text).reason(line)
            }
            HookEvent::Ran {
                module,
                how,
                ok,
                took,
            } => {
                let text = format!("on_failure {how} ({})", secs(*took));
                WatchLine::module(module, "on_failure", None, text)
                    .reason(how)
                    .with("ok", *ok)
                    .with("took_ms", ms(*took))
            }
            HookEvent::Failed { module, why } => {
                let text = format!("on_failure could not run: {why}");
                WatchLine::module(module, "on_failure", None, text)
                    .reason(why)
                    .with("ok", false)
            }
        }
    }
}

/// The line of a repair about to begin: what it does and why.
fn trouble(module: &str, reason: &Cause, retry: bool, plan: &Plan) -> WatchLine {
    let (verb, action) = match (retry, plan) {
        (true, _) => ("retrying after hold", "retry"),
        (false, Plan::Containers { fixes }) => (
            "repairing",
            fixes.first().map_or("restart", |f| f.how.word()),
        ),
        (false, Plan::Recreate { .. }) => ("recreating the module", "recreate"),
        (false, Plan::Module) => ("restarting", "restart"),
    };
    let said = match plan {
        Plan::Containers { fixes } => format!("; {}", super::causes::fixes_said(fixes, false)),
        Plan::Recreate { why } => format!("; {why}"),
        Plan::Module => String::new(),
    };
    let containers = matches!(plan, Plan::Containers { .. });
    let line = WatchLine::module(
        module,
        "trouble",
        Some(action),
        format!("{verb}: {reason}{said}"),
    )
    .reason(reason.to_string())
    .with("repair", repair_word(containers));
    match plan {
        Plan::Containers { fixes } => {
            let containers: Vec<&str> = fixes.iter().map(|f| f.container.as_str()).collect();
            line.with("containers", containers)
        }
        Plan::Recreate { .. } | Plan::Module => line,
    }
}

/// The JSON's `repair`: `containers`, or the whole `module`.
fn repair_word(containers: bool) -> &'static str {
    if containers { "containers" } else { "module" }
}

/// `1 module`, `2 modules`.
fn count(n: usize, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

/// `a, b`, or `none`.
fn list(names: &[String]) -> String {
    if names.is_empty() {
        "none".to_string()
    } else {
        names.join(", ")
    }
}
