//! What `hal watch` does about what it sees: statuses, remembered times and the clock in, actions out (pure, no I/O).
//!
//! The rules, which the README repeats:
//!
//! - Only a module whose desired state is `up` is ever touched: never one a
//!   person stopped (`down`), and never one hal never started (no desired
//!   state at all: hal has no business running what nobody asked it to run).
//! - A stack is restarted when it has no containers, when a container exited or
//!   is dead (Docker's restart policy is not bringing it back: the engine marks
//!   a container `restarting` before it reports the exit), when Docker has
//!   restarted a container `LOOP_RESTARTS` times and it is still crashing
//!   (all three: the container's [`Verdict`], the rule `status` uses too),
//!   or when a container stays `unhealthy` longer than the grace period
//!   (Docker never restarts an unhealthy container).
//! - A host module is restarted when its unit is `failed` or `inactive`.
//! - A module whose start limit is hit (or whose restart the limit refuses)
//!   is *held*, not restarted: `on_failure` runs once per hold, and the module is tried again once the limit's window
//!   has passed, with a pause between tries that doubles up to [`BACKOFF_MAX`].
//!   A hold ends when the module is seen `active`, or is no longer wanted up.
//! - After a restart that failed (without hitting the limit), the next one
//!   waits [`PAUSE_FIRST`], doubling up to [`PAUSE_MAX`] while they keep failing.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::module::KindTag;
use crate::module::status::{ModuleStatus, ServiceStatus, State, Verdict};
use crate::util::timefmt::{self, Stamp};

/// The first pause between tries of a held module; it doubles after each failed try.
pub const BACKOFF_FIRST: Duration = Duration::from_secs(10);
pub const BACKOFF_MAX: Duration = Duration::from_secs(600);
/// The pause after a failed restart before the next one; it doubles while they keep failing.
pub const PAUSE_FIRST: Duration = Duration::from_secs(2);
pub const PAUSE_MAX: Duration = Duration::from_secs(60);
/// Slack after a window's end: `free_at` is printed to the second.
const FREE_SLACK: Duration = Duration::from_secs(1);

/// What to do about a module.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Act {
    /// Restart it (counts against its start limit).
    Restart,
    /// Try a held module again: its window has passed.
    Retry,
    /// Hold it without trying: its start limit is already hit (run `on_failure`).
    Hold,
    /// Forget the hold of a module: it is active again, or no longer wanted up.
    Release,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Action {
    pub module: String,
    pub act: Act,
    /// Why, in a few words, for the log: `service web unhealthy for 60s`.
    pub reason: String,
}

/// How a restart or retry ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Attempt {
    Recovered,
    /// The start limit refused it.
    Refused,
    Failed,
}

/// Something the engine said about one container, between status passes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Seen {
    pub module: String,
    pub container: String,
    pub unhealthy: bool,
    pub at: Stamp,
}

/// A module the supervisor has given up on for now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hold {
    pub since: Stamp,
    /// No try before this (the backoff).
    pub not_before: Stamp,
    /// The pause after the next failed try.
    pub backoff: Duration,
    /// When the start limit frees a start, as the last status said.
    pub free_at: Option<Stamp>,
}

impl Hold {
    fn due_at(&self) -> Stamp {
        match self.free_at {
            Some(f) => self.not_before.max(f.plus(FREE_SLACK)),
            None => self.not_before,
        }
    }
}

/// The supervisor's memory: when containers turned unhealthy, and which modules are held.
#[derive(Clone, Debug)]
pub struct Supervisor {
    grace: Duration,
    /// (module, container) → since when it has been unhealthy.
    unhealthy: BTreeMap<(String, String), Stamp>,
    holds: BTreeMap<String, Hold>,
    /// Modules whose last restart failed: (no restart before, the pause after the next failure).
    paused: BTreeMap<String, (Stamp, Duration)>,
}

impl Supervisor {
    pub fn new(grace: Duration) -> Supervisor {
        Supervisor {
            grace,
            unhealthy: BTreeMap::new(),
            holds: BTreeMap::new(),
            paused: BTreeMap::new(),
        }
    }

    pub fn hold(&self, module: &str) -> Option<&Hold> {
        self.holds.get(module)
    }

    /// Remembers an engine event: the earliest time a container was seen unhealthy.
    pub fn saw(&mut self, ev: Seen) {
        let key = (ev.module, ev.container);
        if ev.unhealthy {
            let t = self.unhealthy.entry(key).or_insert(ev.at);
            *t = (*t).min(ev.at);
        } else {
            self.unhealthy.remove(&key);
        }
    }

