//! What the Engine API is asked to do to one container or network (start, restart,
//! stop, remove): the fast path's starts, the supervisor's repairs, and the stop's
//! fallback when compose's `down` fails.

use std::time::Duration;

use anyhow::Context;

use super::Engine;

impl Engine {
    /// Starts an existing container (used by the fast path).
    pub(crate) async fn start_container(&self, id: &str) -> anyhow::Result<()> {
        self.api
            .start_container(id, None::<bollard::query_parameters::StartContainerOptions>)
            .await
            .map_err(|e| anyhow::Error::from(self.fail(e)))
            .with_context(|| format!("start container {id}"))
    }

    /// Restarts a container as `docker restart` does (stop, then start; the
    /// container's own stop timeout unless `grace` is given): the supervisor's
    /// repair of one unhealthy or crash-looping container.
    pub(crate) async fn restart_container(
        &self,
        id: &str,
        grace: Option<Duration>,
    ) -> anyhow::Result<()> {
        let options = bollard::query_parameters::RestartContainerOptions {
            signal: None,
            t: grace.map(|g| i32::try_from(g.as_secs()).unwrap_or(i32::MAX)),
        };
        self.api
            .restart_container(id, Some(options))
            .await
            .map_err(|e| anyhow::Error::from(self.fail(e)))
            .with_context(|| format!("restart container {id}"))
    }

    /// Stops a container as `docker stop` does: its own stop timeout (compose's
    /// `stop_grace_period`) unless `grace` is given. One already gone is stopped.
    pub(crate) async fn stop_container(
        &self,
        id: &str,
        grace: Option<Duration>,
    ) -> anyhow::Result<()> {
        let options = bollard::query_parameters::StopContainerOptions {
            signal: None,
            t: grace.map(|g| i32::try_from(g.as_secs()).unwrap_or(i32::MAX)),
        };
        match self.api.stop_container(id, Some(options)).await {
            Ok(())
            | Err(bollard::errors::Error::DockerResponseServerError {
                status_code: 404, ..
            }) => Ok(()),
            Err(e) => Err(anyhow::Error::from(self.fail(e)))
                .with_context(|| format!("stop container {id}")),
        }
    }

    /// Removes a container, keeping its volumes (anonymous ones too, as `compose
    /// down` without `-v`). One already gone is removed.
    pub(crate) async fn remove_container(&self, id: &str) -> anyhow::Result<()> {
        let options = bollard::query_parameters::RemoveContainerOptions {
            v: false,
            force: true,
            link: false,
        };
        match self.api.remove_container(id, Some(options)).await {
            Ok(())
            | Err(bollard::errors::Error::DockerResponseServerError {
                status_code: 404, ..
            }) => Ok(()),
            Err(e) => Err(anyhow::Error::from(self.fail(e)))
                .with_context(|| format!("remove container {id}")),
        }
    }

    /// Removes a network by name or id; one already gone is removed.
    pub(crate) async fn remove_network(&self, name: &str) -> anyhow::Result<()> {
        match self.api.remove_network(name).await {
            Ok(())
            | Err(bollard::errors::Error::DockerResponseServerError {
                status_code: 404, ..
            }) => Ok(()),
            Err(e) => Err(anyhow::Error::from(self.fail(e)))
                .with_context(|| format!("remove network {name}")),
        }
    }
}
