//! A stack's status as `status` reads it: the node's stacks read at once, then each target's containers judged against what hal expects, and whether the project is the module.

use std::collections::BTreeSet;

use crate::error::Exit;
use crate::module::reason::{Reason, Reasons};
use crate::module::status::{Desired, Detail, ModuleStatus, State};
use crate::module::target::Target;
use crate::module::{Module, ServiceImage};
use crate::stack::env::Stacks;
use crate::stack::look::assess::ContainerFacts;
use crate::stack::look::assess::expected::{Expected, Judged, judge};
use crate::stack::look::identity::{self, Snapshot};
use crate::stack::look::node::{NodeFacts, facts_of_listed, node_facts};
use crate::state::Store;
use crate::state::records::ModuleRecord;
use crate::util::timefmt::Stamp;

/// The stacks of a node as one status call read them: their containers'
/// facts, or why the engine could not be read; and the modules whose
/// directory the node's read found (no `stat` of theirs again: [`StackStatuses::found`]).
pub(crate) struct StackStatuses(Result<NodeFacts, Unread>, BTreeSet<String>);

/// Why the engine could not be read: each row says the cause, and the whole
/// error (with its fix, the same for every row) is printed once.
struct Unread {
    row: String,
    whole: String,
}

impl StackStatuses {
    /// The status of one stack target (a whole module, or one service of
    /// it), before the state file's annotations; `rec` is what hal remembers
    /// of the module.
    pub(crate) fn of(&self, t: &Target, rec: Option<&ModuleRecord>) -> ModuleStatus {
        match &self.0 {
            Ok(facts) => target_status(t, facts, rec, self.1.contains(&t.module.name)),
            Err(why) => ModuleStatus {
                reason: Reasons::said(Some(why.row.clone())),
                ..ModuleStatus::of(&t.module, State::Unknown)
            },
        }
    }

    /// These, knowing that the directories of the modules `names` were found
    /// under the services root by this read of the node: only another
    /// module's directory is looked at again for whether it is gone.
    pub(crate) fn found(self, names: BTreeSet<String>) -> StackStatuses {
        StackStatuses(self.0, names)
    }

    /// The error to print once, when the engine could not be read.
    pub(crate) fn error(&self) -> Option<String> {
        self.0.as_ref().err().map(|e| e.whole.clone())
    }
}

/// The facts of every stack among `modules`, from one engine call, and the
/// exit `status` ends with when they could not be read.
pub(crate) async fn read_status(
    stacks: &Stacks,
    store: &Store,
    modules: &[Module],
    detail: Detail,
) -> (StackStatuses, Exit) {
    read_seen(stacks, store, modules, detail, None).await
}

/// [`read`] of one stack module from its project's containers as already
/// listed (`seen`, a [`Snapshot`] of that project): no list call of its own.
pub(crate) async fn read_status_listed(
    stacks: &Stacks,
    store: &Store,
    m: &Module,
    detail: Detail,
    seen: &Snapshot,
) -> StackStatuses {
    let modules = std::slice::from_ref(m);
    read_seen(stacks, store, modules, detail, Some(seen))
        .await
        .0
}

async fn read_seen(
    stacks: &Stacks,
    store: &Store,
    modules: &[Module],
    detail: Detail,
    seen: Option<&Snapshot>,
) -> (StackStatuses, Exit) {
    let names: Vec<&str> = modules
        .iter()
        .filter(|m| m.is_stack())
        .map(|m| m.name.as_str())
        .collect();
    let mut exit = Exit::Ok;
    if names.is_empty() {
        return (StackStatuses(Ok(Default::default()), BTreeSet::new()), exit);
    }
    let facts = match stacks.engine().await {
        // Scripts get exact start times and restart counts; the table only
        // needs what `docker ps` already says about settled containers.
        // An answer hal could not read is exit 1 with its message, not an unreachable engine.
        Ok(engine) => match seen {
            Some(seen) => {
                let list = seen.list.clone();
                facts_of_listed(&engine, store, &names, detail, list, &seen.inspects).await
            }
            None => node_facts(&engine, store, &names, detail).await,
        }
        .map_err(|e| {
            exit = crate::error::exit_of(&e);
            Unread {
                row: crate::error::row_reason(&e),
                whole: crate::error::OneLine(&e).to_string(),
            }
        }),
        Err(e) => {
            // A bad endpoint, context or TLS setting is the user's to fix (2),
            // whatever the verb; only an engine that does not answer is 6.
            exit = e.exit();
            Err(Unread {
                row: e.row_reason(),
                whole: e.to_string(),
            })
        }
    };
    if facts.is_err() && exit == Exit::Ok {
        exit = Exit::Unreachable;
    }
    (StackStatuses(facts, BTreeSet::new()), exit)
}