    /// What to do about each given module now. Modules not given keep their memory.
    pub fn decide(&mut self, statuses: &[ModuleStatus], now: Stamp) -> Vec<Action> {
        let mut out = Vec::new();
        for s in statuses {
            let action = |act, reason: String| Action {
                module: s.name.clone(),
                act,
                reason,
            };
            if s.desired.as_deref() != Some("up") {
                self.forget_unhealthy(&s.name);
                self.paused.remove(&s.name);
                if self.holds.remove(&s.name).is_some() {
                    let why = match s.desired.as_deref() {
                        Some("down") => "stopped by request",
                        _ => "no longer wanted up",
                    };
                    out.push(action(Act::Release, why.to_string()));
                }
                continue;
            }
            if matches!(s.state, State::Unknown | State::Invalid) {
                continue;
            }
            self.note_unhealthy(s, now);
            if s.state == State::Active {
                self.paused.remove(&s.name);
            }
            let trouble = self.trouble(s, now);
            if let Some(hold) = self.holds.get_mut(&s.name) {
                hold.free_at = s.limit.free_at.as_deref().and_then(timefmt::parse);
                if s.state == State::Active {
                    self.holds.remove(&s.name);
                    out.push(action(Act::Release, "active again".into()));
                } else if let Some(why) = trouble
                    && now >= hold.due_at()
                {
                    out.push(action(Act::Retry, why));
                }
                continue;
            }
            let Some(why) = trouble else { continue };
            let limited = s
                .limit
                .free_at
                .as_deref()
                .and_then(timefmt::parse)
                .filter(|free| *free > now);
            match limited {
                // A restart would only be refused: hold now, and try when the window has passed.
                Some(free) => {
                    self.begin_hold(&s.name, now, Some(free));
                    let held = format!(
                        "{why}; start limit hit: {} starts in {}, free again at {} UTC",
                        s.limit.used,
                        s.limit.interval,
                        free.clock()
                    );
                    out.push(action(Act::Hold, held));
                }
                None if self.paused.get(&s.name).is_some_and(|(t, _)| now < *t) => {}
                None => out.push(action(Act::Restart, why)),
            }
        }
        out
    }

    fn begin_hold(&mut self, module: &str, now: Stamp, free_at: Option<Stamp>) {
        self.paused.remove(module);
        self.holds.insert(
            module.to_string(),
            Hold {
                since: now,
                not_before: now.plus(BACKOFF_FIRST),
                backoff: (BACKOFF_FIRST * 2).min(BACKOFF_MAX),
                free_at,
            },
        );
    }

    /// Records how a restart or retry ended; true when a hold began (run `on_failure`).
    pub fn record(&mut self, module: &str, attempt: Attempt, now: Stamp) -> bool {
        match attempt {
            Attempt::Recovered => {
                self.holds.remove(module);
                self.paused.remove(module);
                self.forget_unhealthy(module);
                false
            }
            Attempt::Refused | Attempt::Failed => {
                if let Some(h) = self.holds.get_mut(module) {
                    h.not_before = now.plus(h.backoff);
                    h.backoff = (h.backoff * 2).min(BACKOFF_MAX);
                    return false;
                }
                if attempt == Attempt::Failed {
                    // Not held: pause, then the next look decides (the limit bounds how often).
                    let gap = self
                        .paused
                        .get(module)
                        .map_or(PAUSE_FIRST, |(_, g)| (*g * 2).min(PAUSE_MAX));
                    self.paused.insert(module.to_string(), (now.plus(gap), gap));
                    return false;
                }
                self.begin_hold(module, now, None);
                true
            }
        }
    }

    /// The next moment after `now` when something becomes due without any event:
    /// a grace period running out, a pause ending, or a held module's next try.
    pub fn next_due(&self, now: Stamp) -> Option<Stamp> {
        let graces = self
            .unhealthy
            .iter()
            .filter(|((m, _), _)| !self.holds.contains_key(m))
            .map(|(_, since)| since.plus(self.grace));
        let pauses = self.paused.values().map(|(t, _)| *t);
        let holds = self.holds.values().map(Hold::due_at);
        graces.chain(pauses).chain(holds).filter(|t| *t > now).min()
    }

