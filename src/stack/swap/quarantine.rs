//! A rolled-back digest is not applied again: what a pull brought that a rollback put aside is pointed back at the running image before anything is recreated, and said; a rollback records what it put aside (`records.rs`'s `QuarantineRecord`).

use crate::docker::engine::Engine;
use crate::module::recorded_causes::RollbackCause;
use crate::module::warning::Warning;
use crate::stack::swap::gate::{Swap, digest_of_id};
use crate::state::Store;
use crate::state::records::QuarantineRecord;
use crate::util::timefmt::Stamp;

/// Each swap's new image as a digest in its reference's repository (what
/// a registry and `update --check` name), read before a rollback moves the
/// references back: `(service, image, digest)`.
pub(crate) async fn digests(engine: &Engine, swaps: &[Swap]) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    for w in swaps {
        if let Ok(Some(d)) = digest_of_id(engine, &w.new, &w.image).await {
            out.push((w.service.clone(), w.image.clone(), d));
        }
    }
    out
}

/// The records of a rollback at `at` for `why`, one per digest.
pub(crate) fn records(
    digests: Vec<(String, String, String)>,
    at: Stamp,
    why: &RollbackCause,
) -> Vec<QuarantineRecord> {
    digests
        .into_iter()
        .map(|(service, image, digest)| QuarantineRecord {
            service,
            image,
            digest,
            at,
            reason: why.clone(),
        })
        .collect()
}

/// The swaps a pull made, less those onto a quarantined digest (unless
/// `force`): each of those has its reference pointed back at the image the
/// service runs, so that nothing recreates it, and is said as a warning.
pub(crate) async fn hold_back(
    engine: &Engine,
    store: &Store,
    module: &str,
    swaps: Vec<Swap>,
    force: bool,
) -> anyhow::Result<(Vec<Swap>, Vec<Warning>)> {
    let (state, _) = store.read();
    let Some(rec) = state
        .modules
        .get(module)
        .filter(|r| !r.quarantine.is_empty())
    else {
        return Ok((swaps, Vec::new()));
    };
    if force {
        return Ok((swaps, Vec::new()));
    }
    let mut kept = Vec::new();
    let mut said = Vec::new();
    for w in swaps {
        let digest = digest_of_id(engine, &w.new, &w.image).await?;
        let Some(q) = digest.and_then(|d| rec.quarantine.quarantined(&w.service, &d)) else {
            kept.push(w);
            continue;
        };
        let (repo, tag) = crate::docker::image_ref::split_ref(&w.image);
        engine
            .tag(&w.previous, &repo, tag.as_deref().unwrap_or("latest"))
            .await?;
        said.push(held(q));
    }
    Ok((kept, said))
}

/// The warning a quarantined digest is said with.
pub(crate) fn held(q: &QuarantineRecord) -> Warning {
    Warning::Quarantined {
        service: q.service.clone(),
        digest: q.digest.clone(),
        at: q.at,
        reason: q.reason.clone(),
    }
}
