//! How the containers of a compose project add up to one module state (pure logic, no engine).

use std::time::Duration;

use crate::module::run_state::{ContainerRun, ServiceState};
use crate::module::status::{ServiceStatus, State, Verdict};
use crate::util::timefmt::{self, Stamp};

/// What hal needs to know about one container, gathered from list and inspect.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ContainerFacts {
    pub id: String,
    pub name: String,
    pub project: String,
    pub service: String,
    pub number: u32,
    pub oneoff: bool,
    /// Docker's state word: created, running, paused, restarting, removing, exited, dead.
    pub status: String,
    pub health: Option<String>,
    pub exit_code: Option<i64>,
    /// Docker's restart policy name: no, always, unless-stopped, on-failure ("" means no).
    pub restart_policy: String,
    /// `on-failure:N`'s N (0: no limit, or another policy).
    pub max_retries: i64,
    pub restart_count: i64,
    pub started_at: Option<String>,
    pub finished_at: Option<String>,
    pub oom_killed: bool,
    pub image: String,
    /// The engine's error text, when starting the container failed.
    pub error: Option<String>,
    /// When these facts were read; lets a just-started container count as
    /// `starting` until it has stayed up a moment.
    pub observed_at: Option<Stamp>,
}

/// A container without a healthcheck counts as up once it has stayed up this long.
pub const SETTLE: Duration = Duration::from_secs(1);
/// After a crash, a container must stay up this long before it counts as up again.
pub const RESETTLE: Duration = Duration::from_secs(5);

/// Restarts by Docker after which a container that is still crashing is in a
/// crash loop: `failed`, and the supervisor's to repair.
pub const LOOP_RESTARTS: i64 = 3;

impl ContainerFacts {
    pub fn verdict(&self) -> Verdict {
        let restarts = matches!(
            self.restart_policy.as_str(),
            "always" | "unless-stopped" | "on-failure"
        );
        match self.status.as_str() {
            "running" => match self.health.as_deref() {
                Some("unhealthy") => Verdict::Unhealthy,
                Some("starting") => Verdict::Starting,
                Some(_) => Verdict::Up,
                // Up only a moment after several crashes: still a crash loop.
                None if self.settling() && self.restart_count >= LOOP_RESTARTS => {
                    Verdict::Failed { terminal: false }
                }
                None if self.settling() => Verdict::Starting,
                None => Verdict::Up,
            },
            "restarting" => Verdict::Failed {
                terminal: self.restart_count >= LOOP_RESTARTS,
            },
            "dead" => Verdict::Failed { terminal: true },
            "exited" => {
                let code = self.exit_code.unwrap_or(0);
                if self.oom_killed {
                    Verdict::Failed { terminal: true }
                } else if code == 0 {
                    // Docker restarts an always/unless-stopped container that exits 0; if it
                    // did not, a person (or the daemon) stopped it.
                    if matches!(self.restart_policy.as_str(), "always" | "unless-stopped") {
                        Verdict::Stopped
                    } else {
                        Verdict::Completed
                    }
                } else if self.retries_ran_out() {
                    // `on-failure:N` and Docker has retried N times: it gave up.
                    Verdict::Failed { terminal: true }
                } else if restarts || code == 137 || code == 143 {
                    // Exited and not restarting under a restart policy means it was
                    // stopped; SIGKILL/SIGTERM exit codes mean the same without one.
                    Verdict::Stopped
                } else {
                    Verdict::Failed { terminal: true }
                }
            }
            "paused" | "created" | "removing" => Verdict::Stopped,
            _ => Verdict::Stopped,
        }
    }

    /// Docker gave up on it: `on-failure:N`, a non-zero exit that was not a
    /// stop signal, and N restarts already made.
    fn retries_ran_out(&self) -> bool {
        let code = self.exit_code.unwrap_or(0);
        self.restart_policy == "on-failure"
            && self.max_retries > 0
            && self.restart_count >= self.max_retries
            && code != 0
            && code != 137
            && code != 143
    }

    /// Up for less than the settle time (longer after a crash).
    fn settling(&self) -> bool {
        self.settle_left().is_some_and(|left| !left.is_zero())
    }

    /// How much longer it must stay up to have settled, as of `observed_at`
    /// (`None` when the start or observation time is unknown).
    fn settle_left(&self) -> Option<Duration> {
        let now = self.observed_at?;
        let started = self.started_at.as_deref().and_then(timefmt::parse)?;
        let need = if self.restart_count > 0 {
            RESETTLE
        } else {
            SETTLE
        };
        Some(need.saturating_sub(now.since(started)))
    }

