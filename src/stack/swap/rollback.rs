//! The gate's second half: the previous images kept under hal's own tag before a recreate, and, when the module is not `active` in time, put back under the services' own references and recreated.

use crate::module::warning::Warning;
use std::path::{Path, PathBuf};
pub(crate) mod previous;

use std::time::Duration;

use futures_util::future::LocalBoxFuture;

use crate::docker::compose::{Compose, Fresh, Project};
use crate::docker::endpoint::Endpoint;
use crate::docker::engine::Engine;
use crate::error::OneLine;
use crate::module::diagnosed::Detailed;
use crate::module::progress::Progress;
use crate::module::recorded_causes::{RollbackCause, StartCause};
use crate::stack::bound::Bound;
use crate::stack::env::Env;
use crate::stack::one_stack::Stack;
use crate::stack::swap::gate::Swap;
use crate::state::Store;
use crate::state::records::{RollbackRecord, RolledBackService};
use crate::util::timefmt::Stamp;
use anyhow::Context;

use crate::stack::swap::checkpoint;
use crate::stack::swap::txn_log::{Data, Txn};
use crate::state::txn::TxnStep;

/// Waits, after the previous images are recreated, until the module is
/// active again within the bound (the stack's own wait, handed in by its caller).
pub(crate) type WaitAgain<'a> =
    &'a (dyn Fn(Bound) -> LocalBoxFuture<'a, anyhow::Result<()>> + Sync);

/// What a gated recreate can undo: the services that moved to a new image.
pub(crate) struct Rollback {
    compose: Compose,
    endpoint: Endpoint,
    store: Store,
    name: String,
    dir: PathBuf,
    /// The one service a `MODULE/SERVICE` start moved (its wait is of it alone).
    service: Option<String>,
    swaps: Vec<Swap>,
    timeout: Duration,
    /// The checkpoint put back before the previous images start (an update's).
    data: Option<Data>,
    /// The update's transaction, ended by the gate or by the rollback.
    txn: Option<Txn>,
}

/// A gated start or update that failed and was put back on its previous
/// images: a value its caller reads, never an error to search for.
#[derive(Debug)]
pub(crate) struct RolledBack {
    /// Whether the previous images became active again.
    pub restored: bool,
    /// Why it failed and what the rollback did (`rolled back: web/api (new image …)`).
    pub error: anyhow::Error,
}

impl Rollback {
    /// Tags each previous image `hal-previous/MODULE:SERVICE` (so that
    /// `docker image prune` keeps it, not `prune -a`; the tag moves at the
    /// next update) and records its id.
    pub(crate) async fn keep(
        env: Env<'_>,
        stack: &Stack<'_>,
        swaps: Vec<Swap>,
        timeout: Duration,
    ) -> anyhow::Result<Rollback> {
        let module = stack.name;
        let engine = env.stacks.engine().await?;
        for w in &swaps {
            let (repo, tag) = previous::reference(module, &w.service);
            engine.tag(&w.previous, &repo, &tag).await?;
        }
        let name = module.to_string();
        let ids: Vec<(String, String)> = swaps
            .iter()
            .map(|w| (w.service.clone(), w.previous.clone()))
            .collect();
        env.store
            .update(move |s| {
                let rec = s.modules.entry(name).or_default();
                rec.previous.extend(ids);
            })
            .await?;
        let mut r = Rollback::resume(env, stack, swaps, timeout).await?;
        r.service = stack.service.map(str::to_string);
        Ok(r)
    }

    /// The rollback of an update another hal left unfinished: its previous
    /// images are already kept and recorded.
    pub(crate) async fn resume(
        env: Env<'_>,
        stack: &Stack<'_>,
        swaps: Vec<Swap>,
        timeout: Duration,
    ) -> anyhow::Result<Rollback> {
        Ok(Rollback {
            compose: env.stacks.compose().await?,
            endpoint: env.stacks.endpoint()?.clone(),
            store: env.store.clone(),
            name: stack.name.to_string(),
            dir: stack.dir.to_path_buf(),
            service: None,
            swaps,
            timeout,
            data: None,
            txn: None,
        })
    }

    /// An update's: the checkpoint its rollback puts back, and its transaction.
    pub(crate) fn set_data(&mut self, data: Option<Data>, txn: Option<Txn>) {
        self.data = data;
        self.txn = txn;
    }

    /// The module it rolls back.
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// The module's directory.
    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    /// The one service it is about, when a `MODULE/SERVICE` start made it.
    pub(crate) fn service(&self) -> Option<&str> {
        self.service.as_deref()
    }

    /// The services it would put back, in the order compose was given them.
    pub(crate) fn services(&self) -> Vec<&str> {
        self.swaps.iter().map(|w| w.service.as_str()).collect()
    }

    /// The gate passed: the module is active on its new images, and an old
    /// rollback no longer describes it.
    pub(crate) async fn passed(self) -> Option<Warning> {
        let name = self.name.clone();
        if let Some(txn) = &self.txn
            && let Err(e) = txn.step(TxnStep::Passed, None).await
        {
            return Some(Warning::UpdateNotRecorded(Warning::cause(&e)));
        }
        let lifted: Vec<String> = self.swaps.iter().map(|w| w.service.clone()).collect();
        match self
            .store
            .update(move |s| {
                if let Some(r) = s.modules.get_mut(&name) {
                    r.txn = None;
                    r.up_to_date();
                    // Another digest runs now (or the one tried again held): no quarantine.
                    lifted.iter().for_each(|service| r.quarantine.lift(service));
                }
            })
            .await
        {
            Ok(_) => None,
            Err(e) => Some(Warning::UpdateNotRecorded(Warning::cause(&e))),
        }
    }