    /// Modules with something due at `now` (to be looked at again).
    pub fn due(&self, now: Stamp) -> Vec<String> {
        let mut out: Vec<String> = self
            .unhealthy
            .iter()
            .filter(|(_, since)| since.plus(self.grace) <= now)
            .map(|((m, _), _)| m.clone())
            .chain(
                self.holds
                    .iter()
                    .filter(|(_, h)| h.due_at() <= now)
                    .map(|(m, _)| m.clone()),
            )
            .chain(
                self.paused
                    .iter()
                    .filter(|(_, (t, _))| *t <= now)
                    .map(|(m, _)| m.clone()),
            )
            .collect();
        out.sort();
        out.dedup();
        out
    }

    fn forget_unhealthy(&mut self, module: &str) {
        self.unhealthy.retain(|(m, _), _| m != module);
    }

    /// Keeps the unhealthy memory of `s` in line with what its status shows.
    fn note_unhealthy(&mut self, s: &ModuleStatus, now: Stamp) {
        let sick: Vec<String> = s
            .services
            .iter()
            .filter(|c| is_unhealthy(c))
            .map(key_of)
            .collect();
        self.unhealthy
            .retain(|(m, c), _| m != &s.name || sick.contains(c));
        for c in sick {
            self.unhealthy.entry((s.name.clone(), c)).or_insert(now);
        }
    }

    /// Why a module that should be up needs a restart now, if it does.
    fn trouble(&self, s: &ModuleStatus, now: Stamp) -> Option<String> {
        match s.kind {
            KindTag::Host => host_trouble(s),
            KindTag::Stack => self.stack_trouble(s, now),
            KindTag::Invalid => None,
        }
    }

    fn stack_trouble(&self, s: &ModuleStatus, now: Stamp) -> Option<String> {
        if s.state == State::Active {
            return None;
        }
        if s.services.is_empty() {
            return Some("no containers".into());
        }
        let svc = &s.services;
        if let Some(c) = svc.iter().find(|c| given_up(c)) {
            return Some(match c.state.as_str() {
                "restarting" => format!(
                    "service {} is restarting in a loop (exit code {}, {} restarts)",
                    c.name,
                    code(c),
                    c.restart_count.unwrap_or(0)
                ),
                "dead" => format!("service {} is dead", c.name),
                _ => format!(
                    "service {} exited with code {} and Docker is not restarting it",
                    c.name,
                    code(c)
                ),
            });
        }
        let mut overdue = None;
        for c in svc.iter().filter(|c| is_unhealthy(c)) {
            let since = self.unhealthy.get(&(s.name.clone(), key_of(c)));
            if let Some(since) = since
                && now.since(*since) >= self.grace
            {
                let secs = now.since(*since).as_secs();
                overdue.get_or_insert(format!("service {} unhealthy for {secs}s", c.name));
            }
        }
        if overdue.is_some() {
            return overdue;
        }
        // Exit code 0, or created and never started: a stopped service, unless it is a
        // finished job (then the module would be active) or Docker is busy restarting.
        let waiting = svc.iter().any(|c| {
            matches!(
                c.verdict,
                Some(Verdict::Unhealthy | Verdict::Failed { terminal: false })
            )
        });
        if waiting || !matches!(s.state, State::Inactive | State::Degraded | State::Failed) {
            return None;
        }
        svc.iter()
            .find(|c| {
                c.verdict == Some(Verdict::Stopped)
                    && matches!(c.state.as_str(), "exited" | "created")
            })
            .map(|c| match c.state.as_str() {
                "created" => format!("service {} was created but is not running", c.name),
                _ => format!("service {} is stopped (exit code {})", c.name, code(c)),
            })
    }
}

fn host_trouble(s: &ModuleStatus) -> Option<String> {
    let unit = s.services.first()?;
    let active = unit.state.split('/').next().unwrap_or("");
    matches!(active, "failed" | "inactive").then(|| format!("unit {} is {}", unit.name, unit.state))
}

fn is_unhealthy(c: &ServiceStatus) -> bool {
    c.verdict == Some(Verdict::Unhealthy)
}

/// Docker will not bring it back: a crash loop, dead, or exited with an error
/// and no restart coming (stopped by a kill, or by a policy Docker did not act on).
fn given_up(c: &ServiceStatus) -> bool {
    match c.verdict {
        Some(Verdict::Failed { terminal }) => terminal,
        Some(Verdict::Stopped) => c.state == "exited" && c.exit_code.unwrap_or(0) != 0,
        _ => false,
    }
}

fn key_of(c: &ServiceStatus) -> String {
    c.container.clone().unwrap_or_else(|| c.name.clone())
}

fn code(c: &ServiceStatus) -> String {
    c.exit_code.map_or("-".to_string(), |x| x.to_string())
}

#[cfg(test)]
mod tests;
