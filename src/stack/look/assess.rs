//! How the containers of a compose project add up to one module state (pure logic, no engine).

use std::time::Duration;

pub(crate) mod expected;

use crate::module::container_trouble::{ContainerTrouble, Doing};
use crate::module::reason::Reason;
use crate::module::run_state::{ContainerRun, Health, RestartPolicy, ServiceState};
use crate::module::status::{ServiceStatus, StaleNamespace, State, Verdict};
use crate::util::timefmt::Stamp;

/// What hal needs to know about one container, gathered from list and inspect.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct ContainerFacts {
    pub id: String,
    pub name: String,
    pub project: String,
    pub service: String,
    pub number: u32,
    pub oneoff: bool,
    /// Its run state; `None` when the engine said nothing of it.
    pub run: Option<ContainerRun>,
    /// `None` without a healthcheck.
    pub health: Option<Health>,
    pub exit_code: Option<i64>,
    pub restart: RestartPolicy,
    pub restart_count: i64,
    pub started_at: Option<Stamp>,
    pub finished_at: Option<Stamp>,
    pub oom_killed: bool,
    pub image: String,
    /// The engine's error text, when starting the container failed.
    pub error: Option<String>,
    /// When these facts were read; lets a just-started container count as
    /// `starting` until it has stayed up a moment.
    pub observed_at: Option<Stamp>,
    /// The container whose network namespace it shares (`network_mode: container:ID`), by id.
    pub netns_of: Option<String>,
    /// Set when that namespace is no longer its provider's: why (`stack::netns`).
    pub netns_stale: Option<StaleNamespace>,
}

/// A container without a healthcheck counts as up once it has stayed up this long.
pub(crate) const SETTLE: Duration = Duration::from_secs(1);
/// After a crash, a container must stay up this long before it counts as up again.
pub(crate) const RESETTLE: Duration = Duration::from_secs(5);

/// Restarts by Docker after which a container that is still crashing is in a
/// crash loop: `failed`, and the supervisor's to repair.
pub(crate) const LOOP_RESTARTS: i64 = 3;

/// The exit codes of a stop by signal: SIGKILL (137) and SIGTERM (143).
fn by_signal(code: i64) -> bool {
    code == 137 || code == 143
}

impl ContainerFacts {
    pub(crate) fn verdict(&self) -> Verdict {
        let Some(run) = self.run else {
            return Verdict::Stopped;
        };
        match run {
            ContainerRun::Running => match self.health {
                Some(Health::Unhealthy) => Verdict::Unhealthy,
                Some(Health::Starting) => Verdict::Starting,
                Some(Health::Healthy) => Verdict::Up,
                // Up only a moment after several crashes: still a crash loop.
                None if self.settling() && self.restart_count >= LOOP_RESTARTS => {
                    Verdict::Failed { terminal: false }
                }
                None if self.settling() => Verdict::Starting,
                None => Verdict::Up,
            },
            ContainerRun::Restarting => Verdict::Failed {
                terminal: self.restart_count >= LOOP_RESTARTS,
            },
            ContainerRun::Dead => Verdict::Failed { terminal: true },
            ContainerRun::Exited => self.exited(),
            ContainerRun::Paused
            | ContainerRun::Created
            | ContainerRun::Removing
            | ContainerRun::Stopping => Verdict::Stopped,
        }
    }

    /// The verdict of an exited container.
    fn exited(&self) -> Verdict {
        let code = self.exit_code.unwrap_or(0);
        if self.oom_killed {
            Verdict::Failed { terminal: true }
        } else if self.restart.keeps_running() {
            // Docker restarts an always/unless-stopped container whatever its
            // exit code (it marks it `restarting` before it reports the exit);
            // if it did not, a person or the daemon stopped it: not done.
            Verdict::Halted
        } else if code == 0 {
            Verdict::Completed
        } else if self.retries_ran_out() {
            // `on-failure:N` and Docker has retried N times: it gave up.
            Verdict::Failed { terminal: true }
        } else if self.restart.restarts() || by_signal(code) {
            // Exited and not restarting under a restart policy means it was
            // stopped; SIGKILL/SIGTERM exit codes mean the same without one.
            Verdict::Stopped
        } else {
            Verdict::Failed { terminal: true }
        }
    }