    /// Why this container is not `Up`, as part of a module's one-line reason.
    pub fn describe(&self) -> String {
        let who = format!("service {}", self.label());
        match self.verdict() {
            Verdict::Up => format!("{who} is running"),
            Verdict::Completed => format!("{who} completed"),
            Verdict::Starting if self.health.is_some() => {
                format!("{who} is starting (health: starting)")
            }
            Verdict::Starting if self.restart_count > 0 => format!(
                "{who} restarted {} times (last exit code {})",
                self.restart_count,
                self.exit_code.unwrap_or(0)
            ),
            Verdict::Starting => format!("{who} is starting"),
            Verdict::Unhealthy => format!("{who} is unhealthy"),
            Verdict::Stopped => match self.status.as_str() {
                "created" => match &self.error {
                    Some(e) if !e.is_empty() => format!("{who} was created but did not start: {e}"),
                    _ => format!("{who} is created, not started"),
                },
                "paused" => format!("{who} is paused"),
                _ => format!(
                    "{who} is stopped (exit code {})",
                    self.exit_code.unwrap_or(0)
                ),
            },
            Verdict::Failed { .. } => match self.status.as_str() {
                "restarting" | "running" => format!(
                    "{who} is restarting in a loop (exit code {}, {} restarts)",
                    self.exit_code.unwrap_or(0),
                    self.restart_count
                ),
                "dead" => format!("{who} is dead"),
                _ if self.oom_killed => format!("{who} was killed: out of memory"),
                _ => format!(
                    "{who} exited with code {}",
                    self.exit_code.unwrap_or_default()
                ),
            },
        }
    }

    /// `service`, or `service-N` when the service runs more than one container.
    pub fn label(&self) -> String {
        if self.number > 1 {
            format!("{}-{}", self.service, self.number)
        } else {
            self.service.clone()
        }
    }

    pub fn to_status(&self) -> ServiceStatus {
        ServiceStatus {
            name: self.service.clone(),
            container: Some(self.name.clone()),
            unit: None,
            state: ServiceState::Container(ContainerRun::from_word(&self.status)),
            health: self.health.clone(),
            exit_code: self.exit_code,
            restart_count: Some(self.restart_count),
            started_at: self.started_at.as_deref().and_then(timefmt::parse),
            verdict: Some(self.verdict()),
        }
    }
}

/// The module state that a project's containers add up to, with the reason.
pub fn assess(containers: &[&ContainerFacts]) -> (State, Option<String>) {
    let main: Vec<&ContainerFacts> = containers.iter().copied().filter(|c| !c.oneoff).collect();
    if main.is_empty() {
        return (State::Inactive, Some("no containers".into()));
    }
    let first = |pred: &dyn Fn(Verdict) -> bool| main.iter().find(|c| pred(c.verdict()));
    if let Some(c) = first(&|v| matches!(v, Verdict::Failed { .. })) {
        return (State::Failed, Some(c.describe()));
    }
    if let Some(c) = first(&|v| v == Verdict::Unhealthy) {
        return (State::Degraded, Some(c.describe()));
    }
    let running = main
        .iter()
        .any(|c| matches!(c.verdict(), Verdict::Up | Verdict::Starting));
    if let Some(c) = first(&|v| v == Verdict::Stopped) {
        return if running {
            (State::Degraded, Some(c.describe()))
        } else {
            let all_created = main.iter().all(|c| c.status == "created");
            let why = if all_created {
                c.describe()
            } else {
                "stopped".to_string()
            };
            (State::Inactive, Some(why))
        };
    }
    if let Some(c) = first(&|v| v == Verdict::Starting) {
        return (State::Starting, Some(c.describe()));
    }
    (State::Active, None)
}

/// When a module waits for nothing but its running containers to settle: how
/// long until the last of them has (as of when the facts were read). `None`
/// when it waits for anything else: a healthcheck, a restart, a stopped container.
pub fn settles_in(containers: &[&ContainerFacts]) -> Option<Duration> {
    let mut longest = Duration::ZERO;
    for c in containers.iter().filter(|c| !c.oneoff) {
        match c.verdict() {
            Verdict::Up | Verdict::Completed => {}
            Verdict::Starting if c.health.is_none() => longest = longest.max(c.settle_left()?),
            _ => return None,
        }
    }
    Some(longest)
}

