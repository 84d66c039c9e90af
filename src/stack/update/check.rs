//! `update --check`: asks the registry for each image's digest now (the Engine API's distribution inspect) and compares it with what the service runs; nothing is pulled.

use crate::stack::env::Env;
use crate::stack::one_stack::Stack;
use crate::stack::swap::gate::{self, ImageChange};
use crate::state::records::CheckRecord;
use crate::util::timefmt::Stamp;

/// What a check found: each service's image, and the registries it could not ask.
pub(crate) struct Checked {
    /// Each service's image now and in its registry (`to` is `None` where
    /// the registry could not be asked).
    pub images: Vec<ImageChange>,
    /// Could not ask some registry: whether it has another image is not known.
    pub cannot: Option<CannotCheck>,
    /// The services whose registry's newer digest is quarantined (not an update).
    pub held: Vec<crate::module::warning::Warning>,
}

impl Checked {
    /// Whether some service has another image: `Some(true)` as soon as one
    /// has, `None` when none has and some registry could not be asked.
    pub(crate) fn available(&self) -> Option<bool> {
        let any = self.images.iter().any(|i| i.changed);
        (any || self.cannot.is_none()).then_some(any)
    }
}

/// `update --check` could not ask a registry: it cannot say "up to date"
/// (exit 1): `cannot check: could not ask the registry about IMAGE: why`.
#[derive(Debug)]
pub(crate) struct CannotCheck {
    /// Each image reference whose registry could not be asked, and why.
    pub unasked: Vec<(String, String)>,
}

impl std::fmt::Display for CannotCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("cannot check: ")?;
        for (n, (image, why)) in self.unasked.iter().enumerate() {
            let sep = if n == 0 { "" } else { "; " };
            write!(f, "{sep}could not ask the registry about {image}: {why}")?;
        }
        Ok(())
    }
}

impl std::error::Error for CannotCheck {}

/// Each service's image and whether the registry has another; a registry
/// that cannot be asked leaves that service's `to` unknown, and the check
/// says it could not check. The answer is remembered in hal's state.
pub(crate) async fn check_update(env: Env<'_>, stack: &Stack<'_>) -> anyhow::Result<Checked> {
    let (engine, images, list) = gate::project_now(env, &stack.project()).await?;
    let mut changes = Vec::new();
    let mut unasked = Vec::new();
    let mut held = Vec::new();
    let (state, _) = env.store.read();
    let record = state.modules.get(stack.name);
    env.progress.step(stack.name, "asking the registry");
    for s in gate::pullable(&images) {
        let image = s.image.clone().unwrap_or_default();
        let running = list
            .iter()
            .filter(|c| !c.is_oneoff() && c.service() == Some(s.service.as_str()))
            .find_map(|c| c.image_id.clone());
        let local = engine.image_facts(&image).await?;
        // What the service runs, else what its reference names here.
        let now = match &running {
            Some(id) => engine.image_facts(id).await?,
            None => local.clone(),
        };
        let credentials = crate::docker::credentials::for_image(&image).await?;
        let remote = match engine.registry_digest(&image, credentials).await {
            Ok(d) => Some(d),
            Err(e) => {
                unasked.push((image.clone(), beneath(&e)));
                None
            }
        };
        let pulled_not_applied = matches!((&running, &local), (Some(r), Some(l)) if *r != l.id);
        let mut newer = match (&remote, &now) {
            (Some(d), Some(f)) => !f.repo_digests.iter().any(|r| r.ends_with(&format!("@{d}"))),
            (Some(_), None) => true,
            (None, _) => false,
        };
        // A newer digest a rollback put aside is no update: `update` would not apply it.
        if newer
            && let Some(q) = remote
                .as_deref()
                .and_then(|d| record.and_then(|r| r.quarantine.quarantined(&s.service, d)))
        {
            newer = false;
            held.push(crate::stack::swap::quarantine::held(q));
        }
        changes.push(ImageChange {
            service: s.service.clone(),
            from: now.as_ref().map(|f| gate::digest_of(f, &image)),
            to: remote,
            image,
            changed: newer || pulled_not_applied,
        });
    }
    let cannot = (!unasked.is_empty()).then_some(CannotCheck { unasked });
    let record = CheckRecord {
        at: Stamp::now().whole_milli(),
        available: changes
            .iter()
            .filter(|c| c.changed)
            .map(|c| c.service.clone())
            .collect(),
        error: cannot.as_ref().map(ToString::to_string),
    };
    let name = stack.name.to_string();
    env.store
        .update(move |s| s.modules.entry(name).or_default().update_check = Some(record))
        .await?;
    Ok(Checked {
        images: changes,
        cannot,
        held,
    })
}

/// Why a registry could not be asked, without the "ask the registry about
/// IMAGE" the error begins with (the check names the image itself).
fn beneath(e: &anyhow::Error) -> String {
    let causes: Vec<String> = e.chain().skip(1).map(ToString::to_string).collect();
    match causes.is_empty() {
        true => crate::error::OneLine(e).to_string(),
        false => causes.join(": "),
    }
}
