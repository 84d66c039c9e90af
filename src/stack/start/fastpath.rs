//! Starting an unchanged stack without compose: nothing to do when it is already up, the Engine API when it was only stopped.

use std::collections::BTreeMap;
use std::time::Duration;

use futures_util::future::join_all;

use crate::docker::engine::{Engine, Listed};
use crate::module::config::PullPolicy;
use crate::module::container_trouble::ContainerTrouble;
use crate::module::diagnosed::Detailed;
use crate::module::outcome::Outcome;
use crate::module::reason::Reasons;
use crate::module::recorded_causes::SeenCause;
use crate::module::run_state::{ContainerRun as S, Health};
use crate::module::status::{Detail, State, Verdict};
use crate::module::warning::Warning;
use crate::module::{Condition, Dependency, ServiceImage};
use crate::stack::look::assess::ContainerFacts;
use crate::stack::look::inspects::Inspects;
use crate::stack::look::{facts, node};
use crate::stack::start::pending::Start;
use crate::stack::start::{pull, start_order};

/// How often a dependency is looked at while a dependent waits for it.
const POLL: Duration = Duration::from_millis(250);

/// Starts the stack without compose when that is certainly what compose
/// would do, on the services remembered from the last compose run for the
/// same files (those of its one service alone, for `MODULE/SERVICE`) and its
/// containers as the start listed them; `None` means "go through compose".
/// With the outcome come the containers, for the caller's wait.
pub(super) async fn try_start(
    s: &Start<'_>,
    services: &[ServiceImage],
    list: &[Listed],
) -> anyhow::Result<Option<(Outcome, Vec<Listed>)>> {
    let only = s.stack.service;
    let main: Vec<&Listed> = list
        .iter()
        .filter(|c| !c.is_oneoff())
        .filter(|c| only.is_none() || c.service() == only)
        .collect();
    if main.is_empty() || !same_services(&main, services) {
        return Ok(None);
    }
    let all_up =
        main.iter().all(|c| c.state == Some(S::Running)) && all_verdicts_up(s, list).await?;
    let all_stopped = main
        .iter()
        .all(|c| matches!(c.state, Some(S::Exited | S::Created)));
    if !all_up && !all_stopped {
        return Ok(None);
    }
    // A tag moved to another image (`docker pull` or `build` by hand, no file
    // changed): compose recreates, so compose must run (issue 49).
    if s.plan.pull != PullPolicy::Always && !same_images(s.engine, &main, services).await? {
        return Ok(None);
    }
    // Under `always` the pull comes first; a new image means compose must recreate.
    let Some(warnings) = pull_first(s, services, &main).await? else {
        return Ok(None);
    };
    if all_up {
        let outcome = Outcome {
            state: State::Active,
            reason: Reasons::none(),
            warnings,
        };
        return Ok(Some((outcome, Vec::new())));
    }
    if !start_stopped(s, services, &main).await? {
        return Ok(None);
    }
    // The caller waits for active, with its `--jobs` slot given back.
    let outcome = Outcome {
        state: State::Starting,
        reason: Reasons::none(),
        warnings,
    };
    let containers = main.into_iter().cloned().collect();
    Ok(Some((outcome, containers)))
}

/// Under `always`, the pull before anything starts; `None` when it brought a
/// new image, which only compose recreates from.
async fn pull_first(
    s: &Start<'_>,
    services: &[ServiceImage],
    main: &[&Listed],
) -> anyhow::Result<Option<Vec<Warning>>> {
    if s.plan.pull != PullPolicy::Always {
        return Ok(Some(Vec::new()));
    }
    let ask = pull::Ask {
        module: s.stack.name,
        services,
        policy: s.plan.pull,
        timeout: s.plan.pull_timeout,
    };
    // Recorded even for one service, as it always was here.
    let warnings = pull::pull(s.env, s.engine, &ask, true).await?;
    if !same_images(s.engine, main, services).await? {
        return Ok(None);
    }
    Ok(Some(warnings))
}

