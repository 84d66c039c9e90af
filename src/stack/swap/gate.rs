//! The gate's first half: each service's image before a pull and after it, so that what recreates a service onto a new image knows the image to go back to.

use crate::docker::engine::images::ImageFacts;
use crate::docker::engine::{Engine, Listed};
use crate::module::ServiceImage;

/// The engine, the images the stack's files name now (compose's answer),
/// and the project's containers as listed now: what an update compares.
pub(crate) async fn project_now(
    env: crate::stack::env::Env<'_>,
    project: &crate::docker::compose::Project<'_>,
) -> anyhow::Result<(Engine, Vec<ServiceImage>, Vec<Listed>)> {
    let engine = env.stacks.engine().await?;
    let compose = env.stacks.compose().await?;
    let images = compose.images(project, env.stacks.endpoint()?).await?;
    let list = engine.compose_containers(Some(project.name)).await?;
    Ok((engine, images, list))
}

/// Each service's image id before a pull.
pub(crate) struct Gate {
    before: Vec<(String, String, Option<String>)>,
}

impl Gate {
    /// Reads, before the pull, the image each service's containers run; where
    /// a service has none and `local` is set (a start), the image its
    /// reference names locally. `list` is the project's containers as just
    /// listed; an inspect per image.
    pub(crate) async fn before(
        engine: &Engine,
        list: &[Listed],
        images: &[ServiceImage],
        local: bool,
    ) -> anyhow::Result<Gate> {
        let mut before = Vec::new();
        for s in pullable(images) {
            let image = s.image.clone().unwrap_or_default();
            let running = list
                .iter()
                .filter(|c| !c.is_oneoff() && c.service() == Some(s.service.as_str()))
                .find_map(|c| c.image_id.clone());
            let id = match running {
                Some(id) => Some(id),
                None if local => engine.image_id(&image).await?,
                None => None,
            };
            before.push((s.service.clone(), image, id));
        }
        Ok(Gate { before })
    }

    /// After the pull: the services whose reference now names another image
    /// than the one they ran (a service with nothing before has nothing to go back to).
    pub(crate) async fn after(self, engine: &Engine) -> anyhow::Result<Vec<Swap>> {
        let mut swaps = Vec::new();
        for (service, image, previous) in self.before {
            let Some(previous) = previous else { continue };
            let Some(new) = engine.image_id(&image).await? else {
                continue;
            };
            if new != previous {
                swaps.push(Swap {
                    service,
                    image,
                    previous,
                    new,
                });
            }
        }
        Ok(swaps)
    }
}

/// How an image is named in a report: its digest in the reference's
/// repository (`sha256:…`), else any repository digest, else its id.
pub(crate) fn digest_of(facts: &ImageFacts, image: &str) -> String {
    let (repo, _) = crate::docker::image_ref::split_ref(image);
    let digest = |d: &String| d.split_once('@').map(|(_, x)| x.to_string());
    facts
        .repo_digests
        .iter()
        .find(|d| d.split_once('@').is_some_and(|(r, _)| r == repo))
        .or_else(|| facts.repo_digests.first())
        .and_then(digest)
        .unwrap_or_else(|| facts.id.clone())
}

/// [`digest_of`] for an image id (`None` when the image is gone).
pub(crate) async fn digest_of_id(
    engine: &Engine,
    id: &str,
    image: &str,
) -> anyhow::Result<Option<String>> {
    Ok(engine.image_facts(id).await?.map(|f| digest_of(&f, image)))
}

pub(crate) use crate::module::outcome::ImageChange;

/// A service moving from one local image to another: what a rollback undoes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Swap {
    pub service: String,
    pub image: String,
    /// The image id the service ran before.
    pub previous: String,
    /// The image id its reference names now.
    pub new: String,
}

/// The services whose image hal pulls and compares: an image, not built, by tag.
pub(crate) fn pullable(images: &[ServiceImage]) -> impl Iterator<Item = &ServiceImage> {
    images
        .iter()
        .filter(|s| !s.build && s.image.as_deref().is_some_and(|i| !i.contains('@')))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_image_is_named_by_its_digest_in_the_reference_s_repository() {
        let facts = ImageFacts {
            id: "sha256:1d".into(),
            repo_digests: vec![
                "other/x@sha256:aa".into(),
                "127.0.0.1:5000/hal/web@sha256:bb".into(),
            ],
        };
        assert_eq!(digest_of(&facts, "127.0.0.1:5000/hal/web:v2"), "sha256:bb");
        assert_eq!(digest_of(&facts, "busybox"), "sha256:aa");
        let built = ImageFacts {
            id: "sha256:1d".into(),
            repo_digests: Vec::new(),
        };
        assert_eq!(digest_of(&built, "web"), "sha256:1d");
    }

    #[test]
    fn only_tagged_images_hal_pulls_are_compared() {
        let s = |service: &str, image: Option<&str>, build: bool| ServiceImage {
            service: service.into(),
            image: image.map(str::to_string),
            build,
            gated: false,
            replicas: 1,
            after: Vec::new(),
        };
        let images = [
            s("web", Some("web:1"), false),
            s("built", Some("built:1"), true),
            s("pinned", Some("db@sha256:00"), false),
            s("none", None, false),
        ];
        let names: Vec<&str> = pullable(&images).map(|s| s.service.as_str()).collect();
        assert_eq!(names, ["web"]);
    }
}
