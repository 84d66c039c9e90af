//! The state of many modules at once: one container-list call for all stacks, one init call per scope.

use std::collections::{BTreeMap, BTreeSet};

use crate::error::Exit;
use crate::module::ServiceImage;
use crate::module::reason::{Reason, Reasons};
use crate::module::status::Desired;
use crate::module::status::Detail;
use crate::module::status::{HeldStatus, LimitStatus, ModuleStatus, State};
use crate::module::target::Target;
use crate::module::{Kind, Module};
use crate::run::node::Node;
use crate::stack::ContainerFacts;
use crate::stack::NodeFacts;
use crate::stack::identity;
use crate::stack::{Expected, Judged, judge};
use crate::state::records::{ModuleRecord, StateFile};
use crate::util::timefmt::Stamp;

/// The status of many modules, and what went wrong reading it.
pub(crate) struct NodeStatus {
    pub modules: Vec<ModuleStatus>,
    /// What `status` exits with: 0 all active, 3 some not, 6 an engine is
    /// unreachable, 2 its endpoint, context or TLS setting is wrong.
    pub exit: Exit,
    /// Engines that could not be asked (printed as errors).
    pub errors: Vec<String>,
    /// Things worth saying that do not change the answer (a corrupt state file…).
    pub warnings: Vec<String>,
}

/// Every given module's status, and the exit code `status` should end with.
/// `detail` says how much to read of settled containers: exact times and
/// counts cost an inspect per container, the list call alone says the rest.
pub(crate) async fn collect(node: &Node, modules: &[Module], detail: Detail) -> NodeStatus {
    let targets: Vec<Target> = modules.iter().cloned().map(Target::whole).collect();
    collect_targets(node, &targets, detail).await
}

/// The status of every target: a whole module, or one service of a stack
/// (that service's containers alone, and the state they add up to).
pub(crate) async fn collect_targets(node: &Node, targets: &[Target], detail: Detail) -> NodeStatus {
    let mut modules = distinct_modules(targets);
    // What they require is read too (the same list call): whether they wait on it.
    let extra = super::waiting::requirements(node, targets);
    modules.extend(extra.iter().cloned());
    let modules = modules.as_slice();
    let now = Stamp::now();
    let (state_file, warning) = node.store.read();
    let mut warnings: Vec<String> = warning.into_iter().collect();
    let (stack_facts, mut exit) = read_stacks(node, modules, detail).await;
    let (mut hosts, hosts_unreachable) = crate::host::node_status(&node.hosts, modules).await;
    if hosts_unreachable && exit == Exit::Ok {
        exit = Exit::Unreachable;
    }
    let mut out = Vec::with_capacity(targets.len());
    for t in targets {
        let mut status = target_status(t, &stack_facts, &mut hosts, &state_file);
        status.service = t.service.clone();
        annotate(node, &mut status, &state_file, now);
        out.push(status);
    }
    let required: Vec<ModuleStatus> = extra
        .iter()
        .map(|m| {
            let t = Target::whole(m.clone());
            let mut status = target_status(&t, &stack_facts, &mut hosts, &state_file);
            annotate(node, &mut status, &state_file, now);
            status
        })
        .collect();
    super::waiting::mark(node, &mut out, &required);
    if exit == Exit::Ok && out.iter().any(|s| s.state != State::Active) {
        exit = Exit::NotActive;
    }
    if let Some(p) = &node.inventory.root_problem {
        warnings.push(p.clone());
    }
    NodeStatus {
        modules: out,
        exit,
        errors: stack_facts.err().into_iter().map(|e| e.whole).collect(),
        warnings,
    }
}

/// The targets' modules, each once, in the order first named.
fn distinct_modules(targets: &[Target]) -> Vec<Module> {
    let mut modules: Vec<Module> = Vec::new();
    for t in targets {
        if !modules.contains(&t.module) {
            modules.push(t.module.clone());
        }
    }
    modules
}

