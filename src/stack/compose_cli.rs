//! The compose CLI as doctor asks it: which one answers, with its version, and whether it accepts a module's compose files (`config -q`), with typed answers; the handle that runs it stays inside `stack/`.

use std::path::Path;
use std::time::Duration;

use crate::docker::compose::{Flavor, Project};
use crate::error::OneLine;
use crate::stack::env::Stacks;

/// The compose CLI the run uses, as doctor shows it.
#[derive(Clone, Debug)]
pub(crate) struct ComposeFound {
    /// How messages name it: `docker compose`, `docker-compose`, or what `HAL_COMPOSE` said.
    pub label: String,
    /// The version it states.
    pub version: String,
    /// Its generation: `v1` or `v2`.
    pub generation: &'static str,
}

/// What `compose config -q` said of one module's compose files.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum ConfigVerdict {
    /// Compose accepts them.
    Accepted,
    /// Not asked: no endpoint (the engine's check says why; compose would not
    /// run) or no compose (its own check says why).
    NotAsked,
    /// Compose rejects them, in its words.
    Rejected(String),
    /// Compose gave no answer within the limit.
    Silent,
}

impl Stacks {
    /// Which compose CLI answers, with its version (found once per run).
    pub(crate) async fn compose_found(&self) -> anyhow::Result<ComposeFound> {
        let c = self.compose().await?;
        let generation = match c.flavor {
            Flavor::V1 => "v1",
            Flavor::V2 => "v2",
        };
        Ok(ComposeFound {
            label: c.display(),
            version: c.version,
            generation,
        })
    }

    /// `compose config -q` on one module (its project `name`, run in `dir`),
    /// given at most `limit` to answer.
    pub(crate) async fn check_compose_config(
        &self,
        name: &str,
        dir: &Path,
        limit: Duration,
    ) -> ConfigVerdict {
        let (Ok(endpoint), Ok(compose)) = (self.endpoint(), self.compose().await) else {
            return ConfigVerdict::NotAsked;
        };
        let project = Project { name, dir };
        match tokio::time::timeout(limit, compose.run(&project, endpoint, &["config", "-q"])).await
        {
            Ok(Ok(_)) => ConfigVerdict::Accepted,
            Ok(Err(e)) => ConfigVerdict::Rejected(OneLine(&e).to_string()),
            Err(_) => ConfigVerdict::Silent,
        }
    }
}
