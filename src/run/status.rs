//! The state of many modules at once: one container-list call for all stacks, one init call per scope.

use crate::error::Exit;
use crate::module::status::Detail;
use crate::module::status::{HeldStatus, LimitStatus, ModuleStatus, State};
use crate::module::target::Target;
use crate::module::{Kind, Module};
use crate::run::node::Node;
use crate::stack::assess::{ContainerFacts, assess};
use crate::state::records::StateFile;
use crate::util::timefmt::{self, Stamp};

/// The status of many modules, and what went wrong reading it.
pub struct NodeStatus {
    pub modules: Vec<ModuleStatus>,
    /// What `status` exits with: 0 all active, 3 some not, 6 an engine is unreachable.
    pub exit: Exit,
    /// Engines that could not be asked (printed as errors).
    pub errors: Vec<String>,
    /// Things worth saying that do not change the answer (a corrupt state file…).
    pub warnings: Vec<String>,
}

/// Every given module's status, and the exit code `status` should end with.
/// `detail` says how much to read of settled containers: exact times and
/// counts cost an inspect per container, the list call alone says the rest.
pub async fn collect(node: &Node, modules: &[Module], detail: Detail) -> NodeStatus {
    let targets: Vec<Target> = modules.iter().cloned().map(Target::whole).collect();
    collect_targets(node, &targets, detail).await
}

/// The status of every target: a whole module, or one service of a stack
/// (that service's containers alone, and the state they add up to).
pub async fn collect_targets(node: &Node, targets: &[Target], detail: Detail) -> NodeStatus {
    let mut modules: Vec<Module> = Vec::new();
    for t in targets {
        if !modules.contains(&t.module) {
            modules.push(t.module.clone());
        }
    }
    let modules = modules.as_slice();
    let now = Stamp::now();
    let (state_file, warning) = node.store.read();
    let mut warnings: Vec<String> = warning.into_iter().collect();
    let stacks: Vec<&str> = modules
        .iter()
        .filter(|m| matches!(m.kind, Kind::Stack { .. }))
        .map(|m| m.name.as_str())
        .collect();
    let mut exit = Exit::Ok;
    let mut stack_facts = Ok(Default::default());
    if !stacks.is_empty() {
        stack_facts = match node.stacks.engine().await {
            // Scripts get exact start times and restart counts; the table only
            // needs what `docker ps` already says about settled containers.
            Ok(engine) => crate::stack::node_facts(&engine, node.store.dir(), &stacks, detail)
                .await
                .map_err(|e| Unread {
                    row: crate::error::row_reason(&e),
                    whole: crate::error::OneLine(&e).to_string(),
                }),
            Err(e) => Err(Unread {
                row: e.row_reason(),
                whole: e.to_string(),
            }),
        };
        if stack_facts.is_err() {
            exit = Exit::Unreachable;
        }
    }
    let (mut hosts, hosts_unreachable) = crate::host::node_status(&node.hosts, modules).await;
    if hosts_unreachable {
        exit = Exit::Unreachable;
    }
    let empty = Vec::new();
    let mut out = Vec::with_capacity(targets.len());
    for t in targets {
        let m = &t.module;
        let mut status = match &m.kind {
            Kind::Stack { .. } => match &stack_facts {
                Ok(map) => {
                    let all = map.get(&m.name).unwrap_or(&empty);
                    match &t.service {
                        Some(svc) => {
                            let mine: Vec<ContainerFacts> =
                                all.iter().filter(|c| &c.service == svc).cloned().collect();
                            stack_status(m, &mine)
                        }
                        None => stack_status(m, all),
                    }
                }
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
        };
        status.service = t.service.clone();
        annotate(node, &mut status, &state_file, now);
        out.push(status);
    }
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

/// Why the engine could not be read: each row says the cause, and the whole
/// error (with its fix, the same for every row) is printed once.
struct Unread {
    row: String,
    whole: String,
}

fn bare(m: &Module, state: State, reason: Option<String>) -> ModuleStatus {
    ModuleStatus {
        reason,
        ..ModuleStatus::of(m, state)
    }
}

fn stack_status(m: &Module, facts: &[ContainerFacts]) -> ModuleStatus {
    let refs: Vec<&ContainerFacts> = facts.iter().collect();
    let (state, reason) = assess(&refs);
    let main = facts.iter().filter(|c| !c.oneoff);
    let since = if matches!(state, State::Active | State::Starting | State::Degraded) {
        main.filter_map(|c| c.started_at.as_deref().and_then(timefmt::parse))
            .max()
    } else {
        main.filter_map(|c| c.finished_at.as_deref().and_then(timefmt::parse))
            .max()
    };
    ModuleStatus {
        since: since.map(Stamp::whole_second),
        services: facts
            .iter()
            .filter(|c| !c.oneoff)
            .map(ContainerFacts::to_status)
            .collect(),
        ..bare(m, state, reason)
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
        interval: crate::util::duration::format(used.interval),
        // To the second, as published (and as the supervisor has always read it).
        free_at: used.free_at.map(Stamp::whole_second),
    };
    s.desired = rec.desired;
    if let Some(free) = used.free_at
        && s.state != State::Active
    {
        let held = format!(
            "start limit hit: {} starts in {}, free again at {} UTC",
            used.used,
            s.limit.interval,
            free.clock()
        );
        s.reason = Some(match s.reason.take() {
            Some(r) => format!("{held}; {r}"),
            None => held,
        });
        if matches!(s.state, State::Inactive | State::Degraded | State::Starting) {
            s.state = State::Failed;
        }
    }
    // A hold of hal watch's, while the module is down: held, and until when.
    if let Some(h) = &rec.hold
        && s.state != State::Active
    {
        let until = h.until();
        s.held = Some(HeldStatus {
            since: crate::state::records::stamp_of_ms(h.since),
            until,
            reason: h.reason.clone(),
        });
        let held = format!("held by hal watch until {} UTC", until.clock());
        s.reason = Some(match s.reason.take() {
            Some(r) => format!("{held}; {r}"),
            None => held,
        });
    }
    if let Some(w) = rec.pull_warning {
        s.reason = Some(match s.reason.take() {
            Some(r) => format!("{r}; {w}"),
            None => w,
        });
    }
}

/// The state of one target now, as `status` reads it (`None` when it cannot be read).
pub async fn state_now(node: &Node, t: &Target) -> Option<State> {
    let read = collect_targets(node, std::slice::from_ref(t), Detail::Settled).await;
    read.modules.first().map(|s| s.state)
}
