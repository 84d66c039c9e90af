//! What the Engine API is asked about images for an update: an image's id and repository digests, the registry's digest of a reference (no pull), and hal's own tags put on.

use anyhow::Context;
use bollard::query_parameters::TagImageOptions;

use super::Engine;
use crate::docker::credentials::RegistryAuth;

/// A local image: its id and the `repo@sha256:…` digests it was pulled as.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct ImageFacts {
    pub id: String,
    pub repo_digests: Vec<String>,
}

impl Engine {
    /// The local image a reference (or an image id) names, or `None` when it is absent.
    pub(crate) async fn image_facts(&self, image: &str) -> anyhow::Result<Option<ImageFacts>> {
        match self.api.inspect_image(image).await {
            Ok(i) => Ok(i.id.map(|id| ImageFacts {
                id,
                repo_digests: i.repo_digests.unwrap_or_default(),
            })),
            Err(bollard::errors::Error::DockerResponseServerError {
                status_code: 404, ..
            }) => Ok(None),
            Err(e) => Err(anyhow::Error::from(self.fail(e)))
                .with_context(|| format!("inspect image {image}")),
        }
    }

    /// The registry's digest of a reference now (`GET /distribution/REF/json`,
    /// what `docker manifest inspect` asks): nothing is pulled.
    pub(crate) async fn registry_digest(
        &self,
        image: &str,
        credentials: Option<RegistryAuth>,
    ) -> anyhow::Result<String> {
        let answer = self
            .api
            .inspect_registry_image(image, credentials.map(super::model::credentials))
            .await
            .map_err(|e| anyhow::Error::from(self.fail(e)))
            .with_context(|| format!("ask the registry about {image}"))?;
        answer
            .descriptor
            .digest
            .with_context(|| format!("the registry gave no digest for {image}"))
    }

    /// Points `repo:tag` at an image (by id or reference), as `docker tag` does;
    /// a tag already there moves.
    pub(crate) async fn tag(&self, image: &str, repo: &str, tag: &str) -> anyhow::Result<()> {
        let options = TagImageOptions {
            repo: Some(repo.to_string()),
            tag: Some(tag.to_string()),
        };
        self.api
            .tag_image(image, Some(options))
            .await
            .map_err(|e| anyhow::Error::from(self.fail(e)))
            .with_context(|| format!("tag {image} as {repo}:{tag}"))
    }
}