/// Stopped (`docker compose stop`): starts the same containers in compose's
/// order, each after what it depends on, waiting where compose would;
/// `false` (nothing started) when compose must do it.
async fn start_stopped(
    s: &Start<'_>,
    services: &[ServiceImage],
    main: &[&Listed],
) -> anyhow::Result<bool> {
    let (engine, name) = (s.engine, s.stack.name);
    let deps = start_order::dependencies(main, services);
    let waits_on = |service: &str| -> Vec<&Dependency> {
        deps.get(service)
            .into_iter()
            .flatten()
            .filter(|d| d.condition != Condition::ServiceStarted)
            .collect()
    };
    // A record from an older hal says a service waits, not for what: compose knows.
    if services
        .iter()
        .any(|s| s.gated && waits_on(&s.service).is_empty())
    {
        return Ok(false);
    }
    for c in start_order::containers(main, &deps) {
        for d in c.service().map(waits_on).unwrap_or_default() {
            let of_dep: Vec<Listed> = main
                .iter()
                .filter(|x| x.service() == Some(d.service.as_str()))
                .map(|x| (*x).clone())
                .collect();
            if !of_dep.is_empty() {
                s.env
                    .progress
                    .step(name, &format!("waiting for {}", d.service));
                ready(engine, d.condition, of_dep).await?;
            }
        }
        engine.start_container(&c.id).await?;
    }
    Ok(true)
}

/// Waits until every container of a dependency meets `condition`, as compose
/// does before it starts a dependent; fails when it never will. The start's
/// timeout bounds the wait (the caller's).
async fn ready(engine: &Engine, condition: Condition, of_dep: Vec<Listed>) -> anyhow::Result<()> {
    loop {
        let facts = facts::read(engine, of_dep.clone()).await?;
        let mut all = true;
        for f in &facts {
            match met(f, condition) {
                Met::Yes => {}
                Met::Not => all = false,
                Met::Never(trouble) => {
                    return Err(Detailed {
                        summary: format!("did not start: a dependency failed: {trouble}"),
                        details: Vec::new(),
                        seen: vec![SeenCause::Container(trouble)],
                    }
                    .into());
                }
                Met::NoHealthcheck => {
                    let why = format!("service {} has no healthcheck", f.label());
                    return Err(Detailed {
                        summary: format!("did not start: a dependency failed: {why}"),
                        details: Vec::new(),
                        seen: Vec::new(),
                    }
                    .into());
                }
            }
        }
        if all {
            return Ok(());
        }
        tokio::time::sleep(POLL).await;
    }
}

/// Whether a dependency's container meets a dependent's condition.
#[derive(Debug, PartialEq, Eq)]
enum Met {
    Yes,
    Not,
    /// It never will (unhealthy, exited): what it is doing.
    Never(ContainerTrouble),
    /// It never will be healthy: it has no healthcheck.
    NoHealthcheck,
}

fn met(f: &ContainerFacts, condition: Condition) -> Met {
    let ended = matches!(f.run, Some(S::Exited | S::Dead));
    match condition {
        Condition::ServiceStarted => Met::Yes,
        Condition::ServiceHealthy => match f.health {
            Some(Health::Healthy) if !ended => Met::Yes,
            _ if ended || f.verdict() == Verdict::Unhealthy => Met::Never(f.trouble()),
            None if f.run == Some(S::Running) => Met::NoHealthcheck,
            _ => Met::Not,
        },
        Condition::ServiceCompletedSuccessfully if ended => {
            if f.exit_code == Some(0) {
                Met::Yes
            } else {
                Met::Never(f.trouble())
            }
        }
        Condition::ServiceCompletedSuccessfully => Met::Not,
    }
}

