//! An update as a transaction of image and data (issue 48): each step written to the shared state before it is taken, and an update that hal did not finish (killed, power lost) rolled back (or forward, past the gate) by the next hal that touches the module.

use std::path::PathBuf;
use std::time::Duration;

use crate::error::Detailed;
use crate::stack::env::Env;
use crate::stack::start::Stack;
use crate::stack::update::checkpoint;
use crate::stack::update::gate::Swap;
use crate::stack::update::rollback::{Rollback, RolledBack};
use crate::stack::update::stop_at::pause_if_asked;
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

/// What the next hal did with an update another hal left unfinished.
pub(crate) enum Unfinished {
    /// The gate had passed: the update is over, as it would have been.
    Finished(TxnStep),
    /// Put back on the previous images (and data, when the new ones may have written it).
    RolledBack(TxnStep, RolledBack),
}

/// Finds an update of `stack` that hal did not finish and ends it: past the
/// gate, forward; before, back onto the previous images, the data restored
/// from this update's checkpoint when the new images may have written it.
/// Called with the module's lock held: the hal that wrote it is gone.
pub(crate) async fn recover(env: Env<'_>, stack: &Stack<'_>) -> anyhow::Result<Option<Unfinished>> {
    let (file, _) = env.store.read();
    let Some(rec) = file.modules.get(stack.name) else {
        return Ok(None);
    };
    let Some(txn) = rec.txn.clone() else {
        return Ok(None);
    };
    checkpoint::drop_partial(env.store.dir(), stack.name);
    if txn.step == TxnStep::Passed {
        let key = stack.name.to_string();
        env.store
            .update(move |s| {
                if let Some(r) = s.modules.get_mut(&key) {
                    r.txn = None;
                    r.up_to_date();
                }
            })
            .await?;
        return Ok(Some(Unfinished::Finished(txn.step)));
    }
    let data = match (&rec.checkpoint, txn.checkpoint && txn.step.data_at_risk()) {
        (Some(record), true) => Some(Data {
            state: env.store.dir().to_path_buf(),
            record: record.clone(),
        }),
        _ => None,
    };
    let swaps: Vec<Swap> = txn
        .swaps
        .iter()
        .map(|w| Swap {
            service: w.service.clone(),
            image: w.image.clone(),
            previous: w.previous.clone(),
            new: w.new.clone(),
        })
        .collect();
    let timeout = Duration::from_millis(txn.timeout_ms);
    let whole = Stack {
        service: None,
        ..*stack
    };
    let mut r = Rollback::resume(env, &whole, swaps, timeout).await?;
    r.set_data(data, None);
    let engine = env.stacks.engine().await?;
    let failure = anyhow::Error::new(Detailed {
        summary: format!(
            "never finished: hal stopped after step {}",
            txn.step.as_str()
        ),
        details: Vec::new(),
    });
    let rolled = crate::stack::start::roll_back(env.progress, &engine, env.store, r, failure).await;
    Ok(Some(Unfinished::RolledBack(txn.step, rolled)))
}
