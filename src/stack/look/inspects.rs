//! What the inspects of one snapshot of a project's containers said, kept while nothing has changed them: a stop's state read, its evidence and its ledger inspect each container once between them.

use std::collections::HashMap;
use std::sync::Mutex;

use crate::docker::engine::{Engine, Inspected};

/// Each container's inspect, as first asked of the engine (`None` inside:
/// the engine said it is gone). Held by a [`Snapshot`] of the list it
/// describes, and dropped with it: a list taken again starts with none.
///
/// [`Snapshot`]: crate::stack::look::identity::Snapshot
#[derive(Debug, Default)]
pub(crate) struct Inspects(Mutex<HashMap<String, Option<Inspected>>>);

impl Inspects {
    /// Container `id`'s inspect: what was said of it already, else the
    /// engine's answer, kept.
    pub(crate) async fn of(&self, engine: &Engine, id: &str) -> anyhow::Result<Option<Inspected>> {
        if let Some(said) = self.said(id) {
            return Ok(said);
        }
        let inspected = engine.inspect(id).await?;
        if let Ok(mut said) = self.0.lock() {
            said.insert(id.to_string(), inspected.clone());
        }
        Ok(inspected)
    }

    fn said(&self, id: &str) -> Option<Option<Inspected>> {
        self.0.lock().ok()?.get(id).cloned()
    }
}