/// Whether waiting longer cannot help: something failed in a way Docker will not repair.
pub fn hopeless(containers: &[&ContainerFacts]) -> bool {
    containers
        .iter()
        .filter(|c| !c.oneoff)
        .any(|c| matches!(c.verdict(), Verdict::Failed { terminal: true }))
}

/// How long a container has been up, from a `docker ps` status text such as
/// `Up 5 minutes (healthy)` (Docker's own rounding: "About an hour" is 1 h).
pub fn uptime_from_status(text: &str) -> Option<Duration> {
    let rest = text.strip_prefix("Up ")?;
    let rest = rest.split(" (").next()?.trim();
    if rest.starts_with("Less than a second") {
        return Some(Duration::ZERO);
    }
    let (n, unit) = match rest.split_once(' ') {
        Some(("About", u)) => (1, u.trim_start_matches("a ").trim_start_matches("an ")),
        Some((n, u)) => (n.parse::<u64>().ok()?, u),
        None => return None,
    };
    let secs = match unit.trim_end_matches('s') {
        "second" => 1,
        "minute" => 60,
        "hour" => 3_600,
        "day" => 86_400,
        "week" => 604_800,
        "month" => 2_592_000,
        "year" => 31_536_000,
        _ => return None,
    };
    Some(Duration::from_secs(n.saturating_mul(secs)))
}

