//! The JSON shape of an update's report: every verb's fields, and what the update found per service.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::module::status::State;
use crate::run::ReportJson;
use crate::run::update::UpdateReport;
use crate::stack::{ImageChange, RolledBack};

/// One module in `hal update --json`'s document.
#[derive(Serialize)]
pub(crate) struct UpdateJson {
    #[serde(flatten)]
    pub report: ReportJson,
    /// Only under `--check`: whether some service's registry has another image.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub update_available: Option<bool>,
    /// The update did not become active in time and was rolled back.
    pub rolled_back: bool,
    /// Not tried: `--max-failures` updates had failed before its turn.
    pub skipped: bool,
    /// Each changed service's image before (a `sha256:` digest, else the image id).
    pub from: BTreeMap<String, String>,
    /// Each changed service's image after (under `--check`: the registry's digest).
    pub to: BTreeMap<String, String>,
    /// Every service with a pulled image: its reference, `from`, `to` and `changed`.
    pub services: Vec<ImageChange>,
}

impl UpdateReport {
    pub(crate) fn to_json(&self) -> UpdateJson {
        let mut report = self.report.update_json();
        if let Err(e) = &self.report.result {
            // A rollback that came back is active on the old images; one that did not is failed.
            report.state = RolledBack::of(e).map(|r| match r.restored {
                true => State::Active,
                false => State::Failed,
            });
        }
        let changed = self.images.iter().filter(|i| i.changed);
        let pick = |f: fn(&ImageChange) -> &Option<String>| -> BTreeMap<String, String> {
            changed
                .clone()
                .filter_map(|i| f(i).clone().map(|d| (i.service.clone(), d)))
                .collect()
        };
        UpdateJson {
            from: pick(|i| &i.from),
            to: pick(|i| &i.to),
            report,
            update_available: self.available,
            rolled_back: self.rolled_back,
            skipped: self.skipped,
            services: self.images.clone(),
        }
    }
}