    /// Docker gave up on it: `on-failure:N`, a non-zero exit that was not a
    /// stop signal, and N restarts already made.
    fn retries_ran_out(&self) -> bool {
        let code = self.exit_code.unwrap_or(0);
        let RestartPolicy::OnFailure(max) = self.restart else {
            return false;
        };
        max > 0 && self.restart_count >= max && code != 0 && !by_signal(code)
    }

    /// Up for less than the settle time (longer after a crash).
    fn settling(&self) -> bool {
        self.settle_left().is_some_and(|left| !left.is_zero())
    }

    /// How much longer it must stay up to have settled, as of `observed_at`
    /// (`None` when the start or observation time is unknown).
    fn settle_left(&self) -> Option<Duration> {
        let now = self.observed_at?;
        let started = self.started_at?;
        let need = if self.restart_count > 0 {
            RESETTLE
        } else {
            SETTLE
        };
        Some(need.saturating_sub(now.since(started)))
    }

    /// Why this container is not `Up`, as part of a module's one-line reason:
    /// the one reader of a container's trouble, for `status` and the supervisor alike.
    pub(crate) fn trouble(&self) -> ContainerTrouble {
        let code = self.exit_code.unwrap_or(0);
        let doing = match self.verdict() {
            Verdict::Up => Doing::Running,
            Verdict::Completed => Doing::Completed,
            Verdict::Starting if self.health.is_some() => Doing::HealthStarting,
            Verdict::Starting if self.restart_count > 0 => Doing::Restarted {
                times: self.restart_count,
                last_exit: code,
            },
            Verdict::Starting => Doing::Starting,
            Verdict::Unhealthy => Doing::Unhealthy,
            Verdict::Halted => Doing::Halted { code },
            Verdict::Stopped => match self.run {
                Some(ContainerRun::Created) => match &self.error {
                    Some(e) if !e.is_empty() => Doing::NotStarted { error: e.clone() },
                    _ => Doing::Created,
                },
                Some(ContainerRun::Paused) => Doing::Paused,
                _ => Doing::Stopped { code },
            },
            Verdict::Failed { .. } => match self.run {
                Some(ContainerRun::Restarting | ContainerRun::Running) => Doing::RestartLoop {
                    code,
                    restarts: self.restart_count,
                },
                Some(ContainerRun::Dead) => Doing::Dead,
                _ if self.oom_killed => Doing::OutOfMemory,
                _ => Doing::Exited { code },
            },
        };
        ContainerTrouble {
            container: self.label(),
            doing,
        }
    }

    /// [`ContainerFacts::trouble`] in words (`service web exited with code 1`).
    pub(crate) fn describe(&self) -> String {
        self.trouble().to_string()
    }

    /// `service`, or `service-N` when the service runs more than one container.
    pub(crate) fn label(&self) -> String {
        crate::docker::labels::replica_name(&self.service, self.number)
    }

    pub(crate) fn to_status(&self) -> ServiceStatus {
        ServiceStatus {
            name: self.service.clone(),
            container: Some(self.name.clone()),
            unit: None,
            state: ServiceState::Container(self.run),
            health: self.health,
            exit_code: self.exit_code,
            restart_count: Some(self.restart_count),
            started_at: self.started_at,
            verdict: Some(self.verdict()),
            why: Some(self.describe()),
            stale: self.netns_stale.clone(),
            netns_of: self.netns_of.clone(),
        }
    }
}

