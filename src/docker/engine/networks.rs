//! The engine's networks and its default address pools, as `doctor` reads
//! them to tell how much room is left for new networks.

use anyhow::Context;

use super::{AddressPool, Engine, NetworkFacts};
use crate::docker::labels;

impl Engine {
    /// Every network on the engine (one list call).
    pub(crate) async fn networks(&self) -> anyhow::Result<Vec<NetworkFacts>> {
        let list = self
            .api
            .list_networks(None::<bollard::query_parameters::ListNetworksOptions>)
            .await
            .map_err(|e| anyhow::Error::from(self.fail(e)))
            .context("list networks")?;
        Ok(list
            .into_iter()
            .map(|n| NetworkFacts {
                name: n.name.unwrap_or_default(),
                project: n.labels.and_then(|l| l.get(labels::PROJECT).cloned()),
                subnets: n
                    .ipam
                    .and_then(|i| i.config)
                    .unwrap_or_default()
                    .into_iter()
                    .filter_map(|c| c.subnet)
                    .collect(),
            })
            .collect())
    }

    /// The default address pools the engine reports (`docker info`), or `None`
    /// when it reports none (older engines, or the stock pools).
    pub(crate) async fn address_pools(&self) -> anyhow::Result<Option<Vec<AddressPool>>> {
        let info = self
            .api
            .info()
            .await
            .map_err(|e| anyhow::Error::from(self.fail(e)))
            .context("engine info")?;
        let pools: Vec<AddressPool> = info
            .default_address_pools
            .unwrap_or_default()
            .into_iter()
            .filter_map(|p| {
                Some(AddressPool {
                    base: p.base?,
                    size: u8::try_from(p.size?).ok()?,
                })
            })
            .collect();
        Ok((!pools.is_empty()).then_some(pools))
    }
}