/// The health state word from a `docker ps` status text, for engines (API < 1.52)
/// that leave the summary's health field empty.
pub fn health_from_status_text(text: &str) -> Option<&'static str> {
    if text.contains("(healthy)") {
        Some("healthy")
    } else if text.contains("(unhealthy)") {
        Some("unhealthy")
    } else if text.contains("(health: starting)") {
        Some("starting")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(service: &str, status: &str) -> ContainerFacts {
        ContainerFacts {
            id: format!("id-{service}"),
            name: format!("p-{service}-1"),
            project: "p".into(),
            service: service.into(),
            number: 1,
            status: status.into(),
            restart_policy: "always".into(),
            ..Default::default()
        }
    }

    fn state(cs: &[ContainerFacts]) -> State {
        assess(&cs.iter().collect::<Vec<_>>()).0
    }

    #[test]
    fn empty_is_inactive() {
        assert_eq!(state(&[]), State::Inactive);
    }

    #[test]
    fn running_and_healthy_is_active() {
        let mut db = c("db", "running");
        db.health = Some("healthy".into());
        assert_eq!(state(&[c("web", "running"), db]), State::Active);
    }

    #[test]
    fn health_starting_is_starting_and_unhealthy_is_degraded() {
        let mut db = c("db", "running");
        db.health = Some("starting".into());
        assert_eq!(state(&[c("web", "running"), db.clone()]), State::Starting);
        db.health = Some("unhealthy".into());
        let (s, why) = assess(&[&db]);
        assert_eq!(s, State::Degraded);
        assert_eq!(why.unwrap(), "service db is unhealthy");
    }

    #[test]
    fn finished_job_counts_as_active() {
        let mut job = c("migrate", "exited");
        job.restart_policy = "no".into();
        job.exit_code = Some(0);
        assert_eq!(state(&[c("web", "running"), job]), State::Active);
    }

    #[test]
    fn non_zero_exit_is_failed_and_terminal() {
        let mut job = c("migrate", "exited");
        job.restart_policy = "no".into();
        job.exit_code = Some(3);
        let (s, why) = assess(&[&job]);
        assert_eq!(s, State::Failed);
        assert_eq!(why.unwrap(), "service migrate exited with code 3");
        assert!(hopeless(&[&job]));
    }

    #[test]
    fn restart_loop_is_failed() {
        let mut w = c("web", "restarting");
        w.exit_code = Some(1);
        w.restart_count = 1;
        assert_eq!(state(std::slice::from_ref(&w)), State::Failed);
        assert!(!hopeless(&[&w]));
        w.restart_count = 5;
        assert!(hopeless(&[&w]));
    }

    #[test]
    fn on_failure_retries_that_ran_out_are_failed() {
        let mut job = c("migrate", "exited");
        job.restart_policy = "on-failure".into();
        job.max_retries = 3;
        job.exit_code = Some(1);
        job.restart_count = 3;
        let (s, why) = assess(&[&job, &c("web", "running")]);
        assert_eq!(s, State::Failed);
        assert_eq!(why.unwrap(), "service migrate exited with code 1");
        assert!(hopeless(&[&job]));
        // Still retrying (or stopped by a person before the last try): not given up.
        job.restart_count = 2;
        assert_eq!(job.verdict(), Verdict::Stopped);
        job.restart_count = 3;
        job.exit_code = Some(143);
        assert_eq!(job.verdict(), Verdict::Stopped);
        // `on-failure` with no limit: Docker never gives up, so a person stopped it.
        job.exit_code = Some(1);
        job.max_retries = 0;
        assert_eq!(job.verdict(), Verdict::Stopped);
    }

    #[test]
    fn stopped_by_request_is_inactive_or_degraded() {
        let mut s = c("web", "exited");
        s.exit_code = Some(137);
        assert_eq!(state(std::slice::from_ref(&s)), State::Inactive);
        assert_eq!(state(&[s, c("db", "running")]), State::Degraded);
    }

    #[test]
    fn just_started_containers_settle_first() {
        let mut w = c("web", "running");
        w.started_at = Some("2026-01-01T00:00:10Z".into());
        w.observed_at = timefmt::parse("2026-01-01T00:00:10.5Z");
        assert_eq!(w.verdict(), Verdict::Starting);
        w.observed_at = timefmt::parse("2026-01-01T00:00:12Z");
        assert_eq!(w.verdict(), Verdict::Up);
        w.restart_count = 2;
        assert_eq!(w.verdict(), Verdict::Starting);
        assert_eq!(
            w.describe(),
            "service web restarted 2 times (last exit code 0)"
        );
        w.observed_at = timefmt::parse("2026-01-01T00:00:16Z");
        assert_eq!(w.verdict(), Verdict::Up);
    }

    #[test]
    fn settles_in_is_the_longest_settle_left_and_nothing_else_pending() {
        let at = |started: &str| {
            let mut w = c("web", "running");
            w.started_at = Some(started.into());
            w.observed_at = timefmt::parse("2026-01-01T00:00:10.5Z");
            w
        };
        let (a, b) = (at("2026-01-01T00:00:10.2Z"), at("2026-01-01T00:00:10.4Z"));
        assert_eq!(
            settles_in(&[&a, &b]),
            Some(Duration::from_millis(900)),
            "the later start settles last"
        );
        let old = at("2026-01-01T00:00:01Z");
        assert_eq!(settles_in(&[&old]), Some(Duration::ZERO));
        let mut health = at("2026-01-01T00:00:10.2Z");
        health.health = Some("starting".into());
        assert_eq!(settles_in(&[&a, &health]), None, "a healthcheck decides");
        assert_eq!(settles_in(&[&a, &c("db", "exited")]), None);
        let mut crashed = at("2026-01-01T00:00:10Z");
        crashed.restart_count = 1;
        assert_eq!(settles_in(&[&crashed]), Some(Duration::from_millis(4500)));
    }

    #[test]
    fn oneoffs_are_ignored() {
        let mut run = c("web", "exited");
        run.oneoff = true;
        run.exit_code = Some(1);
        assert_eq!(state(&[run, c("db", "running")]), State::Active);
    }

    #[test]
    fn uptime_is_read_from_status_text() {
        let up = |t| uptime_from_status(t).map(|d| d.as_secs());
        assert_eq!(up("Up Less than a second"), Some(0));
        assert_eq!(up("Up 1 second"), Some(1));
        assert_eq!(up("Up 5 minutes (healthy)"), Some(300));
        assert_eq!(up("Up About a minute"), Some(60));
        assert_eq!(up("Up About an hour (health: starting)"), Some(3600));
        assert_eq!(up("Up 3 days"), Some(259_200));
        assert_eq!(up("Up 2 weeks (Paused)"), Some(1_209_600));
        assert_eq!(up("Exited (0) 2 minutes ago"), None);
        assert_eq!(up("Up"), None);
    }

    #[test]
    fn health_is_read_from_status_text() {
        assert_eq!(
            health_from_status_text("Up 3 seconds (healthy)"),
            Some("healthy")
        );
        assert_eq!(
            health_from_status_text("Up 1 second (health: starting)"),
            Some("starting")
        );
        assert_eq!(
            health_from_status_text("Up 2 hours (unhealthy)"),
            Some("unhealthy")
        );
        assert_eq!(health_from_status_text("Up 2 hours"), None);
    }
}
