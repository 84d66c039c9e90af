//! An update as a transaction of image and data (issue 48): each step written to the shared state before it is taken, and an update that hal did not finish (killed, power lost) rolled back (or forward, past the gate) by the next hal that touches the module.

use std::time::Duration;

use crate::module::diagnosed::Detailed;
use crate::stack::env::Env;
use crate::stack::one_stack::Stack;
use crate::stack::swap::checkpoint;
use crate::stack::swap::gate::Swap;
use crate::stack::swap::rollback::{Rollback, RolledBack};
use crate::stack::swap::txn_log::Data;
use crate::state::txn::TxnStep;

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
        seen: Vec::new(),
    });
    let rolled = crate::stack::start::roll_back(env.progress, &engine, env.store, r, failure).await;
    Ok(Some(Unfinished::RolledBack(txn.step, rolled)))
}