/// Whether every container runs the image its service's reference names now
/// (after a pull); a service built from source is never compared. Each
/// reference is inspected once, all of them at once: a no-op start pays one
/// engine round trip here, not one per service.
async fn same_images(
    engine: &Engine,
    main: &[&Listed],
    services: &[ServiceImage],
) -> anyhow::Result<bool> {
    let mut wanted: Vec<(&Listed, Option<&str>)> = Vec::with_capacity(main.len());
    for c in main {
        let Some(s) = services
            .iter()
            .find(|s| c.service() == Some(s.service.as_str()))
        else {
            return Ok(false);
        };
        wanted.push((c, s.image.as_deref().filter(|_| !s.build)));
    }
    let mut refs: Vec<&str> = wanted.iter().filter_map(|(_, r)| *r).collect();
    refs.sort_unstable();
    refs.dedup();
    let ids = join_all(refs.iter().map(|r| engine.image_id(r))).await;
    let mut now: BTreeMap<&str, Option<String>> = BTreeMap::new();
    for (r, id) in refs.into_iter().zip(ids) {
        now.insert(r, id?);
    }
    Ok(wanted
        .iter()
        .all(|(c, r)| r.is_none_or(|r| now.get(r).is_some_and(|id| *id == c.image_id))))
}

/// Every service has as many containers as its replicas (compose creates a
/// missing one, issue 49) and no container belongs to an unknown service.
fn same_services(main: &[&Listed], services: &[ServiceImage]) -> bool {
    services.iter().all(|s| {
        let n = main
            .iter()
            .filter(|c| c.service() == Some(s.service.as_str()))
            .count();
        n == s.replicas as usize
    }) && main.iter().all(|c| {
        services
            .iter()
            .any(|s| c.service() == Some(s.service.as_str()))
    })
}

/// Whether every container of the module (or of its one service) is up:
/// running for more than a moment, healthy where it has a healthcheck. The
/// health is the engine's own field (the list's, else an inspect's, through
/// what hal remembers of each run), the same verdict `status` gives.
async fn all_verdicts_up(s: &Start<'_>, list: &[Listed]) -> anyhow::Result<bool> {
    let (name, only) = (s.stack.name, s.stack.service);
    let facts = node::facts_of_listed(
        s.engine,
        s.env.store,
        &[name],
        Detail::Settled,
        list.to_vec(),
        &Inspects::default(),
    )
    .await?;
    Ok(facts
        .containers
        .get(name)
        .into_iter()
        .flatten()
        .filter(|f| !f.oneoff && only.is_none_or(|s| f.service == s))
        .all(|f| f.verdict() == Verdict::Up))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(status: &str, health: Option<&str>, exit: Option<i64>) -> ContainerFacts {
        ContainerFacts {
            service: "db".into(),
            number: 1,
            run: S::from_word(status),
            health: health.and_then(Health::from_word),
            exit_code: exit,
            ..ContainerFacts::default()
        }
    }

    #[test]
    fn a_dependent_waits_for_health_or_completion_as_compose_does() {
        use Condition::*;
        let healthy = facts("running", Some("healthy"), None);
        let starting = facts("running", Some("starting"), None);
        assert_eq!(met(&healthy, ServiceHealthy), Met::Yes);
        assert_eq!(met(&starting, ServiceHealthy), Met::Not);
        assert_eq!(met(&starting, ServiceStarted), Met::Yes);
        assert!(matches!(
            met(&facts("running", Some("unhealthy"), None), ServiceHealthy),
            Met::Never(_)
        ));
        assert!(matches!(
            met(&facts("running", None, None), ServiceHealthy),
            Met::NoHealthcheck
        ));
        assert_eq!(
            met(&facts("running", None, None), ServiceCompletedSuccessfully),
            Met::Not
        );
        assert_eq!(
            met(
                &facts("exited", None, Some(0)),
                ServiceCompletedSuccessfully
            ),
            Met::Yes
        );
        assert!(matches!(
            met(
                &facts("exited", None, Some(3)),
                ServiceCompletedSuccessfully
            ),
            Met::Never(_)
        ));
    }
}
