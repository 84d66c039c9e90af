//! A named volume's place on the host, as an update's checkpoint reads it: its driver and `Mountpoint` (hal copies it from there, beside a local engine).

use anyhow::Context;

use super::Engine;

/// A volume as the engine reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct VolumeFacts {
    pub driver: String,
    pub mountpoint: String,
}

impl Engine {
    /// The named volume `name`, or `None` when the engine has none of that name.
    pub(crate) async fn volume(&self, name: &str) -> anyhow::Result<Option<VolumeFacts>> {
        match self.api.inspect_volume(name).await {
            Ok(v) => Ok(Some(VolumeFacts {
                driver: v.driver,
                mountpoint: v.mountpoint,
            })),
            Err(bollard::errors::Error::DockerResponseServerError {
                status_code: 404, ..
            }) => Ok(None),
            Err(e) => Err(anyhow::Error::from(self.fail(e)))
                .with_context(|| format!("inspect volume {name}")),
        }
    }
}