/// The module state that a project's containers add up to, with the reason,
/// from the containers alone: one halted behind hal's back reads as stopped
/// here (`inactive` when nothing runs).
pub(crate) fn assess(containers: &[&ContainerFacts]) -> (State, Option<Reason>) {
    let main: Vec<&ContainerFacts> = containers.iter().copied().filter(|c| !c.oneoff).collect();
    if main.is_empty() {
        return (State::Inactive, Some(Reason::NoContainers));
    }
    let first = |pred: &dyn Fn(Verdict) -> bool| main.iter().find(|c| pred(c.verdict()));
    if let Some(c) = first(&|v| matches!(v, Verdict::Failed { .. })) {
        return (State::Failed, Some(Reason::Container(c.trouble())));
    }
    if let Some(c) = first(&|v| v == Verdict::Unhealthy) {
        return (State::Degraded, Some(Reason::Container(c.trouble())));
    }
    let running = main
        .iter()
        .any(|c| matches!(c.verdict(), Verdict::Up | Verdict::Starting));
    // A container halted behind hal's back names the module's trouble before
    // one that is only stopped; whether it fails the module is for the
    // module's wanted state to say ([`expected::judge`]).
    let down = first(&|v| v == Verdict::Halted).or_else(|| first(&|v| v == Verdict::Stopped));
    if let Some(c) = down {
        return if running {
            (State::Degraded, Some(Reason::Container(c.trouble())))
        } else {
            let all_created = main.iter().all(|c| c.run == Some(ContainerRun::Created));
            let why = if all_created {
                Reason::Container(c.trouble())
            } else {
                Reason::Stopped
            };
            (State::Inactive, Some(why))
        };
    }
    if let Some(c) = first(&|v| v == Verdict::Starting) {
        return (State::Starting, Some(Reason::Container(c.trouble())));
    }
    (State::Active, None)
}

/// When a module waits for nothing but its running containers to settle: how
/// long until the last of them has (as of when the facts were read). `None`
/// when it waits for anything else: a healthcheck, a restart, a stopped container.
pub(crate) fn settles_in(containers: &[&ContainerFacts]) -> Option<Duration> {
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
pub(crate) fn hopeless(containers: &[&ContainerFacts]) -> bool {
    containers
        .iter()
        .filter(|c| !c.oneoff)
        .any(|c| matches!(c.verdict(), Verdict::Failed { terminal: true }))
}

/// How long a container has been up, from a `docker ps` status text such as
/// `Up 5 minutes (healthy)` (Docker's own rounding: "About an hour" is 1 h).
pub(crate) fn uptime_from_status(text: &str) -> Option<Duration> {
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

/// The exit code and age text of an exited container's status text
/// (`Exited (0) 3 hours ago` → `(0, "3 hours")`).
pub(crate) fn exited_from_status(text: &str) -> Option<(i64, &str)> {
    let rest = text.strip_prefix("Exited (")?;
    let (code, age) = rest.split_once(") ")?;
    Some((code.parse().ok()?, age.strip_suffix(" ago")?))
}

/// How the engine words an age in a status text (go-units' `HumanDuration`).
pub(crate) fn engine_age(secs: i64) -> String {
    let (minutes, hours) = (secs / 60, (secs + 1_800) / 3_600);
    match secs {
        ..1 => "Less than a second".into(),
        1 => "1 second".into(),
        2..60 => format!("{secs} seconds"),
        _ if minutes == 1 => "About a minute".into(),
        _ if minutes < 60 => format!("{minutes} minutes"),
        _ if hours == 1 => "About an hour".into(),
        _ if hours < 48 => format!("{hours} hours"),
        _ if hours < 24 * 7 * 2 => format!("{} days", hours / 24),
        _ if hours < 24 * 30 * 2 => format!("{} weeks", hours / 24 / 7),
        _ if hours < 24 * 365 * 2 => format!("{} months", hours / 24 / 30),
        _ => format!("{} years", secs / 3_600 / 24 / 365),
    }
}

#[cfg(test)]
mod tests;
