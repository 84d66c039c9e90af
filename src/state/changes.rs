//! The changes a verb makes to a module's record in the state: a start
//! counted against the limit, the supervisor's hold, what a person asked for,
//! what compose resolved, how a verb ended. Each is one locked
//! read-change-write ([`Store::update`]).

use std::sync::Arc;

use crate::module::ServiceImage;
use crate::module::config::RestartLimit;
use crate::module::status::Desired;
use crate::state::Store;
use crate::state::records::{HoldRecord, LimitUse, StateFile, refusal};
use crate::util::timefmt::Stamp;

impl Store {
    /// Counts a start against the limit, or refuses (exit 5) when the limit is
    /// hit, unless `force`. The check and the count are one locked step.
    pub(crate) async fn count_start(
        &self,
        name: &str,
        limit: RestartLimit,
        force: bool,
        now: Stamp,
    ) -> anyhow::Result<(LimitUse, Option<String>)> {
        let key = name.to_string();
        let counted = self
            .update(move |s| {
                let rec = s.modules.entry(key).or_default();
                rec.prune(limit, now);
                let before = rec.limit_use(limit, now);
                if before.used >= limit.burst && !force {
                    return Err(before);
                }
                rec.starts.push(now.whole_milli());
                Ok(rec.limit_use(limit, now))
            })
            .await;
        let (result, warning) = match counted {
            Ok(done) => done,
            // The watch's store: counted in memory, written when it can be.
            Err(_) if self.kept.is_some() => return self.count_kept(name, limit, force, now),
            Err(e) => return Err(e),
        };
        match result {
            Ok(u) => Ok((u, warning)),
            Err(u) => Err(refusal(name, &u, now).into()),
        }
    }

    /// Takes back the start counted at `at` (an update whose checkpoint copy
    /// was refused: nothing was recreated, so nothing counts).
    pub(crate) async fn uncount_start(&self, name: &str, at: Stamp) -> anyhow::Result<()> {
        let (key, ms) = (name.to_string(), at.whole_milli());
        self.update(move |s| {
            if let Some(r) = s.modules.get_mut(&key)
                && let Some(i) = r.starts.iter().rposition(|&x| x == ms)
            {
                r.starts.remove(i);
            }
        })
        .await
        .map(drop)
    }

    /// Records (or clears) the supervisor's hold of a module.
    pub(crate) async fn set_hold(
        &self,
        name: &str,
        hold: Option<HoldRecord>,
    ) -> anyhow::Result<()> {
        let key = name.to_string();
        self.apply(Arc::new(move |s: &mut StateFile| match &hold {
            Some(h) => s.modules.entry(key.clone()).or_default().hold = Some(h.clone()),
            None => {
                if let Some(r) = s.modules.get_mut(&key) {
                    r.hold = None;
                }
            }
        }))
        .await?;
        Ok(())
    }

    /// Forgets a module's start count and the supervisor's hold (`reset-failed`, rescue).
    pub(crate) async fn reset(&self, name: &str) -> anyhow::Result<Option<String>> {
        let key = name.to_string();
        let ((), w) = self
            .update(move |s| {
                if let Some(r) = s.modules.get_mut(&key) {
                    r.starts.clear();
                    // The limit is lifted: the supervisor's hold goes with it,
                    // and a failed start is no longer `failed`.
                    r.hold = None;
                    r.failure = None;
                    r.rollback = None;
                }
            })
            .await?;
        Ok(w)
    }

    /// Records what a person asked for.
    pub(crate) async fn set_desired(
        &self,
        name: &str,
        desired: Desired,
    ) -> anyhow::Result<Option<String>> {
        let key = name.to_string();
        let ((), w) = self
            .update(move |s| {
                s.modules.entry(key).or_default().desired = Some(desired);
            })
            .await?;
        Ok(w)
    }

    /// Remembers what compose resolved for the module's files, for the fast path.
    pub(crate) async fn remember(
        &self,
        name: &str,
        digest: Option<String>,
        services: Vec<ServiceImage>,
        compose_version: &str,
    ) -> anyhow::Result<()> {
        let key = name.to_string();
        let version = compose_version.to_string();
        self.apply(Arc::new(move |s: &mut StateFile| {
            let rec = s.modules.entry(key.clone()).or_default();
            rec.services = digest.is_some().then(|| services.clone());
            rec.compose_version = digest.is_some().then(|| version.clone());
            rec.digest = digest.clone();
        }))
        .await?;
        Ok(())
    }

    /// Records how a verb on the module ended (its failed start, the services
    /// a person stopped), under the module's lock.
    pub(crate) async fn ended(
        &self,
        name: &str,
        ended: crate::state::records::Ended,
    ) -> anyhow::Result<Option<String>> {
        let key = name.to_string();
        let now = Stamp::now().whole_milli();
        self.apply(Arc::new(move |s: &mut StateFile| {
            s.modules
                .entry(key.clone())
                .or_default()
                .after(ended.clone(), now);
        }))
        .await
    }

    /// Records (or clears) the pull warning shown by status.
    pub(crate) async fn set_pull_warning(
        &self,
        name: &str,
        warning: Option<String>,
    ) -> anyhow::Result<()> {
        let key = name.to_string();
        self.apply(Arc::new(move |s: &mut StateFile| {
            s.modules.entry(key.clone()).or_default().pull_warning = warning.clone();
        }))
        .await?;
        Ok(())
    }
}
