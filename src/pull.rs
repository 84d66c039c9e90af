//! Pull policy: which images a start pulls through the Engine API, and the fallback to a cached image.

use std::collections::HashMap;
use std::time::Duration;

use futures_util::StreamExt;

use crate::config::PullPolicy;
use crate::docker::Engine;
use crate::ui::Ui;

/// A pull that has not finished by then is abandoned (and treated as failed).
pub const PULL_TIMEOUT: Duration = Duration::from_secs(300);

/// One service's image, as compose resolves the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServiceImage {
    pub service: String,
    pub image: Option<String>,
    /// The service has `build:`: compose builds it, hal does not pull it.
    pub build: bool,
}

/// Reads services from `docker compose config --format json` (v2).
pub fn from_v2_json(text: &str) -> anyhow::Result<Vec<ServiceImage>> {
    let doc: serde_json::Value = serde_json::from_str(text)
        .map_err(|e| anyhow::anyhow!("compose config printed something that is not JSON: {e}"))?;
    let Some(services) = doc.get("services").and_then(|s| s.as_object()) else {
        return Ok(Vec::new());
    };
    Ok(services
        .iter()
        .map(|(name, s)| ServiceImage {
            service: name.clone(),
            image: s.get("image").and_then(|i| i.as_str()).map(str::to_string),
            build: s.get("build").is_some_and(|b| !b.is_null()),
        })
        .collect())
}

/// Reads services from `docker-compose config` (v1), whose YAML output is
/// normalised: services at two spaces, their keys at four.
pub fn from_v1_yaml(text: &str) -> Vec<ServiceImage> {
    let mut out: Vec<ServiceImage> = Vec::new();
    let mut in_services = false;
    for line in text.lines() {
        if !line.starts_with(' ') && !line.trim().is_empty() {
            in_services = line.trim_end() == "services:";
            continue;
        }
        if !in_services {
            continue;
        }
        let indent = line.len() - line.trim_start().len();
        let body = line.trim();
        if indent == 2 && body.ends_with(':') {
            out.push(ServiceImage {
                service: unquote(body.trim_end_matches(':')).to_string(),
                image: None,
                build: false,
            });
        } else if indent == 4
            && let Some(last) = out.last_mut()
        {
            if let Some(v) = body.strip_prefix("image:") {
                last.image = Some(unquote(v.trim()).to_string());
            } else if body.starts_with("build:") {
                last.build = true;
            }
        }
    }
    out
}

fn unquote(s: &str) -> &str {
    s.trim_matches(|c| c == '\'' || c == '"')
}

/// Splits `registry:5000/repo/name:tag` into repository and tag (`latest` by
/// default); a digest reference stays whole.
pub fn split_ref(image: &str) -> (String, Option<String>) {
    if image.contains('@') {
        return (image.to_string(), None);
    }
    let slash = image.rfind('/').map_or(0, |i| i + 1);
    match image[slash..].rfind(':') {
        Some(i) => (
            image[..slash + i].to_string(),
            Some(image[slash + i + 1..].to_string()),
        ),
        None => (image.to_string(), Some("latest".to_string())),
    }
}

/// Pulls what the policy asks for. Returns warnings (a pull failed but a cached
/// image is present); fails when an image is absent and cannot be pulled.
pub async fn pull(
    engine: &Engine,
    ui: &Ui,
    module: &str,
    services: &[ServiceImage],
    policy: PullPolicy,
) -> anyhow::Result<Vec<String>> {
    let mut warnings = Vec::new();
    if policy == PullPolicy::Never {
        return Ok(warnings);
    }
    let mut seen = std::collections::HashSet::new();
    for s in services.iter().filter(|s| !s.build) {
        let Some(image) = &s.image else { continue };
        if !seen.insert(image.clone()) {
            continue;
        }
        let present = engine.image_present(image).await?;
        if policy == PullPolicy::Missing && present {
            continue;
        }
        match pull_one(engine, ui, module, image).await {
            Ok(()) => {}
            Err(e) if present => warnings.push(format!(
                "pull failed, running cached image {image}: {}",
                crate::error::OneLine(&e)
            )),
            Err(e) => {
                return Err(e.context(format!(
                    "image {image} (service {}) is not present locally and could not be pulled",
                    s.service
                )));
            }
        }
    }
    Ok(warnings)
}

async fn pull_one(engine: &Engine, ui: &Ui, module: &str, image: &str) -> anyhow::Result<()> {
    let (repo, tag) = split_ref(image);
    let mut stream = engine.pull(&repo, tag.as_deref());
    let mut bars: HashMap<String, indicatif::ProgressBar> = HashMap::new();
    let work = async {
        while let Some(item) = stream.next().await {
            let info = item.map_err(|e| engine.fail(e))?;
            let (Some(id), Some(status)) = (info.id, info.status) else {
                continue;
            };
            let detail = info.progress_detail.unwrap_or_default();
            let bar = bars
                .entry(id.clone())
                .or_insert_with(|| ui.bar(0, format!("{module}: {id}")));
            bar.set_message(format!("{module}: {id} {}", status.to_lowercase()));
            if let (Some(cur), Some(total)) = (detail.current, detail.total) {
                bar.set_length(u64::try_from(total).unwrap_or(0));
                bar.set_position(u64::try_from(cur).unwrap_or(0));
            }
            if status.starts_with("Pull complete") || status.starts_with("Already exists") {
                bar.finish_and_clear();
            }
        }
        anyhow::Ok(())
    };
    let result = tokio::time::timeout(PULL_TIMEOUT, work).await;
    for b in bars.values() {
        b.finish_and_clear();
    }
    match result {
        Ok(r) => r,
        Err(_) => anyhow::bail!(
            "pull of {image} did not finish within {}s",
            PULL_TIMEOUT.as_secs()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refs_split_at_the_tag_not_the_port() {
        assert_eq!(
            split_ref("busybox"),
            ("busybox".into(), Some("latest".into()))
        );
        assert_eq!(
            split_ref("127.0.0.1:5000/hal/fixture:v1"),
            ("127.0.0.1:5000/hal/fixture".into(), Some("v1".into()))
        );
        assert_eq!(
            split_ref("127.0.0.1:5000/hal/fixture"),
            ("127.0.0.1:5000/hal/fixture".into(), Some("latest".into()))
        );
        assert_eq!(split_ref("a/b@sha256:00").1, None);
    }

    #[test]
    fn v2_json_and_v1_yaml_agree() {
        let json = r#"{"name":"p","services":{"web":{"image":"hal-fixture:latest"},"app":{"build":{"context":"."},"image":"p-app"}}}"#;
        let mut v2 = from_v2_json(json).unwrap();
        v2.sort_by(|a, b| a.service.cmp(&b.service));
        let yaml = "services:\n  app:\n    build:\n      context: /x\n    image: p-app\n  web:\n    image: hal-fixture:latest\n    restart: always\nversion: '3'\n";
        let v1 = from_v1_yaml(yaml);
        assert_eq!(v1, v2);
        assert!(v1[0].build && !v1[1].build);
    }
}
