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
//!   restarted a container [`LOOP_RESTARTS`] times and it is still crashing,
//!   or when a container stays `unhealthy` longer than the grace period
//!   (Docker never restarts an unhealthy container).
//! - A host module is restarted when its unit is `failed` or `inactive`.
//! - A restart refused by the start limit *holds* the module: `on_failure`
//!   runs once per hold, and the module is tried again once the limit's window
//!   has passed, with a pause between tries that doubles up to [`BACKOFF_MAX`].
//!   A hold ends when the module is seen `active`, or is no longer wanted up.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::model::{ModuleStatus, ServiceStatus, State};
use crate::timefmt::{self, Stamp};

/// Restarts by Docker after which a still-crashing container counts as a crash loop
/// (the same figure `status` uses to call a restart loop hopeless).
pub const LOOP_RESTARTS: i64 = 3;
/// The first pause between tries of a held module; it doubles after each failed try.
pub const BACKOFF_FIRST: Duration = Duration::from_secs(10);
pub const BACKOFF_MAX: Duration = Duration::from_secs(600);
/// Slack after a window's end: `free_at` is printed to the second.
const FREE_SLACK: Duration = Duration::from_secs(1);

/// What to do about a module.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Act {
    /// Restart it (counts against its start limit).
    Restart,
    /// Try a held module again: its window has passed.
    Retry,
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
}

impl Supervisor {
    pub fn new(grace: Duration) -> Supervisor {
        Supervisor {
            grace,
            unhealthy: BTreeMap::new(),
            holds: BTreeMap::new(),
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
            if let Some(why) = trouble {
                out.push(action(Act::Restart, why));
            }
        }
        out
    }

