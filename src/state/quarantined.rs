//! A digest a rollback put aside, as hal's state keeps it, and the rules on a module's quarantine: pure data, no files.

use serde::{Deserialize, Serialize};

use crate::module::recorded_causes::RollbackCause;
use crate::util::stored;
use crate::util::timefmt::Stamp;

/// A digest a rollback put aside: one service's image that did not become
/// active (or broke what requires the module), not applied again.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct QuarantineRecord {
    pub service: String,
    /// The service's image reference (`registry/repo:tag`).
    pub image: String,
    /// The rolled-back image's digest in that repository (`sha256:…`).
    pub digest: String,
    /// When it was rolled back (written in Unix milliseconds).
    #[serde(with = "stored::unix_ms")]
    pub at: Stamp,
    /// Why: the rollback's cause.
    pub reason: RollbackCause,
}

/// A module's quarantine: at most one put-aside digest per service.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Quarantine(Vec<QuarantineRecord>);

impl Quarantine {
    /// Nothing is put aside.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Every digest put aside, one per service.
    pub fn iter(&self) -> std::slice::Iter<'_, QuarantineRecord> {
        self.0.iter()
    }

    /// The quarantine of `service` when it holds `digest`.
    pub fn quarantined(&self, service: &str, digest: &str) -> Option<&QuarantineRecord> {
        self.0
            .iter()
            .find(|q| q.service == service && q.digest == digest)
    }

    /// Puts `q` aside: the one quarantine of its service from now on.
    pub fn put(&mut self, q: QuarantineRecord) {
        self.0.retain(|x| x.service != q.service);
        self.0.push(q);
    }

    /// `service` runs another digest now (applied, gate passed): its quarantine is lifted.
    pub fn lift(&mut self, service: &str) {
        self.0.retain(|x| x.service != service);
    }
}

impl IntoIterator for Quarantine {
    type Item = QuarantineRecord;
    type IntoIter = std::vec::IntoIter<QuarantineRecord>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}
