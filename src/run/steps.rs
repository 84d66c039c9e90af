//! The steps every verb's work on one module is made of, shared by the runner and the verbs: what a launch left, what the work did besides its outcome, the engine reached, the start counted, the desired state set.

use std::sync::atomic::AtomicUsize;
use std::time::Duration;

use futures_util::future::LocalBoxFuture;

use crate::module::config::RestartLimit;
use crate::module::outcome::{Outcome, UpdateFacts};
use crate::module::progress::Progress;
use crate::module::reason::Reasons;
use crate::module::status::{Desired, State};
use crate::module::target::Target;
use crate::module::warning::Warning;
use crate::module::{Kind, Module};
use crate::run::node::Node;
use crate::run::report::Report;
use crate::run::verb::Verb;
use crate::util::timefmt::Stamp;
use crate::{host, stack};

use crate::run::{settle, status};

/// A verb's work under way: finished, or started and waiting for `active`.
pub(super) enum Launched {
    Done(Outcome),
    /// Active and unchanged: nothing was started.
    Unchanged(Outcome),
    /// Stopped; what could bring it back was looked at before.
    Stopped(settle::Watchers, Outcome),
    Stack(stack::Pending),
    Host(host::UnitSettling),
    /// New images that did not start, put back on the previous ones.
    RolledBack(stack::RolledBack),
}

impl Launched {
    /// What a stack's launch left.
    pub(super) fn of(launch: stack::Launch) -> Launched {
        match launch {
            stack::Launch::Done(o) => Launched::Done(o),
            stack::Launch::Unchanged(o) => Launched::Unchanged(o),
            stack::Launch::Wait(p) => Launched::Stack(*p),
            stack::Launch::RolledBack(r) => Launched::RolledBack(r),
        }
    }
}

/// What every target of one layer shares while it takes its turn (the
/// runner's, `run_targets`), passed down its work.
#[derive(Clone, Copy)]
pub(super) struct Turn<'a> {
    pub(super) node: &'a Node,
    pub(super) progress: &'a dyn Progress,
    pub(super) verb: &'a Verb,
    pub(super) slots: &'a tokio::sync::Semaphore,
    /// The modules whose update failed so far (`--max-failures`).
    pub(super) failures: &'a AtomicUsize,
    /// The runner again, for other targets (an update's gate restarts its
    /// namespace followers through it): handed down, not imported, so the
    /// work a turn does never depends on the runner's module.
    pub(super) again: Again<'a>,
}

/// A verb run on other targets by the runner, one at a time, their reports.
pub(crate) type Again<'a> =
    &'a (dyn Fn(Vec<Target>, Verb) -> LocalBoxFuture<'a, Vec<Report>> + Sync);

/// What one target's work did besides its outcome: each step returns it
/// with its value, or with its error in a [`Failed`].
#[derive(Default, Clone)]
pub(super) struct Did {
    /// Said before the outcome's own, collected from each step.
    pub(super) warnings: Vec<Warning>,
    /// Started, stopped, restarted or recreated something (whatever the wait said).
    pub(super) changed: bool,
    /// Put back on the previous images: whether they became active again.
    pub(super) rolled_back: Option<bool>,
    /// An update past its refusals (see [`UpdateFacts::failed`]).
    pub(super) tried: bool,
    /// What an update found.
    pub(super) update: Box<UpdateFacts>,
    /// The namespace followers an update's gate restarted, each its report.
    pub(super) followed: std::sync::Arc<std::sync::Mutex<Vec<Report>>>,
}

/// A target's work that failed, with what it did before (an update's pull
/// and recreate, a rollback): its report and its record say both.
pub(super) struct Failed {
    pub(super) error: anyhow::Error,
    pub(super) did: Did,
}

/// A failure before the work did anything.
impl From<anyhow::Error> for Failed {
    fn from(error: anyhow::Error) -> Failed {
        Failed {
            error,
            did: Did::default(),
        }
    }
}

/// A refusal before the work did anything (unusable, a config error).
impl From<crate::error::HalError> for Failed {
    fn from(error: crate::error::HalError) -> Failed {
        anyhow::Error::from(error).into()
    }
}

/// What a step of a target's work came to: its value and what it did, or
/// its failure and what it did before.
pub(super) type Worked<T> = Result<(T, Did), Failed>;

/// A target's work as a result and what it did, either way.
pub(super) fn split<T>(worked: Worked<T>) -> (anyhow::Result<T>, Did) {
    match worked {
        Ok((value, did)) => (Ok(value), did),
        Err(Failed { error, did }) => (Err(error), did),
    }
}

impl Did {
    /// `error`, with what the work did so far.
    pub(super) fn failed(&self, error: anyhow::Error) -> Failed {
        Failed {
            error,
            did: self.clone(),
        }
    }

    /// `result`, with what the work did.
    pub(super) fn with<T>(self, result: anyhow::Result<T>) -> Worked<T> {
        match result {
            Ok(value) => Ok((value, self)),
            Err(error) => Err(Failed { error, did: self }),
        }
    }

    pub(super) fn report(
        self,
        t: &Target,
        verb: &Verb,
        result: anyhow::Result<Outcome>,
        took: Duration,
    ) -> Report {
        let rolled_back = self.rolled_back;
        let followed = match self.followed.lock() {
            Ok(mut f) => std::mem::take(&mut *f),
            Err(_) => Vec::new(),
        };
        let failed = result.is_err() && (self.tried || rolled_back.is_some());
        Report {
            module: t.module.clone(),
            service: t.service.clone(),
            changed: self.changed && result.is_ok(),
            result,
            took,
            would: None,
            plan: None,
            update: verb.updates().then_some(UpdateFacts {
                rolled_back,
                failed,
                ..*self.update
            }),
            followed,
        }
    }
}

/// The target's state now, for a verb that changed nothing.
pub(super) async fn outcome_now(
    node: &Node,
    t: &Target,
    warnings: Vec<Warning>,
) -> anyhow::Result<Outcome> {
    let state = status::state_now(node, t).await;
    Ok(Outcome {
        state: state.unwrap_or(State::Unknown),
        reason: Reasons::none(),
        warnings,
    })
}

/// The supervisor acts only on a module still wanted up once its lock is taken.
pub(super) fn still_wanted(node: &Node, m: &Module) -> anyhow::Result<()> {
    let (state, _) = node.store.read();
    let wanted = state.modules.get(&m.name).and_then(|r| r.desired);
    if wanted != Some(Desired::Up) {
        anyhow::bail!("left alone: it is no longer wanted up (stopped by request)");
    }
    Ok(())
}

pub(super) async fn reachable(node: &Node, m: &Module) -> anyhow::Result<()> {
    match &m.kind {
        Kind::Stack { .. } => node.stacks.session().await.map(drop).map_err(Into::into),
        Kind::Host { scope, .. } => host::reachable(&*node.hosts.init(*scope)).map_err(Into::into),
        Kind::Invalid { .. } => Ok(()),
    }
}

/// Counts a start against `limit` (the plan's), or refuses it there unless
/// `force`; with the store's warning.
pub(super) async fn count(
    node: &Node,
    m: &Module,
    limit: RestartLimit,
    force: bool,
) -> anyhow::Result<Option<Warning>> {
    let (_, w) = node
        .store
        .count_start(&m.name, limit, force, Stamp::now())
        .await?;
    Ok(Warning::of_state(w))
}

/// Records what a person asked for; with the store's warning.
pub(super) async fn desire(node: &Node, m: &Module, d: Desired) -> anyhow::Result<Option<Warning>> {
    Ok(Warning::of_state(node.store.set_desired(&m.name, d).await?))
}
