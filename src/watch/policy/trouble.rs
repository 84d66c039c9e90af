//! Why a module that should be up needs repairing, and the smallest repair that fits: which containers, and how (pure).

use std::collections::BTreeMap;
use std::time::Duration;

use crate::module::fix::{Fix, How};
use crate::module::reason::Reason;
use crate::module::run_state::{Activity, ContainerRun, Health};
use crate::module::status::{
    ModuleStatus, ProviderFate, ServiceStatus, StaleNamespace, State, Verdict,
};
use crate::output::watch_log::{Cause, Escalation};
use crate::util::timefmt::Stamp;

/// What a repair touches: the smallest scope that works.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum RepairScope {
    /// These containers alone (their siblings keep their containers and uptime).
    Containers(Vec<Fix>),
    /// The whole module, as `hal module restart` does: nothing smaller fits
    /// (no containers, a host unit).
    Module,
    /// The whole module, because the containers' repair did not hold (why).
    Escalated(Escalation),
}

/// What is wrong with a module, and which containers to repair (none: the whole module).
pub(super) struct Trouble {
    pub why: Cause,
    pub fixes: Vec<Fix>,
}

impl Trouble {
    fn module(why: Cause) -> Trouble {
        Trouble {
            why,
            fixes: Vec::new(),
        }
    }
}

pub(super) fn host_trouble(s: &ModuleStatus) -> Option<Trouble> {
    let unit = s.services.first()?;
    matches!(
        unit.state.unit(),
        Some(Activity::Failed | Activity::Inactive)
    )
    .then(|| {
        Trouble::module(Cause::Unit {
            name: unit.name.clone(),
            state: unit.state.clone(),
        })
    })
}

