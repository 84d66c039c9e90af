//! Whether a stack has a service a command names (`MODULE/SERVICE`): its containers answer first, compose's reading of its files second.

use std::path::Path;

use crate::docker::compose::Project;

/// Refuses a service the stack does not have (exit 4, naming the ones it
/// has). Its containers answer first (one list call); compose's reading of
/// the files (`config --services`) settles the rest. When neither can say
/// (no engine, a compose file compose refuses), the verb goes ahead and
/// meets the real problem itself.
pub(crate) async fn check_service(
    stacks: &crate::stack::env::Stacks,
    store: &crate::state::Store,
    name: &str,
    dir: &Path,
    service: &str,
) -> anyhow::Result<()> {
    let mut known: Vec<String> = Vec::new();
    if let Ok(engine) = stacks.engine().await
        && let Ok(list) = engine.compose_containers(Some(name)).await
    {
        for who in list.iter().filter_map(|c| c.identity.as_ref()) {
            if !who.oneoff && !known.contains(&who.service) {
                known.push(who.service.clone());
            }
        }
    }
    if known.iter().any(|s| s == service) {
        return Ok(());
    }
    let project = Project { name, dir };
    let from_files = match stacks.compose().await {
        Ok(compose) => compose.services(&project, stacks.endpoint()?).await.ok(),
        Err(_) => None,
    };
    let from_files = from_files.or_else(|| {
        // What compose said the last time hal started the stack.
        let (state, _) = store.read();
        let rec = state.modules.get(name)?;
        Some(
            rec.services
                .as_ref()?
                .iter()
                .map(|s| s.service.clone())
                .collect(),
        )
    });
    for s in from_files.into_iter().flatten() {
        if !known.contains(&s) {
            known.push(s);
        }
    }
    if known.is_empty() || known.iter().any(|s| s == service) {
        return Ok(());
    }
    known.sort();
    Err(crate::error::HalError::NoSuchService {
        module: name.to_string(),
        service: service.to_string(),
        known,
    }
    .into())
}
