//! A stack's expected set (what compose resolved for its files, less what a person stopped) against the containers there are: which services are missing, and the module state that makes (pure).

use crate::module::ServiceImage;
use crate::module::reason::{Reason, Reasons};
use crate::module::status::{MissingService, State, Verdict};
use crate::stack::look::assess::{ContainerFacts, assess};

/// What a stack module is expected to run.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Expected<'a> {
    /// What compose resolved the last time hal brought the module up: the
    /// services of the active profiles, each with its replica count.
    pub services: &'a [ServiceImage],
    /// Services a person stopped alone (`hal stop MODULE/SERVICE`): expected down.
    pub stopped: &'a [String],
}

/// A stack's state against its expected set.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Judged {
    pub state: State,
    pub reason: Reasons,
    pub missing: Vec<MissingService>,
}

/// The services of `expected` with fewer containers than compose runs for
/// them (one-off `compose run` containers do not count).
pub(crate) fn missing(
    expected: Expected<'_>,
    containers: &[&ContainerFacts],
) -> Vec<MissingService> {
    expected
        .services
        .iter()
        .filter(|s| !expected.stopped.contains(&s.service))
        .filter_map(|s| {
            let have = containers
                .iter()
                .filter(|c| !c.oneoff && c.service == s.service)
                .count();
            let have = u32::try_from(have).unwrap_or(u32::MAX);
            (have < s.replicas).then(|| MissingService {
                name: s.service.clone(),
                expected: s.replicas,
                containers: have,
            })
        })
        .collect()
}

