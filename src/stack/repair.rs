//! The supervisor's smallest repairs of a stack: one container started again or restarted, one service recreated, and the dependents compose would restart with it; its siblings are never touched.

use crate::module::warning::Warning;
use std::collections::BTreeSet;
use std::time::Duration;

use crate::docker::compose::Fresh;
use crate::docker::engine::{Engine, Listed};
use crate::docker::labels::restarts_with;
use crate::module::fix::{Fix, How};
use crate::stack::env::Env;
use crate::stack::one_stack::Stack;
use crate::stack::start::Pending;

/// Every fix, then the containers of services that declare `depends_on: {X: {restart: true}}`
/// on a fixed service X: compose restarts those with their dependency, and so does hal.
pub(crate) async fn plan(
    engine: &Engine,
    module: &str,
    fixes: Vec<Fix>,
) -> anyhow::Result<Vec<Fix>> {
    let list = engine.compose_containers(Some(module)).await?;
    Ok(with_dependents(fixes, &list))
}

/// [`plan`] on a container list (pure).
pub(crate) fn with_dependents(mut fixes: Vec<Fix>, list: &[Listed]) -> Vec<Fix> {
    let mut seen: BTreeSet<String> = fixes.iter().map(|f| f.container.clone()).collect();
    // Dependents of dependents too, as compose's restart walks the graph.
    let mut i = 0;
    while i < fixes.len() {
        let dependency = fixes[i].service.clone();
        for c in list {
            let Some(who) = &c.identity else {
                continue;
            };
            if who.oneoff || c.name.is_empty() || seen.contains(&c.name) {
                continue;
            }
            if restarts_with(&c.labels).iter().any(|s| s == &dependency) {
                seen.insert(c.name.clone());
                fixes.push(Fix {
                    service: who.service.clone(),
                    container: c.name.clone(),
                    how: How::Restart,
                    because: Some(format!("depends on {dependency} with restart: true")),
                });
            }
        }
        i += 1;
    }
    fixes
}

/// Applies the fixes in order (dependencies before their dependents) and
/// returns the wait for the repaired containers alone to be up. A container
/// that cannot be started as it is (gone, or the engine refuses) is recreated
/// with `compose up -d --no-deps --force-recreate SERVICE`; the warnings say so.
pub(crate) async fn repair(
    env: Env<'_>,
    stack: &Stack<'_>,
    fixes: &[Fix],
    timeout: Duration,
) -> anyhow::Result<Pending> {
    let bound = crate::stack::bound::Bound::from_now(timeout);
    let name = stack.name;
    let engine = env.stacks.engine().await?;
    let mut warnings = Vec::new();
    let mut recreate: Vec<&str> = Vec::new();
    let mut create: Vec<&str> = Vec::new();
    for f in fixes {
        env.progress.step(name, &f.describe(false));
        let done = match f.how {
            How::Start => engine.start_container(&f.container).await,
            How::Restart => engine.restart_container(&f.container, None).await,
            How::Recreate => {
                recreate.push(&f.service);
                Ok(())
            }
            How::Create => {
                create.push(&f.service);
                Ok(())
            }
        };
        if let Err(e) = done {
            warnings.push(Warning::RepairFellBack {
                fix: f.describe(false),
                cause: Warning::cause(&e),
                service: f.service.clone(),
            });
            recreate.push(&f.service);
        }
    }
    if !recreate.is_empty() || !create.is_empty() {
        let compose = env.stacks.compose().await?;
        let endpoint = env.stacks.endpoint()?;
        let project = stack.project();
        // Missing containers first: what depends on them may need them.
        for service in create.iter().filter(|s| !recreate.contains(s)) {
            compose
                .up_service(&project, endpoint, service, Fresh::IfChanged)
                .await?;
        }
        for service in &recreate {
            crate::stack::evidence::keep(&engine, env.store, name, Some(service)).await?;
        }
        for service in &recreate {
            // The engine refused this container (dead, gone, or a start that
            // failed): compose must make a new one, not start it as it is.
            compose
                .up_service(&project, endpoint, service, Fresh::Always)
                .await?;
        }
    }
    let names: BTreeSet<&str> = fixes.iter().map(|f| f.container.as_str()).collect();
    let list = engine.compose_containers(Some(name)).await?;
    let containers: Vec<Listed> = list
        .into_iter()
        .filter(|c| {
            names.contains(c.name.as_str())
                || c.identity.as_ref().is_some_and(|who| {
                    let s = who.service.as_str();
                    !who.oneoff && (recreate.contains(&s) || create.contains(&s))
                })
        })
        .collect();
    Ok(Pending {
        engine,
        name: name.to_string(),
        service: None,
        bound,
        containers,
        warnings,
        store: Box::new(env.store.clone()),
        rollback: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn container(service: &str, depends: &str) -> Listed {
        let mut labels = HashMap::from([
            (crate::docker::labels::PROJECT.to_string(), "m".to_string()),
            (
                crate::docker::labels::SERVICE.to_string(),
                service.to_string(),
            ),
        ]);
        if !depends.is_empty() {
            labels.insert("com.docker.compose.depends_on".into(), depends.into());
        }
        Listed {
            name: format!("m-{service}-1"),
            identity: crate::docker::labels::Identity::of(&labels),
            labels,
            ..Default::default()
        }
    }

    fn fix(service: &str) -> Fix {
        Fix {
            service: service.into(),
            container: format!("m-{service}-1"),
            how: How::Start,
            because: None,
        }
    }

    #[test]
    fn dependents_with_restart_true_come_after_their_dependency() {
        let list = [
            container("db", ""),
            container("api", "db:service_healthy:true"),
            container("web", "api:service_started:true,db:service_started:false"),
            container("cron", "db:service_started:false"),
        ];
        let plan = with_dependents(vec![fix("db")], &list);
        let names: Vec<&str> = plan.iter().map(|f| f.container.as_str()).collect();
        assert_eq!(names, ["m-db-1", "m-api-1", "m-web-1"]);
        assert_eq!(plan[1].how, How::Restart);
        assert_eq!(
            plan[1].describe(true),
            "restarted container m-api-1 (depends on db with restart: true)"
        );
        // Nobody depends on web: it alone.
        assert_eq!(with_dependents(vec![fix("web")], &list).len(), 1);
    }
}
