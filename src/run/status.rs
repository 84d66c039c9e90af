//! The state of many modules at once: each backend's reading (the stacks in one container-list call, `stack::read_status`; the units in one init call per scope, `host::node_status`), then what hal's state adds (a failed start, the start limit, a hold, the desired state).

use std::collections::BTreeMap;

use crate::error::Exit;
use crate::module::Module;
use crate::module::reason::{Reason, Reasons};
use crate::module::status::{
    Desired, Detail, HeldStatus, LimitStatus, ModuleStatus, QuarantinedStatus, State,
};
use crate::module::target::Target;
use crate::run::node::Node;
use crate::stack::{Snapshot, StackStatuses};
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
pub(crate) async fn collect_status(node: &Node, modules: &[Module], detail: Detail) -> NodeStatus {
    let targets: Vec<Target> = modules.iter().cloned().map(Target::whole).collect();
    collect_status_of(node, &targets, detail).await
}

/// The status of every target: a whole module, or one service of a stack
/// (that service's containers alone, and the state they add up to): one
/// status per target, in their order.
pub(crate) async fn collect_status_of(
    node: &Node,
    targets: &[Target],
    detail: Detail,
) -> NodeStatus {
    let mut modules = distinct_modules(targets);
    // What they require is read too (the same list call): whether they wait on it.
    let extra = super::waiting::requirements(node, targets);
    modules.extend(extra.iter().cloned());
    let modules = modules.as_slice();
    let now = Stamp::now();
    let (state_file, warning) = node.store.read();
    let mut warnings: Vec<String> = warning.into_iter().collect();
    let (stacks, mut exit) =
        crate::stack::read_status(&node.stacks, &node.store, modules, detail).await;
    let stacks = stacks.found(node.found_stacks());
    let (mut hosts, hosts_unreachable) = crate::host::node_status(&node.hosts, modules).await;
    if hosts_unreachable && exit == Exit::Ok {
        exit = Exit::Unreachable;
    }
    let mut out = Vec::with_capacity(targets.len());
    for t in targets {
        let mut status = target_status(t, &stacks, &mut hosts, &state_file);
        status.service = t.service.clone();
        annotate(node, &mut status, &state_file, now);
        out.push(status);
    }
    let required: Vec<ModuleStatus> = extra
        .iter()
        .map(|m| {
            let t = Target::whole(m.clone());
            let mut status = target_status(&t, &stacks, &mut hosts, &state_file);
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
        errors: stacks.error().into_iter().collect(),
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

/// One target's status from what was read of the node, before the state
/// file's annotations.
fn target_status(
    t: &Target,
    stacks: &StackStatuses,
    hosts: &mut BTreeMap<String, ModuleStatus>,
    state_file: &StateFile,
) -> ModuleStatus {
    let m = &t.module;
    if let Some(reason) = m.invalid_reason() {
        return bare(m, State::Invalid, Some(reason.to_string()));
    }
    if m.is_stack() {
        return stacks.of(t, state_file.modules.get(&m.name));
    }
    hosts.remove(&m.name).unwrap_or_else(|| {
        bare(
            m,
            State::Unknown,
            Some("the init said nothing about it".into()),
        )
    })
}

/// A status with only its state and a reason said in words.
fn bare(m: &Module, state: State, reason: Option<String>) -> ModuleStatus {
    ModuleStatus {
        reason: Reasons::said(reason),
        ..ModuleStatus::of(m, state)
    }
}

/// Adds what hal itself remembers: the start limit and the desired state,
/// a failed start, a hold, a rolled-back update, a pull warning.
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
    // A digest a rollback put aside, until another is applied.
    if !rec.quarantine.is_empty() {
        s.quarantined = rec
            .quarantine
            .iter()
            .map(|q| QuarantinedStatus {
                service: q.service.clone(),
                digest: q.digest.clone(),
                since: q.at.whole_second(),
                reason: q.reason.clone(),
            })
            .collect();
        let held = rec.quarantine.iter();
        s.reason.then(Reason::Quarantined(
            held.map(|q| (q.service.clone(), q.digest.clone()))
                .collect(),
        ));
    }
    if let Some(w) = rec.pull_warning {
        s.reason.then(Reason::PullWarning(w));
    }
    s.checkpoint = rec
        .checkpoint
        .map(|c| crate::module::status::CheckpointStatus {
            bytes: c.bytes,
            at: c.at.whole_second(),
        });
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
    if s.reason.0.iter().all(|r| failed.covers(r)) {
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
    let read = collect_status_of(node, std::slice::from_ref(t), Detail::Settled).await;
    read.modules.first().map(|s| s.state)
}

/// The state of each target now, in their order, read at once ([`state_now`]
/// of many: one list call for all their stacks).
pub(crate) async fn states_now(node: &Node, targets: &[Target]) -> Vec<State> {
    if targets.is_empty() {
        return Vec::new();
    }
    let read = collect_status_of(node, targets, Detail::Settled).await;
    read.modules.into_iter().map(|s| s.state).collect()
}

/// The state of one stack target from its project's containers as a verb
/// just listed them under the module's lock ([`Snapshot::take`]), as
/// [`state_now`] reads it with no list of its own. What the module requires
/// adds a reason to its status, never a state, so it is not read.
pub(crate) async fn state_seen(node: &Node, t: &Target, seen: &Snapshot) -> State {
    let detail = Detail::Settled;
    let stacks =
        crate::stack::read_status_listed(&node.stacks, &node.store, &t.module, detail, seen).await;
    let (state_file, _) = node.store.read();
    let mut status = target_status(t, &stacks, &mut BTreeMap::new(), &state_file);
    status.service = t.service.clone();
    annotate(node, &mut status, &state_file, Stamp::now());
    status.state
}