/// The module state of `containers` against `expected` (`None`: nothing is
/// known of the files, so the containers alone decide). A service with fewer
/// containers than expected makes the module `degraded`, or `failed` when
/// nothing of it runs; the reason names it first. While the module is
/// `wanted_up`, so does a container its restart policy keeps running that is
/// not running ([`Verdict::Halted`]): not done, whatever its exit code.
/// Containers of a service a person stopped do not count.
pub(crate) fn judge(
    containers: &[&ContainerFacts],
    expected: Option<Expected<'_>>,
    wanted_up: bool,
) -> Judged {
    let counted: Vec<&ContainerFacts> = match expected {
        Some(e) => containers
            .iter()
            .copied()
            .filter(|c| !e.stopped.contains(&c.service))
            .collect(),
        None => containers.to_vec(),
    };
    let (mut state, mut reason) = assess(&counted);
    let halted = counted
        .iter()
        .find(|c| !c.oneoff && c.verdict() == Verdict::Halted);
    if let (Some(c), true, State::Inactive) = (halted, wanted_up, state) {
        // Nothing of it runs (else it would be `degraded` already).
        state = State::Failed;
        reason = Some(Reason::Container(c.trouble()));
    }
    let missing = expected.map_or_else(Vec::new, |e| missing(e, containers));
    if missing.is_empty() {
        let reason = match (state, expected) {
            (State::Active, Some(e)) if !e.stopped.is_empty() => {
                Some(Reason::StoppedByRequest(e.stopped.to_vec()))
            }
            _ => reason,
        };
        return Judged {
            state,
            reason: reason.into(),
            missing,
        };
    }
    let runs = counted.iter().any(|c| {
        !c.oneoff
            && matches!(
                c.verdict(),
                Verdict::Up | Verdict::Starting | Verdict::Unhealthy
            )
    });
    let state = if state == State::Failed || !runs {
        State::Failed
    } else {
        State::Degraded
    };
    let mut why = Reasons::one(Reason::Missing(missing.clone()));
    if let Some(r) = reason.filter(|r| *r != Reason::NoContainers) {
        why.then(r);
    }
    Judged {
        state,
        reason: why,
        missing,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::module::run_state::{ContainerRun, Health, RestartPolicy};

    fn svc(name: &str, replicas: u32) -> ServiceImage {
        ServiceImage {
            service: name.into(),
            image: None,
            build: false,
            gated: false,
            replicas,
            after: Vec::new(),
        }
    }

    fn c(service: &str, number: u32, status: &str) -> ContainerFacts {
        ContainerFacts {
            id: format!("id-{service}-{number}"),
            service: service.into(),
            number,
            run: ContainerRun::from_word(status),
            restart: RestartPolicy::Always,
            ..Default::default()
        }
    }

    fn judge_of(cs: &[ContainerFacts], services: &[ServiceImage], stopped: &[String]) -> Judged {
        let refs: Vec<&ContainerFacts> = cs.iter().collect();
        judge(&refs, Some(Expected { services, stopped }), true)
    }

    #[test]
    fn a_service_without_container_degrades_the_module_and_is_named() {
        let services = [svc("web", 1), svc("db", 1)];
        let j = judge_of(&[c("web", 1, "running")], &services, &[]);
        assert_eq!(j.state, State::Degraded);
        assert_eq!(j.reason.text().as_deref(), Some("db: no container"));
        assert_eq!(j.missing.len(), 1);
        assert_eq!(j.missing[0].name, "db");
    }

    #[test]
    fn nothing_running_is_failed() {
        let services = [svc("web", 1), svc("db", 1)];
        let j = judge_of(&[], &services, &[]);
        assert_eq!(j.state, State::Failed);
        assert_eq!(
            j.reason.text().as_deref(),
            Some("web: no container, db: no container")
        );
        let mut stopped = c("web", 1, "exited");
        stopped.exit_code = Some(0);
        assert_eq!(judge_of(&[stopped], &services, &[]).state, State::Failed);
    }

    #[test]
    fn replicas_count_and_a_finished_job_is_done() {
        let services = [svc("web", 3), svc("migrate", 1)];
        let mut job = c("migrate", 1, "exited");
        job.restart = RestartPolicy::No;
        job.exit_code = Some(0);
        let two = [c("web", 1, "running"), c("web", 2, "running"), job.clone()];
        let j = judge_of(&two, &services, &[]);
        assert_eq!(j.state, State::Degraded);
        assert_eq!(j.reason.text().as_deref(), Some("web: 2 of 3 containers"));
        let mut three = two.to_vec();
        three.push(c("web", 3, "running"));
        assert_eq!(judge_of(&three, &services, &[]).state, State::Active);
        // A service that should run is not done, whatever its exit code.
        let mut daemon = job;
        daemon.restart = RestartPolicy::Always;
        three[2] = daemon;
        assert_eq!(judge_of(&three, &services, &[]).state, State::Degraded);
    }

    #[test]
    fn a_service_stopped_by_request_is_expected_down() {
        let services = [svc("web", 1), svc("worker", 1)];
        let stopped = ["worker".to_string()];
        let j = judge_of(&[c("web", 1, "running")], &services, &stopped);
        assert_eq!(j.state, State::Active);
        assert_eq!(
            j.reason.text().as_deref(),
            Some("worker: stopped by request")
        );
        assert!(j.missing.is_empty());
        let mut exited = c("worker", 1, "exited");
        exited.exit_code = Some(137);
        let both = [c("web", 1, "running"), exited];
        assert_eq!(judge_of(&both, &services, &stopped).state, State::Active);
    }

    #[test]
    fn a_container_stopped_behind_hals_back_fails_only_a_module_wanted_up() {
        let services = [svc("web", 1), svc("db", 1)];
        let mut web = c("web", 1, "exited");
        web.exit_code = Some(137);
        let db = c("db", 1, "running");
        let j = judge_of(&[web.clone(), db], &services, &[]);
        assert_eq!(j.state, State::Degraded);
        let why = "service web exited with code 137 and the engine is not restarting it";
        assert_eq!(j.reason.text().as_deref(), Some(why));
        let mut db = c("db", 1, "exited");
        db.exit_code = Some(0);
        db.restart = RestartPolicy::UnlessStopped;
        let j = judge_of(&[web.clone(), db.clone()], &services, &[]);
        assert_eq!(j.state, State::Failed);
        assert_eq!(j.reason.text().as_deref(), Some(why));
        // Files unknown: still failed while wanted up.
        let refs = [&web, &db];
        assert_eq!(judge(&refs, None, true).state, State::Failed);
        // Not wanted up (stopped by request, never started by hal): stopped.
        let j = judge(&refs, None, false);
        assert_eq!(j.state, State::Inactive);
        assert_eq!(j.reason.text().as_deref(), Some("stopped"));
        // A service a person stopped is expected down, its policy whatever.
        let stopped = ["web".to_string()];
        let j = judge_of(&[web, c("db", 1, "running")], &services, &stopped);
        assert_eq!(j.state, State::Active);
    }

    #[test]
    fn unknown_files_leave_the_containers_to_decide() {
        let one = c("web", 1, "running");
        let j = judge(&[&one], None, true);
        assert_eq!(j.state, State::Active);
        assert!(j.missing.is_empty());
        let j = judge(&[], None, true);
        assert_eq!(j.state, State::Inactive);
        assert_eq!(j.reason.text().as_deref(), Some("no containers"));
    }

    #[test]
    fn a_missing_service_comes_before_another_problem() {
        let services = [svc("web", 1), svc("db", 1), svc("cache", 1)];
        let mut sick = c("cache", 1, "running");
        sick.health = Some(Health::Unhealthy);
        let j = judge_of(&[c("web", 1, "running"), sick], &services, &[]);
        assert_eq!(j.state, State::Degraded);
        assert_eq!(
            j.reason.text().as_deref(),
            Some("db: no container; service cache is unhealthy")
        );
    }
}
