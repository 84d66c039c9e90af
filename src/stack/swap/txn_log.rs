//! An update's steps as it writes them to the shared state (issue 48), each before it is taken, and the checkpoint its rollback puts back; `update/transaction.rs` ends an update another hal left unfinished.

use std::path::PathBuf;
use std::time::Duration;

use crate::stack::env::Env;
use crate::stack::swap::gate::Swap;
use crate::stack::swap::stop_at::pause_if_asked;
use crate::state::Store;
use crate::state::txn::{CheckpointRecord, TxnRecord, TxnStep, TxnSwap};
use crate::util::timefmt::Stamp;

/// One update's transaction: where it writes its steps.
#[derive(Clone, Debug)]
pub(crate) struct Txn {
    store: Store,
    name: String,
}

/// A checkpoint a rollback puts back before the previous images start.
#[derive(Clone, Debug)]
pub(crate) struct Data {
    /// The state directory (checkpoints live in its `checkpoints/`).
    pub state: PathBuf,
    pub record: CheckpointRecord,
}

impl Txn {
    /// Writes the transaction's first step (`pulled`: the new images are
    /// here, nothing else changed yet), with what it moves.
    pub(crate) async fn begin(
        env: Env<'_>,
        name: &str,
        swaps: &[Swap],
        checkpoint: bool,
        timeout: Duration,
    ) -> anyhow::Result<Txn> {
        let record = TxnRecord {
            step: TxnStep::Pulled,
            since: Stamp::now().whole_milli(),
            pid: std::process::id(),
            swaps: swaps
                .iter()
                .map(|w| TxnSwap {
                    service: w.service.clone(),
                    image: w.image.clone(),
                    previous: w.previous.clone(),
                    new: w.new.clone(),
                })
                .collect(),
            checkpoint,
            timeout_ms: u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX),
        };
        let key = name.to_string();
        env.store
            .update(move |s| s.modules.entry(key).or_default().txn = Some(record))
            .await?;
        pause_if_asked(TxnStep::Pulled.as_str()).await;
        Ok(Txn {
            store: env.store.clone(),
            name: name.to_string(),
        })
    }

    /// Writes `step` before it is taken (with the checkpoint just completed, if any).
    pub(crate) async fn step(
        &self,
        step: TxnStep,
        checkpoint: Option<CheckpointRecord>,
    ) -> anyhow::Result<()> {
        let key = self.name.clone();
        self.store
            .update(move |s| {
                let rec = s.modules.entry(key).or_default();
                if let Some(t) = &mut rec.txn {
                    t.step = step;
                }
                if checkpoint.is_some() {
                    rec.checkpoint = checkpoint;
                }
            })
            .await?;
        pause_if_asked(step.as_str()).await;
        Ok(())
    }

    /// The module whose update it is.
    pub(crate) fn name(&self) -> &str {
        &self.name
    }
}