    /// The gate failed with `failure`: keeps the failed containers' evidence,
    /// points each reference back at its previous image, recreates those
    /// services (`--pull never`) and waits for `active` again. Its error always
    /// says so: `rolled back: web/api (new image did not start: …)`.
    pub(crate) async fn roll_back(
        self,
        progress: &dyn Progress,
        engine: &Engine,
        failure: anyhow::Error,
        again: WaitAgain<'_>,
    ) -> RolledBack {
        let diagnosis = crate::module::diagnosed::diagnosis_of(&failure);
        let why = diagnosis.map_or_else(|| OneLine(&failure).to_string(), |d| d.summary.clone());
        let seen = diagnosis.map(|d| d.seen.clone()).unwrap_or_default();
        let cause = RollbackCause::NewImage(match diagnosis {
            Some(_) => StartCause::Diagnosed {
                summary: why.clone(),
                seen: seen.clone(),
            },
            None => StartCause::Error(why.clone()),
        });
        let details = crate::module::diagnosed::details_of(&failure).to_vec();
        let labels: Vec<String> = self
            .swaps
            .iter()
            .map(|w| format!("{}/{}", self.name, w.service))
            .collect();
        progress.step(&self.name, &format!("rolling back {}", labels.join(" ")));
        // Named before the references move back: what is quarantined.
        let digests = crate::stack::swap::quarantine::digests(engine, &self.swaps).await;
        let restored = self.restore(engine, again).await;
        let discarded = match (&restored, &self.data) {
            (Ok(()), Some(d)) => format!(
                "; data restored from the checkpoint of {}: what the new image wrote is discarded",
                d.record.at.rfc3339()
            ),
            _ => String::new(),
        };
        let summary = match &restored {
            Ok(()) => format!(
                "rolled back: {} (new image {why}){discarded}",
                labels.join(", ")
            ),
            Err(e) => format!(
                "rollback failed: {}: {} (new image {why})",
                labels.join(", "),
                OneLine(e)
            ),
        };
        let mut details = details;
        details.extend(self.record(cause, restored.is_ok(), digests).await);
        RolledBack {
            restored: restored.is_ok(),
            error: anyhow::Error::new(Detailed {
                summary,
                details,
                seen,
            }),
        }
    }

    /// Points each service's reference back at its previous image.
    pub(crate) async fn put_references_back(&self, engine: &Engine) -> anyhow::Result<()> {
        for w in &self.swaps {
            let (repo, tag) = crate::docker::image_ref::split_ref(&w.image);
            engine
                .tag(&w.previous, &repo, tag.as_deref().unwrap_or("latest"))
                .await?;
        }
        Ok(())
    }

    async fn restore(&self, engine: &Engine, again: WaitAgain<'_>) -> anyhow::Result<()> {
        crate::stack::evidence::keep(engine, &self.store, &self.name, None).await?;
        if let Some(data) = &self.data {
            // The new image stops writing before its writes are undone.
            let project = Project {
                name: &self.name,
                dir: &self.dir,
            };
            let mut args = vec!["stop"];
            args.extend(self.services());
            self.compose
                .run(&project, &self.endpoint, &args)
                .await
                .context("stop the new containers")?;
            checkpoint::restore(&data.state, &self.name, &data.record).await?;
        }
        self.put_references_back(engine).await?;
        let project = Project {
            name: &self.name,
            dir: &self.dir,
        };
        let services = self.services();
        let bound = Bound::from_now(self.timeout);
        let work = self
            .compose
            .up_services(&project, &self.endpoint, &services, Fresh::Always);
        bound.run(engine, &self.name, None, work).await?;
        again(bound).await
    }

    /// Remembers the rollback (until an update succeeds or `reset-failed`) and
    /// counts it; a record that cannot be written is said in the error's details.
    /// Each new digest is quarantined with it.
    async fn record(
        &self,
        reason: RollbackCause,
        restored: bool,
        digests: Vec<(String, String, String)>,
    ) -> Option<String> {
        let name = self.name.clone();
        let at = Stamp::now().whole_milli();
        let quarantined = crate::stack::swap::quarantine::records(digests, at, &reason);
        let record = RollbackRecord {
            at,
            reason,
            services: self
                .swaps
                .iter()
                .map(|w| RolledBackService {
                    service: w.service.clone(),
                    image: w.image.clone(),
                    failed: w.new.clone(),
                    restored: w.previous.clone(),
                })
                .collect(),
            restored,
        };
        let done = self
            .store
            .update(move |s| {
                let rec = s.modules.entry(name).or_default();
                rec.txn = None;
                rec.rollback = Some(record);
                rec.rollbacks = rec.rollbacks.saturating_add(1);
                quarantined.into_iter().for_each(|q| rec.quarantine.put(q));
            })
            .await;
        done.err().map(|e| {
            format!(
                "could not record the rollback in hal's state: {}",
                OneLine(&e)
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rollback_says_only_its_summary() {
        let e = anyhow::Error::new(Detailed {
            summary:
                "rolled back: web/api (new image did not start: service api exited with code 1)"
                    .into(),
            details: vec!["api: state exited".into()],
            seen: Vec::new(),
        })
        .context("update web");
        assert_eq!(
            OneLine(&e).to_string(),
            "update web: rolled back: web/api (new image did not start: service api exited with code 1)"
        );
        assert_eq!(
            crate::module::diagnosed::details_of(&e),
            ["api: state exited"]
        );
    }
}
