//! A start bounded by its timeout from end to end (pull, compose, the wait for `active`), and what it says when the time is up.

use std::collections::BTreeSet;
use std::future::Future;
use std::time::{Duration, Instant};

use crate::docker::engine::{Engine, Listed};
use crate::docker::labels;
use crate::module::diagnosed::Detailed;
use crate::module::recorded_causes::SeenCause;
use crate::module::run_state::{ContainerRun, Health};
use crate::module::status::Verdict;
use crate::stack::look::assess::ContainerFacts;
use crate::stack::look::facts;

/// Log lines shown for a service that did not come up.
const DIAG_LINES: u64 = 5;

/// When a start must be over, and the timeout that set it (for messages).
#[derive(Copy, Clone, Debug)]
pub(crate) struct Bound {
    pub timeout: Duration,
    pub deadline: Instant,
}

impl Bound {
    /// A start that may take `timeout` from now.
    pub(crate) fn from_now(timeout: Duration) -> Bound {
        Bound {
            timeout,
            deadline: Instant::now() + timeout,
        }
    }

    /// Whether the time is up.
    pub(crate) fn passed(&self) -> bool {
        Instant::now() >= self.deadline
    }

    /// The time left (zero once it is up).
    pub(crate) fn left(&self) -> Duration {
        self.deadline.saturating_duration_since(Instant::now())
    }

    /// Runs `work` until the deadline. Past it, `work` is dropped (a compose
    /// child is killed with it; what it made stays) and the error names what
    /// the start was waiting for, as the engine sees the project now.
    pub(crate) async fn run<T>(
        &self,
        engine: &Engine,
        project: &str,
        service: Option<&str>,
        work: impl Future<Output = anyhow::Result<T>>,
    ) -> anyhow::Result<T> {
        match tokio::time::timeout_at(self.deadline.into(), work).await {
            Ok(done) => done,
            Err(_) => Err(self.timed_out(engine, project, service).await),
        }
    }

    /// `not active after 10s: waiting for db: service db is starting (health: starting)`,
    /// with the state, health and last log lines of each service not up.
    async fn timed_out(
        &self,
        engine: &Engine,
        project: &str,
        service: Option<&str>,
    ) -> anyhow::Error {
        let after = crate::util::duration::format(self.timeout);
        let list = match engine.compose_containers(Some(project)).await {
            Ok(list) => list
                .into_iter()
                .filter(|c| service.is_none() || c.service() == service)
                .collect::<Vec<Listed>>(),
            Err(e) => {
                return Detailed {
                    summary: format!("not active after {after}"),
                    details: vec![format!("the engine could not say why: {e:#}")],
                    seen: Vec::new(),
                }
                .into();
            }
        };
        let facts = facts::read(engine, list.clone()).await.unwrap_or_default();
        let blocking = waited_for(&list, &facts);
        let summary = if blocking.is_empty() {
            format!("not active after {after}: compose had made no containers yet")
        } else {
            let mut names: Vec<String> = blocking.iter().map(|c| c.label()).collect();
            names.dedup();
            let why: Vec<String> = blocking.iter().map(|c| c.describe()).collect();
            format!(
                "not active after {after}: waiting for {}: {}",
                names.join(", "),
                why.join("; ")
            )
        };
        let details = diagnose(engine, &facts.iter().collect::<Vec<_>>()).await;
        let seen = blocking
            .iter()
            .map(|c| SeenCause::Container(c.trouble()))
            .collect();
        Detailed {
            summary,
            details,
            seen,
        }
        .into()
    }
}

/// The containers a start was still waiting for: those not up that a
/// container not yet running depends on (compose holds its dependents back
/// for them); when none is such, every container not up.
pub(crate) fn waited_for<'a>(
    list: &[Listed],
    facts: &'a [ContainerFacts],
) -> Vec<&'a ContainerFacts> {
    let not_up =
        |f: &&ContainerFacts| !f.oneoff && !matches!(f.verdict(), Verdict::Up | Verdict::Completed);
    let held: BTreeSet<String> = list
        .iter()
        .filter(|c| !c.is_running())
        .flat_map(|c| labels::depends_on(&c.labels))
        .map(|d| d.service)
        .collect();
    let dependencies: Vec<&ContainerFacts> = facts
        .iter()
        .filter(not_up)
        .filter(|f| held.contains(&f.service))
        .collect();
    if dependencies.is_empty() {
        facts.iter().filter(not_up).collect()
    } else {
        dependencies
    }
}

/// For each service that is not up: its state, exit code, health and last log lines.
pub(crate) async fn diagnose(engine: &Engine, containers: &[&ContainerFacts]) -> Vec<String> {
    let mut out = Vec::new();
    for c in containers.iter().filter(|c| !c.oneoff) {
        if matches!(c.verdict(), Verdict::Up | Verdict::Completed) {
            continue;
        }
        out.push(format!(
            "{}: state {}, exit code {}, health {}, {} restarts",
            c.label(),
            c.run.map_or("", ContainerRun::as_str),
            c.exit_code.map_or("-".to_string(), |x| x.to_string()),
            c.health.map_or("none", Health::as_str),
            c.restart_count
        ));
        for line in crate::stack::logs::this_run(engine, c, DIAG_LINES).await {
            out.push(format!("  {} | {line}", c.label()));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::module::run_state::ContainerRun as RunState;

    fn facts(service: &str, status: &str, health: Option<&str>) -> ContainerFacts {
        ContainerFacts {
            id: service.into(),
            service: service.into(),
            number: 1,
            run: ContainerRun::from_word(status),
            health: health.and_then(Health::from_word),
            ..ContainerFacts::default()
        }
    }

    #[test]
    fn a_start_waits_for_the_dependency_its_dependents_are_held_for() {
        let mut slow = Listed {
            id: "slow".into(),
            state: Some(RunState::Created),
            ..Listed::default()
        };
        slow.labels.insert(
            "com.docker.compose.depends_on".into(),
            "db:service_healthy:false".into(),
        );
        let db = Listed {
            id: "db".into(),
            state: Some(RunState::Running),
            ..Listed::default()
        };
        let all = [
            facts("db", "running", Some("starting")),
            facts("slow", "created", None),
        ];
        let waited: Vec<&str> = waited_for(&[slow, db.clone()], &all)
            .iter()
            .map(|c| c.service.as_str())
            .collect();
        assert_eq!(waited, ["db"]);
        // Nothing held back: every service not up is named.
        let waited = waited_for(&[db], &all);
        assert_eq!(waited.len(), 2);
    }
}