/// A stack target's status: the whole module's containers, or one service's.
fn target_status(
    t: &Target,
    node_facts: &NodeFacts,
    rec: Option<&ModuleRecord>,
    found: bool,
) -> ModuleStatus {
    let m = &t.module;
    let empty = Vec::new();
    let all = node_facts.containers.get(&m.name).unwrap_or(&empty);
    let mut status = match &t.service {
        Some(svc) => {
            let mine: Vec<ContainerFacts> =
                all.iter().filter(|c| &c.service == svc).cloned().collect();
            stack_status(m, &mine, rec, Some(svc))
        }
        None => stack_status(m, all, rec, None),
    };
    mark_identity(&mut status, m, node_facts, all.is_empty(), found);
    status
}

/// A stack's status: its containers against its expected set (what compose
/// resolved when hal last brought it up, less the services a person stopped).
/// A module stopped by request expects nothing; only one wanted up fails for a
/// container stopped behind hal's back.
fn stack_status(
    m: &Module,
    facts: &[ContainerFacts],
    rec: Option<&ModuleRecord>,
    service: Option<&str>,
) -> ModuleStatus {
    let refs: Vec<&ContainerFacts> = facts.iter().collect();
    let mut services: Vec<ServiceImage> = rec
        .filter(|r| r.desired != Some(Desired::Down))
        .and_then(|r| r.services.clone())
        .unwrap_or_default();
    if let Some(only) = service {
        services.retain(|s| s.service == only);
    }
    let stopped = rec.map(|r| r.stopped.as_slice()).unwrap_or_default();
    let expected = rec
        .filter(|r| r.desired != Some(Desired::Down) && r.services.is_some())
        .map(|_| Expected {
            services: &services,
            stopped,
        });
    let Judged {
        state,
        reason,
        missing,
    } = judge(
        &refs,
        expected,
        rec.is_some_and(|r| r.desired == Some(Desired::Up)),
    );
    let (state, reason) = stale_namespaces(facts, state, reason);
    let main = facts.iter().filter(|c| !c.oneoff);
    let since = if matches!(state, State::Active | State::Starting | State::Degraded) {
        main.filter_map(|c| c.started_at).max()
    } else {
        main.filter_map(|c| c.finished_at).max()
    };
    ModuleStatus {
        since: since.map(Stamp::whole_second),
        services: facts
            .iter()
            .filter(|c| !c.oneoff)
            .map(ContainerFacts::to_status)
            .collect(),
        missing,
        expected_down: stopped.to_vec(),
        reason,
        ..ModuleStatus::of(m, state)
    }
}

/// A running container left in a dead network namespace is no `active`
/// module: `degraded`, naming the provider (`stack::netns`).
fn stale_namespaces(facts: &[ContainerFacts], state: State, reason: Reasons) -> (State, Reasons) {
    let stale: Vec<Reason> = facts
        .iter()
        .filter_map(|c| {
            Some(Reason::StaleNamespace {
                service: c.service.clone(),
                stale: c.netns_stale.clone()?,
            })
        })
        .collect();
    if stale.is_empty() || !matches!(state, State::Active | State::Starting | State::Degraded) {
        return (state, reason);
    }
    let mut said = Reasons(stale);
    said.extend(reason);
    (State::Degraded, said)
}

/// A project that is not the module (run from another directory), or the
/// containers of a module whose directory is gone: said so, whatever their
/// containers' state. `found`: the node's read found its directory.
fn mark_identity(s: &mut ModuleStatus, m: &Module, facts: &NodeFacts, none: bool, found: bool) {
    let Some(dir) = m.stack_dir() else {
        return;
    };
    let empty = BTreeSet::new();
    let dirs = facts.dirs.get(&m.name).unwrap_or(&empty);
    if !found && !dir.is_dir() {
        if !none {
            s.state = State::Orphaned;
            s.reason = Reasons::said(Some(identity::orphan_reason(&m.name, dirs, dir)));
        }
    } else if let Some(other) = identity::other_dir(dirs.iter().map(String::as_str), dir) {
        s.state = State::Conflict;
        s.reason = Reasons::said(Some(identity::conflict_reason(&other)));
    }
}
