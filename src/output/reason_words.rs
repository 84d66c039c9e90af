//! How a module's reason is worded: each cause of a status (a container's trouble, a requirement waited on, a failed start…) and their one line, beside the warnings' words.

use std::fmt;

use crate::module::container_trouble::{ContainerTrouble, Doing};
use crate::module::reason::{
    MissingService, ProviderFate, Reason, Reasons, Requirement, StaleNamespace,
};

/// `service web exited with code 1`: the one wording of a container's trouble,
/// for `status` and the supervisor alike.
impl fmt::Display for ContainerTrouble {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "service {} ", self.container)?;
        match &self.doing {
            Doing::Running => f.write_str("is running"),
            Doing::Completed => f.write_str("completed"),
            Doing::HealthStarting => f.write_str("is starting (health: starting)"),
            Doing::Restarted { times, last_exit } => {
                write!(f, "restarted {times} times (last exit code {last_exit})")
            }
            Doing::Starting => f.write_str("is starting"),
            Doing::Unhealthy => f.write_str("is unhealthy"),
            Doing::Halted { code } => write!(
                f,
                "exited with code {code} and the engine is not restarting it"
            ),
            Doing::NotStarted { error } => write!(f, "was created but did not start: {error}"),
            Doing::Created => f.write_str("is created, not started"),
            Doing::Paused => f.write_str("is paused"),
            Doing::Stopped { code } => write!(f, "is stopped (exit code {code})"),
            Doing::RestartLoop { code, restarts } => write!(
                f,
                "is restarting in a loop (exit code {code}, {restarts} restarts)"
            ),
            Doing::Dead => f.write_str("is dead"),
            Doing::OutOfMemory => f.write_str("was killed: out of memory"),
            Doing::Exited { code } => write!(f, "exited with code {code}"),
        }
    }
}

/// `sha256:` and twelve hex digits.
fn short_digest(d: &str) -> String {
    match d.split_once(':') {
        Some((algo, hex)) => format!("{algo}:{}", hex.chars().take(12).collect::<String>()),
        None => d.chars().take(12).collect(),
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reason::NoContainers => f.write_str("no containers"),
            Reason::Container(t) => write!(f, "{t}"),
            Reason::Said(w) | Reason::PullWarning(w) => f.write_str(w),
            Reason::Stopped => f.write_str("stopped"),
            Reason::Missing(m) => {
                let names: Vec<String> = m.iter().map(MissingService::to_string).collect();
                f.write_str(&names.join(", "))
            }
            Reason::StoppedByRequest(s) => write!(f, "{}: stopped by request", s.join(", ")),
            Reason::StaleNamespace { service, stale } => {
                write!(f, "service {service} {stale}")
            }
            Reason::Failed { service, cause } => match service {
                Some(svc) => write!(f, "start of {svc} failed: {cause}"),
                None => write!(f, "start failed: {cause}"),
            },
            Reason::StartLimit {
                used,
                interval,
                free_at,
            } => write!(
                f,
                "start limit hit: {used} starts in {}, free again at {} UTC",
                crate::util::duration::format(*interval),
                free_at.clock()
            ),
            Reason::Held { until } => write!(f, "held by hal watch until {} UTC", until.clock()),
            Reason::RolledBack {
                services,
                at,
                cause,
            } => write!(
                f,
                "rolled back {} at {} UTC ({cause})",
                services.join(", "),
                at.clock()
            ),
            Reason::Quarantined(held) => {
                let held: Vec<String> = held
                    .iter()
                    .map(|(service, digest)| format!("{service} {}", short_digest(digest)))
                    .collect();
                write!(
                    f,
                    "quarantined: {} (rolled back, not applied again)",
                    held.join(", ")
                )
            }
            Reason::WaitingOn(on) => {
                let names: Vec<&str> = on.iter().map(|r| r.name.as_str()).collect();
                let causes: Vec<String> = on.iter().map(Requirement::to_string).collect();
                write!(f, "waiting on {} ({})", names.join(", "), causes.join("; "))
            }
            Reason::NotUpdated { max_failures } => {
                let s = if *max_failures == 1 { "" } else { "s" };
                write!(
                    f,
                    "not updated: stopped after {max_failures} failed update{s} (--max-failures)"
                )
            }
        }
    }
}

impl fmt::Display for Requirement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.name, self.state.as_str())?;
        if !self.reason.is_empty() {
            write!(f, " ({})", self.reason)?;
        }
        Ok(())
    }
}

/// The causes on one line, first said first, joined with `; `.
impl fmt::Display for Reasons {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, r) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{r}")?;
        }
        Ok(())
    }
}

/// `in a dead network namespace: gw-main started again after it` (`…: gw-main is stopped`).
impl fmt::Display for StaleNamespace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.fate {
            ProviderFate::Gone => write!(
                f,
                "in the network namespace of container {}, which is gone",
                self.provider
            ),
            ProviderFate::StartedAgain => write!(
                f,
                "in a dead network namespace: {} started again after it",
                self.provider
            ),
            ProviderFate::Stopped => {
                write!(
                    f,
                    "in a dead network namespace: {} is stopped",
                    self.provider
                )
            }
        }
    }
}

/// `db: no container`, or `web: 1 of 3 containers`.
impl fmt::Display for MissingService {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.containers {
            0 => write!(f, "{}: no container", self.name),
            n => write!(f, "{}: {n} of {} containers", self.name, self.expected),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::module::state::State;
    use crate::util::timefmt::Stamp;

    fn exited(container: &str, code: i64) -> ContainerTrouble {
        ContainerTrouble {
            container: container.into(),
            doing: Doing::Exited { code },
        }
    }

    #[test]
    fn causes_are_joined_only_when_said() {
        let at = Stamp::from_micros(0);
        let mut r = Reasons::one(Reason::NoContainers);
        r.first(Reason::Held { until: at });
        r.then(Reason::PullWarning("pull of web failed".into()));
        assert_eq!(
            r.to_string(),
            "held by hal watch until 00:00:00 UTC; no containers; pull of web failed"
        );
        assert_eq!(serde_json::to_value(&r).ok(), Some(r.to_string().into()));
        assert_eq!(
            serde_json::to_value(Reasons::none()).ok(),
            Some(serde_json::Value::Null)
        );
        let waiting = Reason::WaitingOn(vec![
            Requirement {
                name: "db".into(),
                state: State::Failed,
                reason: Reasons::one(Reason::Container(exited("db", 1))),
            },
            Requirement {
                name: "cache".into(),
                state: State::Inactive,
                reason: Reasons::none(),
            },
        ]);
        assert_eq!(
            waiting.to_string(),
            "waiting on db, cache (db: failed (service db exited with code 1); cache: inactive)"
        );
    }

    #[test]
    fn an_update_not_tried_says_how_many_failed_before_it() {
        let one = Reasons::one(Reason::NotUpdated { max_failures: 1 });
        assert_eq!(
            serde_json::to_value(&one).ok(),
            Some("not updated: stopped after 1 failed update (--max-failures)".into())
        );
        assert_eq!(
            Reason::NotUpdated { max_failures: 3 }.to_string(),
            "not updated: stopped after 3 failed updates (--max-failures)"
        );
    }
}