/// The facts of every stack among `modules`, from one engine call, and the
/// exit `status` ends with when they could not be read.
async fn read_stacks(
    node: &Node,
    modules: &[Module],
    detail: Detail,
) -> (Result<NodeFacts, Unread>, Exit) {
    let stacks: Vec<&str> = modules
        .iter()
        .filter(|m| m.is_stack())
        .map(|m| m.name.as_str())
        .collect();
    let mut exit = Exit::Ok;
    if stacks.is_empty() {
        return (Ok(Default::default()), exit);
    }
    let stack_facts = match node.stacks.engine().await {
        // Scripts get exact start times and restart counts; the table only
        // needs what `docker ps` already says about settled containers.
        // An answer hal could not read is exit 1 with its message, not an unreachable engine.
        Ok(engine) => crate::stack::node_facts(&engine, &node.store, &stacks, detail)
            .await
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
    if stack_facts.is_err() && exit == Exit::Ok {
        exit = Exit::Unreachable;
    }
    (stack_facts, exit)
}

/// One target's status from what was read of the node, before the state
/// file's annotations.
fn target_status(
    t: &Target,
    stack_facts: &Result<NodeFacts, Unread>,
    hosts: &mut BTreeMap<String, ModuleStatus>,
    state_file: &StateFile,
) -> ModuleStatus {
    let m = &t.module;
    match &m.kind {
        Kind::Stack { .. } => match stack_facts {
            Ok(node_facts) => stack_target_status(t, node_facts, state_file),
            Err(why) => bare(m, State::Unknown, Some(why.row.clone())),
        },
        Kind::Host { .. } => hosts.remove(&m.name).unwrap_or_else(|| {
            bare(
                m,
                State::Unknown,
                Some("the init said nothing about it".into()),
            )
        }),
        Kind::Invalid { reason } => bare(m, State::Invalid, Some(reason.clone())),
    }
}

/// A stack target's status: the whole module's containers, or one service's.
fn stack_target_status(t: &Target, node_facts: &NodeFacts, state_file: &StateFile) -> ModuleStatus {
    let m = &t.module;
    let empty = Vec::new();
    let all = node_facts.containers.get(&m.name).unwrap_or(&empty);
    let rec = state_file.modules.get(&m.name);
    let mut status = match &t.service {
        Some(svc) => {
            let mine: Vec<ContainerFacts> =
                all.iter().filter(|c| &c.service == svc).cloned().collect();
            stack_status(m, &mine, rec, Some(svc))
        }
        None => stack_status(m, all, rec, None),
    };
    identity(&mut status, m, node_facts, all.is_empty());
    status
}

/// Why the engine could not be read: each row says the cause, and the whole
/// error (with its fix, the same for every row) is printed once.
struct Unread {
    row: String,
    whole: String,
}

/// A status with only its state and a reason said in words.
fn bare(m: &Module, state: State, reason: Option<String>) -> ModuleStatus {
    ModuleStatus {
        reason: Reasons::said(reason),
        ..ModuleStatus::of(m, state)
    }
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
/// containers' state.
fn identity(s: &mut ModuleStatus, m: &Module, facts: &NodeFacts, none: bool) {
    let Kind::Stack { dir, .. } = &m.kind else {
        return;
    };
    let empty = BTreeSet::new();
    let dirs = facts.dirs.get(&m.name).unwrap_or(&empty);
    if !dir.is_dir() {
        if !none {
            s.state = State::Orphaned;
            s.reason = Reasons::said(Some(identity::orphan_reason(&m.name, dirs, dir)));
        }
    } else if let Some(other) = identity::other_dir(dirs.iter().map(String::as_str), dir) {
        s.state = State::Conflict;
        s.reason = Reasons::said(Some(identity::conflict_reason(&other)));
    }
}

/// Adds what hal itself remembers: start-limit figures, desired state, pull warnings.
fn annotate(node: &Node, s: &mut ModuleStatus, file: &StateFile, now: Stamp) {
    let limit = node.config.settings(&s.name).limit;
    let rec = file.modules.get(&s.name).cloned().unwrap_or_default();
    let used = rec.limit_use(limit, now);
    s.limit = LimitStatus {
        used: used.used,
        burst: used.burst,
        interval: used.interval,
        // To the second, as published (and as the supervisor has always read it).
        free_at: used.free_at.map(Stamp::whole_second),
    };
    s.desired = rec.desired;
    // A module stopped by request is never `failed`: not for its start
    // count, not for a hold of the supervisor's, not for an old failed start.
    if s.desired != Some(Desired::Down) {
        failed_start(s, &rec);
        start_limit(s, used.free_at);
        held(s, &rec);
    }
    // A rolled-back update, until the next update or `reset-failed`.
    if let Some(r) = &rec.rollback {
        s.reason.then(Reason::RolledBack {
            services: r.services.iter().map(|s| s.service.clone()).collect(),
            at: r.at,
            cause: r.reason.clone(),
        });
    }
    if let Some(w) = rec.pull_warning {
        s.reason.then(Reason::PullWarning(w));
    }
}

/// A failed start stays failed until a start succeeds, a stop or
/// `reset-failed`; what failed since says the cause already.
fn failed_start(s: &mut ModuleStatus, rec: &ModuleRecord) {
    let Some(f) = &rec.failure else {
        return;
    };
    let running = matches!(
        s.state,
        State::Active | State::Starting | State::Degraded | State::Inactive
    );
    if !running || !(s.service.is_none() || f.service.is_none() || f.service == s.service) {
        return;
    }
    let failed = Reason::Failed {
        service: f.service.clone().filter(|_| s.service.is_none()),
        cause: f.reason.clone(),
    };
    s.state = State::Failed;
    let said = s.reason.to_string();
    if s.reason.0 == [Reason::NoContainers] || failed.to_string().contains(&said) {
        s.reason = Reasons::none();
    }
    s.reason.first(failed);
}

/// The start limit is hit: said first, and a module not running is `failed`.
fn start_limit(s: &mut ModuleStatus, free_at: Option<Stamp>) {
    let Some(free_at) = free_at.filter(|_| s.state != State::Active) else {
        return;
    };
    s.reason.first(Reason::StartLimit {
        used: s.limit.used,
        interval: s.limit.interval,
        free_at,
    });
    if matches!(s.state, State::Inactive | State::Degraded | State::Starting) {
        s.state = State::Failed;
    }
}

/// A hold of hal watch's, while the module is down: held, and until when.
fn held(s: &mut ModuleStatus, rec: &ModuleRecord) {
    let Some(h) = rec.hold.as_ref().filter(|_| s.state != State::Active) else {
        return;
    };
    let until = h.until();
    s.held = Some(HeldStatus {
        since: h.since,
        until,
        reason: h.reason.clone(),
    });
    s.reason.first(Reason::Held { until });
}

/// The state of one target now, as `status` reads it (`None` when it cannot be read).
pub(crate) async fn state_now(node: &Node, t: &Target) -> Option<State> {
    let read = collect_targets(node, std::slice::from_ref(t), Detail::Settled).await;
    read.modules.first().map(|s| s.state)
}