    /// Records how a restart or retry ended; true when a hold began (run `on_failure`).
    pub fn record(&mut self, module: &str, attempt: Attempt, now: Stamp) -> bool {
        match attempt {
            Attempt::Recovered => {
                self.holds.remove(module);
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
                    // Not held: the next look decides, and the limit bounds how often.
                    return false;
                }
                self.holds.insert(
                    module.to_string(),
                    Hold {
                        since: now,
                        not_before: now.plus(BACKOFF_FIRST),
                        backoff: (BACKOFF_FIRST * 2).min(BACKOFF_MAX),
                        free_at: None,
                    },
                );
                true
            }
        }
    }

    /// The next moment after `now` when something becomes due without any event:
    /// a grace period running out, or a held module's next try.
    pub fn next_due(&self, now: Stamp) -> Option<Stamp> {
        let graces = self
            .unhealthy
            .iter()
            .filter(|((m, _), _)| !self.holds.contains_key(m))
            .map(|(_, since)| since.plus(self.grace));
        let holds = self.holds.values().map(Hold::due_at);
        graces.chain(holds).filter(|t| *t > now).min()
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
            "host" => host_trouble(s),
            "stack" => self.stack_trouble(s, now),
            _ => None,
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
        if let Some(c) = svc
            .iter()
            .find(|c| c.state == "restarting" && c.restart_count.unwrap_or(0) >= LOOP_RESTARTS)
        {
            return Some(format!(
                "service {} is restarting in a loop (exit code {}, {} restarts)",
                c.name,
                code(c),
                c.restart_count.unwrap_or(0)
            ));
        }
        if let Some(c) = svc.iter().find(|c| c.state == "dead") {
            return Some(format!("service {} is dead", c.name));
        }
        if let Some(c) = svc
            .iter()
            .find(|c| c.state == "exited" && c.exit_code.unwrap_or(0) != 0)
        {
            return Some(format!(
                "service {} exited with code {} and Docker is not restarting it",
                c.name,
                code(c)
            ));
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
        let waiting = svc
            .iter()
            .any(|c| is_unhealthy(c) || c.state == "restarting");
        if waiting || !matches!(s.state, State::Inactive | State::Degraded | State::Failed) {
            return None;
        }
        svc.iter()
            .find(|c| matches!(c.state.as_str(), "exited" | "created"))
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
    c.state == "running" && c.health.as_deref() == Some("unhealthy")
}

fn key_of(c: &ServiceStatus) -> String {
    c.container.clone().unwrap_or_else(|| c.name.clone())
}

fn code(c: &ServiceStatus) -> String {
    c.exit_code.map_or("-".to_string(), |x| x.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::LimitStatus;

    const GRACE: Duration = Duration::from_secs(60);

    fn t(secs: i64) -> Stamp {
        Stamp { secs, nanos: 0 }
    }

    fn svc(name: &str, state: &str) -> ServiceStatus {
        ServiceStatus {
            name: name.into(),
            container: Some(format!("m-{name}-1")),
            state: state.into(),
            exit_code: Some(0),
            restart_count: Some(0),
            ..Default::default()
        }
    }

    fn stack(state: State, desired: Option<&str>, services: Vec<ServiceStatus>) -> ModuleStatus {
        ModuleStatus {
            name: "m".into(),
            kind: "stack",
            state,
            reason: None,
            since: None,
            desired: desired.map(str::to_string),
            limit: LimitStatus::default(),
            services,
        }
    }

    fn unit(state: State, words: &str) -> ModuleStatus {
        ModuleStatus {
            kind: "host",
            ..stack(state, Some("up"), vec![svc("x.service", words)])
        }
    }

    fn exited(name: &str, code: i64) -> ServiceStatus {
        ServiceStatus {
            exit_code: Some(code),
            ..svc(name, "exited")
        }
    }

    fn unhealthy(name: &str) -> ServiceStatus {
        ServiceStatus {
            health: Some("unhealthy".into()),
            ..svc(name, "running")
        }
    }

    fn acts(sup: &mut Supervisor, s: &ModuleStatus, now: i64) -> Vec<(Act, String)> {
        sup.decide(std::slice::from_ref(s), t(now))
            .into_iter()
            .map(|a| (a.act, a.reason))
            .collect()
    }

    #[test]
    fn a_killed_container_is_restarted_only_when_wanted_up() {
        let mut sup = Supervisor::new(GRACE);
        let killed = vec![exited("web", 137)];
        for desired in [None, Some("down")] {
            let s = stack(State::Inactive, desired, killed.clone());
            assert!(acts(&mut sup, &s, 0).is_empty(), "{desired:?}");
        }
        let s = stack(State::Inactive, Some("up"), killed);
        let a = acts(&mut sup, &s, 0);
        assert_eq!(a.len(), 1);
        assert_eq!(a[0].0, Act::Restart);
        assert!(a[0].1.contains("service web exited with code 137"), "{a:?}");
    }

    #[test]
    fn no_containers_or_a_stopped_service_is_restarted() {
        let mut sup = Supervisor::new(GRACE);
        let s = stack(State::Inactive, Some("up"), vec![]);
        assert_eq!(acts(&mut sup, &s, 0)[0].1, "no containers");
        let s = stack(
            State::Degraded,
            Some("up"),
            vec![svc("web", "running"), exited("db", 0)],
        );
        assert_eq!(
            acts(&mut sup, &s, 0)[0].1,
            "service db is stopped (exit code 0)"
        );
    }

    #[test]
    fn healthy_starting_paused_and_finished_jobs_are_left_alone() {
        let mut sup = Supervisor::new(GRACE);
        let job = exited("migrate", 0);
        for s in [
            stack(
                State::Active,
                Some("up"),
                vec![svc("web", "running"), job.clone()],
            ),
            stack(
                State::Starting,
                Some("up"),
                vec![svc("web", "running"), job],
            ),
            stack(
                State::Degraded,
                Some("up"),
                vec![svc("web", "running"), svc("db", "paused")],
            ),
        ] {
            assert!(acts(&mut sup, &s, 0).is_empty(), "{s:?}");
        }
    }

    #[test]
    fn docker_is_left_to_restart_until_it_loops() {
        let mut sup = Supervisor::new(GRACE);
        let mut c = svc("web", "restarting");
        c.exit_code = Some(1);
        c.restart_count = Some(1);
        let s = stack(State::Failed, Some("up"), vec![c.clone()]);
        assert!(acts(&mut sup, &s, 0).is_empty());
        c.restart_count = Some(LOOP_RESTARTS);
        let s = stack(State::Failed, Some("up"), vec![c]);
        let a = acts(&mut sup, &s, 0);
        assert_eq!(
            a[0].1,
            "service web is restarting in a loop (exit code 1, 3 restarts)"
        );
    }

    #[test]
    fn unhealthy_is_restarted_after_the_grace_period_counted_from_the_event() {
        let mut sup = Supervisor::new(GRACE);
        let s = stack(State::Degraded, Some("up"), vec![unhealthy("web")]);
        // The event came before the first status pass saw it.
        sup.saw(Seen {
            module: "m".into(),
            container: "m-web-1".into(),
            unhealthy: true,
            at: t(90),
        });
        assert!(acts(&mut sup, &s, 100).is_empty());
        assert_eq!(sup.next_due(t(100)), Some(t(150)));
        assert!(sup.due(t(149)).is_empty());
        assert_eq!(sup.due(t(150)), ["m"]);
        let a = acts(&mut sup, &s, 150);
        assert_eq!(a, [(Act::Restart, "service web unhealthy for 60s".into())]);
        // Healthy again: forgotten, nothing due.
        let s = stack(State::Active, Some("up"), vec![svc("web", "running")]);
        assert!(acts(&mut sup, &s, 151).is_empty());
        assert_eq!(sup.next_due(t(151)), None);
    }

    #[test]
    fn a_container_that_recovers_before_the_grace_is_not_restarted() {
        let mut sup = Supervisor::new(GRACE);
        let sick = stack(State::Degraded, Some("up"), vec![unhealthy("web")]);
        assert!(acts(&mut sup, &sick, 0).is_empty());
        sup.saw(Seen {
            module: "m".into(),
            container: "m-web-1".into(),
            unhealthy: false,
            at: t(30),
        });
        assert_eq!(sup.next_due(t(30)), None);
        // Unhealthy again later: the grace starts over.
        assert!(acts(&mut sup, &sick, 70).is_empty());
        assert_eq!(sup.next_due(t(70)), Some(t(130)));
    }

    #[test]
    fn an_unhealthy_container_beside_a_finished_job_waits_for_the_grace() {
        let mut sup = Supervisor::new(GRACE);
        let s = stack(
            State::Degraded,
            Some("up"),
            vec![unhealthy("web"), exited("migrate", 0)],
        );
        assert!(acts(&mut sup, &s, 0).is_empty());
        assert_eq!(acts(&mut sup, &s, 60)[0].0, Act::Restart);
    }

    #[test]
    fn host_units_failed_or_inactive_are_restarted() {
        let mut sup = Supervisor::new(GRACE);
        for (state, words, acted) in [
            (State::Failed, "failed/failed", true),
            (State::Inactive, "inactive/dead", true),
            (State::Starting, "activating/auto-restart", false),
            (State::Active, "active/running", false),
            // Held by the limit, but systemd is still starting it.
            (State::Failed, "activating/start", false),
        ] {
            let a = acts(&mut sup, &unit(state, words), 0);
            assert_eq!(!a.is_empty(), acted, "{words}: {a:?}");
        }
        assert_eq!(
            acts(&mut sup, &unit(State::Failed, "failed/failed"), 0)[0].1,
            "unit x.service is failed/failed"
        );
    }

    #[test]
    fn unknown_and_invalid_modules_are_never_touched() {
        let mut sup = Supervisor::new(GRACE);
        for state in [State::Unknown, State::Invalid] {
            assert!(acts(&mut sup, &stack(state, Some("up"), vec![]), 0).is_empty());
        }
    }

    #[test]
    fn a_refusal_holds_until_the_window_passes_then_retries_with_backoff() {
        let mut sup = Supervisor::new(GRACE);
        let mut s = stack(State::Failed, Some("up"), vec![exited("web", 1)]);
        assert_eq!(acts(&mut sup, &s, 0)[0].0, Act::Restart);
        assert!(sup.record("m", Attempt::Refused, t(0)), "a hold begins");
        s.limit.free_at = Some(t(100).rfc3339());
        // Held: no restart while the window lasts, whatever happens.
        assert!(acts(&mut sup, &s, 1).is_empty());
        assert!(acts(&mut sup, &s, 100).is_empty());
        assert_eq!(sup.next_due(t(2)), Some(t(101)));
        // The window has passed: one retry.
        s.limit.free_at = None;
        assert_eq!(acts(&mut sup, &s, 101)[0].0, Act::Retry);
        // It fails again: still the same hold (no second on_failure), and a longer pause.
        assert!(!sup.record("m", Attempt::Failed, t(101)));
        assert!(acts(&mut sup, &s, 120).is_empty());
        assert_eq!(sup.next_due(t(120)), Some(t(121)));
        assert_eq!(acts(&mut sup, &s, 121)[0].0, Act::Retry);
        assert!(!sup.record("m", Attempt::Refused, t(121)));
        assert_eq!(sup.next_due(t(121)), Some(t(161)));
        // It recovers: the hold ends.
        assert_eq!(acts(&mut sup, &s, 161)[0].0, Act::Retry);
        assert!(!sup.record("m", Attempt::Recovered, t(161)));
        assert!(sup.hold("m").is_none());
    }

    #[test]
    fn the_backoff_is_bounded() {
        let mut sup = Supervisor::new(GRACE);
        assert!(sup.record("m", Attempt::Refused, t(0)));
        for i in 0..20 {
            sup.record("m", Attempt::Failed, t(i));
        }
        assert_eq!(sup.hold("m").unwrap().backoff, BACKOFF_MAX);
    }

    #[test]
    fn a_hold_ends_when_active_again_or_stopped_by_request() {
        let mut sup = Supervisor::new(GRACE);
        sup.record("m", Attempt::Refused, t(0));
        let up = stack(State::Active, Some("up"), vec![svc("web", "running")]);
        assert_eq!(
            acts(&mut sup, &up, 5),
            [(Act::Release, "active again".into())]
        );
        sup.record("m", Attempt::Refused, t(10));
        let stopped = stack(State::Inactive, Some("down"), vec![exited("web", 137)]);
        assert_eq!(
            acts(&mut sup, &stopped, 11),
            [(Act::Release, "stopped by request".into())]
        );
        assert!(sup.hold("m").is_none());
    }

    #[test]
    fn a_failed_restart_without_a_hold_is_left_to_the_next_look() {
        let mut sup = Supervisor::new(GRACE);
        assert!(!sup.record("m", Attempt::Failed, t(0)));
        assert!(sup.hold("m").is_none());
    }

    #[test]
    fn held_modules_do_not_wake_the_loop_for_their_grace() {
        let mut sup = Supervisor::new(GRACE);
        let s = stack(State::Degraded, Some("up"), vec![unhealthy("web")]);
        assert!(acts(&mut sup, &s, 0).is_empty());
        sup.record("m", Attempt::Refused, t(0));
        // Only the hold's own try is due, never the grace of a held module.
        assert_eq!(sup.next_due(t(0)), Some(t(0).plus(BACKOFF_FIRST)));
        // Nothing is ever due in the past: a waiting loop cannot spin.
        assert_eq!(sup.next_due(t(10_000)), None);
    }
}
