//! The running containers of the whole engine, compose's or not: who holds a host port now (`hal plan` and `start` name a port another container publishes before anything starts).

use anyhow::Context;

use super::{Engine, Listed, answers};

impl Engine {
    /// Every running container (one list call, no filter): those that hold
    /// host ports, whoever made them.
    pub(crate) async fn running_containers(&self) -> anyhow::Result<Vec<Listed>> {
        let wire = &self.conn.wire;
        let list = self
            .read::<Vec<answers::Summary>>(wire, "/containers/json")
            .await
            .map_err(anyhow::Error::from)
            .context("list containers")?;
        Ok(list
            .unwrap_or_default()
            .into_iter()
            .map(answers::Summary::listed)
            .collect())
    }
}