/// `unhealthy`: (module, container) → since when; `grace`: how long that may last.
pub(super) fn stack_trouble(
    s: &ModuleStatus,
    unhealthy: &BTreeMap<(String, String), Stamp>,
    grace: Duration,
    now: Stamp,
) -> Option<Trouble> {
    if s.state == State::Active {
        return None;
    }
    if s.services.is_empty() {
        return Some(Trouble::module(Cause::Status(Reason::NoContainers)));
    }
    let svc = &s.services;
    if !s.missing.is_empty() {
        return Some(missing(s));
    }
    if let Some(t) = stale_namespace(svc) {
        return Some(t);
    }
    let failed: Vec<&ServiceStatus> = svc.iter().filter(|c| given_up(c)).collect();
    if let Some(c) = failed.first() {
        return Some(Trouble {
            why: and_more(why_of(c), failed.len()),
            fixes: failed.iter().map(|c| fix_of(c)).collect(),
        });
    }
    let mut overdue: Vec<(&ServiceStatus, Duration)> = Vec::new();
    for c in svc.iter().filter(|c| is_unhealthy(c)) {
        if let Some(since) = unhealthy.get(&(s.name.clone(), key_of(c)))
            && now.since(*since) >= grace
        {
            overdue.push((c, now.since(*since)));
        }
    }
    if let Some((c, for_)) = overdue.first() {
        let why = Cause::Unhealthy {
            service: c.name.clone(),
            for_: *for_,
        };
        return Some(Trouble {
            why: and_more(why, overdue.len()),
            fixes: overdue.iter().map(|(c, _)| fix_of(c)).collect(),
        });
    }
    if let Some(t) = back_after_failed_start(s) {
        return Some(t);
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
    let stopped: Vec<&ServiceStatus> = svc
        .iter()
        .filter(|c| {
            c.verdict == Some(Verdict::Stopped)
                && matches!(run(c), Some(ContainerRun::Exited | ContainerRun::Created))
        })
        .collect();
    let c = stopped.first()?;
    Some(Trouble {
        why: and_more(why_of(c), stopped.len()),
        fixes: stopped.iter().map(|c| fix_of(c)).collect(),
    })
}

/// Its last start failed (a repair that gave up, say), and Docker's restart
/// policy has brought every container back since: status calls it failed
/// until a start succeeds, so the running containers are restarted (which
/// also clears Docker's crash count, and the longer settle that comes with it).
/// A healthcheck still starting is waited for; an unhealthy one has its grace.
fn back_after_failed_start(s: &ModuleStatus) -> Option<Trouble> {
    let failed = s
        .reason
        .0
        .iter()
        .find(|r| matches!(r, Reason::Failed { .. }))?;
    let running = |c: &&ServiceStatus| run(c) == Some(ContainerRun::Running);
    let back = s.services.iter().all(|c| {
        c.verdict == Some(Verdict::Completed)
            || (running(&c) && !matches!(c.health, Some(Health::Starting | Health::Unhealthy)))
    });
    let again: Vec<&ServiceStatus> = s.services.iter().filter(running).collect();
    if s.state != State::Failed || !back || again.is_empty() {
        return None;
    }
    Some(Trouble {
        why: Cause::RunAgain(failed.clone()),
        fixes: again.iter().map(|c| fix_of(c)).collect(),
    })
}

/// Containers in a dead network namespace: restarted to join their provider's
/// new one (recreated when the provider is gone: compose finds its successor by
/// name). One whose provider is stopped is left alone: it has no namespace to
/// join until it runs again (its own module's repair, when it is wanted up; its
/// start then says `started again after it` here).
fn stale_namespace(svc: &[ServiceStatus]) -> Option<Trouble> {
    let stale: Vec<(&ServiceStatus, &StaleNamespace)> = svc
        .iter()
        .filter_map(|c| Some((c, c.stale.as_ref()?)))
        .filter(|(_, s)| s.fate != ProviderFate::Stopped)
        .collect();
    let (c, s) = stale.first()?;
    Some(Trouble {
        why: and_more(
            Cause::Status(Reason::StaleNamespace {
                service: c.name.clone(),
                stale: (*s).clone(),
            }),
            stale.len(),
        ),
        fixes: stale
            .iter()
            .map(|(c, s)| Fix {
                how: if s.fate == ProviderFate::Gone {
                    How::Recreate
                } else {
                    How::Restart
                },
                ..fix_of(c)
            })
            .collect(),
    })
}

/// A module whose requirement is back: its containers that Docker is still
/// restarting (in its back-off) or that are unhealthy, restarted now.
pub(super) fn restarting(s: &ModuleStatus) -> Option<Trouble> {
    if s.kind == crate::module::KindTag::Host {
        return host_trouble(s);
    }
    let slow: Vec<&ServiceStatus> = s
        .services
        .iter()
        .filter(|c| {
            matches!(
                c.verdict,
                Some(Verdict::Unhealthy | Verdict::Failed { terminal: false })
            )
        })
        .collect();
    let c = slow.first()?;
    Some(Trouble {
        why: and_more(Cause::RequirementBack(Box::new(why_of(c))), slow.len()),
        fixes: slow.iter().map(|c| fix_of(c)).collect(),
    })
}

/// Services of the expected set without (all their) containers: create
/// them, and start again what is stopped or gave up beside them (a stack
/// half taken down by hand).
fn missing(s: &ModuleStatus) -> Trouble {
    let mut fixes: Vec<Fix> = s
        .missing
        .iter()
        .map(|m| Fix {
            service: m.name.clone(),
            container: m.name.clone(),
            how: How::Create,
            because: None,
        })
        .collect();
    fixes.extend(
        s.services
            .iter()
            .filter(|c| {
                given_up(c)
                    || (c.verdict == Some(Verdict::Stopped)
                        && matches!(run(c), Some(ContainerRun::Exited | ContainerRun::Created)))
            })
            .map(fix_of),
    );
    Trouble {
        why: Cause::Status(Reason::Missing(s.missing.clone())),
        fixes,
    }
}

/// The smallest repair of one container: start it again if it only exited,
/// restart it if it runs (unhealthy) or loops, recreate it if it is dead.
fn fix_of(c: &ServiceStatus) -> Fix {
    let how = match run(c) {
        Some(ContainerRun::Exited | ContainerRun::Created) => How::Start,
        Some(ContainerRun::Dead) => How::Recreate,
        _ => How::Restart,
    };
    Fix {
        service: c.name.clone(),
        container: key_of(c),
        how,
        because: None,
    }
}

fn and_more(why: Cause, n: usize) -> Cause {
    match n {
        0 | 1 => why,
        of => Cause::AndMore {
            first: Box::new(why),
            of,
        },
    }
}

pub(super) fn is_unhealthy(c: &ServiceStatus) -> bool {
    c.verdict == Some(Verdict::Unhealthy)
}

/// Docker will not bring it back: a crash loop, dead, stopped behind hal's
/// back though its policy keeps it running, or exited with an error and no
/// restart coming (stopped by a kill, or by a policy Docker did not act on).
fn given_up(c: &ServiceStatus) -> bool {
    match c.verdict {
        Some(Verdict::Failed { terminal }) => terminal,
        Some(Verdict::Halted) => true,
        Some(Verdict::Stopped) => {
            run(c) == Some(ContainerRun::Exited) && c.exit_code.unwrap_or(0) != 0
        }
        _ => false,
    }
}

/// A container's run state (`None` for a unit).
fn run(c: &ServiceStatus) -> Option<ContainerRun> {
    c.state.container()
}

pub(super) fn key_of(c: &ServiceStatus) -> String {
    c.container.clone().unwrap_or_else(|| c.name.clone())
}

/// Why a container needs repairing: what `status` says of it.
fn why_of(c: &ServiceStatus) -> Cause {
    match &c.why {
        Some(said) => Cause::Container(said.clone()),
        None => Cause::NotUp {
            service: c.name.clone(),
            state: c.state.clone(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::module::KindTag;
    use crate::module::run_state::ServiceState;
    use crate::module::status::MissingService;

    fn svc(name: &str, state: &str, verdict: Verdict) -> ServiceStatus {
        ServiceStatus {
            name: name.into(),
            container: Some(format!("m-{name}-1")),
            state: ServiceState::Container(ContainerRun::from_word(state)),
            exit_code: Some(0),
            verdict: Some(verdict),
            ..Default::default()
        }
    }

    fn fixes(t: &Trouble) -> Vec<(String, How)> {
        t.fixes
            .iter()
            .map(|f| (f.container.clone(), f.how))
            .collect()
    }

    #[test]
    fn a_missing_service_is_created_and_what_stopped_beside_it_started() {
        let mut s = ModuleStatus::named("m", KindTag::Stack, State::Degraded);
        s.services = vec![svc("web", "running", Verdict::Up)];
        s.missing = vec![MissingService {
            name: "db".into(),
            expected: 1,
            containers: 0,
        }];
        let none = BTreeMap::new();
        let now = Stamp::from_secs(0);
        let t = stack_trouble(&s, &none, Duration::ZERO, now).unwrap();
        assert_eq!(t.why.to_string(), "db: no container");
        assert_eq!(fixes(&t), [("db".to_string(), How::Create)]);
        // Half taken down by hand: the missing made, the stopped started again.
        s.services.push(svc("cache", "exited", Verdict::Stopped));
        let t = stack_trouble(&s, &none, Duration::ZERO, now).unwrap();
        assert_eq!(
            fixes(&t),
            [
                ("db".to_string(), How::Create),
                ("m-cache-1".to_string(), How::Start)
            ]
        );
        // Nothing left at all: the whole module.
        s.services.clear();
        let t = stack_trouble(&s, &none, Duration::ZERO, now).unwrap();
        assert!(t.fixes.is_empty());
    }
}
