//! What a start pulls in (the modules its targets require and that are not up) and what a stop pushes out first (the modules that require its targets and are up), with why.

use std::collections::BTreeMap;

use crate::module::status::State;
use crate::module::target::Target;
use crate::run::node::Node;
use crate::run::report::Report;

/// The targets a verb works on once the graph has had its say.
pub(crate) struct Expanded {
    /// The named targets and the modules added, requirements (start) or
    /// dependents (stop) first.
    pub(crate) targets: Vec<Target>,
    /// Each added module and the modules of the call it was added for: the
    /// ones that require it (start) or that it requires (stop).
    pub(crate) because: BTreeMap<String, Vec<String>>,
}

/// `targets` and, before them, every module they require (transitively)
/// that is not active now. An active requirement is left alone: it is not
/// touched, counted or reported.
pub(crate) async fn pull_in(node: &Node, targets: Vec<Target>) -> anyhow::Result<Expanded> {
    expand(node, targets, true).await
}

/// `targets` and, before them, every module that requires them
/// (transitively) and is not inactive now; a `MODULE/SERVICE` target
/// pushes nothing out.
pub(crate) async fn push_out(node: &Node, targets: Vec<Target>) -> anyhow::Result<Expanded> {
    expand(node, targets, false).await
}

async fn expand(node: &Node, targets: Vec<Target>, starting: bool) -> anyhow::Result<Expanded> {
    let names = names_of(&targets);
    let graph = node.graph()?;
    let all = if starting {
        graph.pull_in(&names)
    } else {
        // A stop of one service (`gw/web`) leaves the module's dependents be.
        let whole: Vec<Target> = targets
            .iter()
            .filter(|t| t.service.is_none())
            .cloned()
            .collect();
        graph.push_out(&names_of(&whole))
    };
    let mut added: Vec<Target> = Vec::new();
    let mut because = BTreeMap::new();
    let candidates: Vec<Target> = all
        .iter()
        .filter(|n| !names.contains(n))
        .filter_map(|n| node.inventory.get(n))
        .filter(|m| !m.is_invalid())
        .map(|m| Target::whole(m.clone()))
        .collect();
    // Their states read at once: one list call for all their stacks.
    let states = crate::run::status::states_now(node, &candidates).await;
    for (t, state) in candidates.into_iter().zip(states) {
        let n = &t.module.name;
        let leave = if starting {
            state == State::Active
        } else {
            state == State::Inactive
        };
        if leave {
            continue;
        }
        let why: Vec<String> = if starting {
            graph
                .required_by(n)
                .into_iter()
                .map(|e| e.from.clone())
                .collect()
        } else {
            graph
                .requires(n)
                .into_iter()
                .map(|e| e.to.clone())
                .collect()
        };
        let mut why: Vec<String> = why.into_iter().filter(|w| all.contains(w)).collect();
        why.sort();
        why.dedup();
        because.insert(n.clone(), why);
        added.push(t);
    }
    added.extend(targets);
    Ok(Expanded {
        targets: added,
        because,
    })
}

/// What `start`/`stop` says of an added module on stderr:
/// `db: starting first (app1 requires it)`, `app1: stopping first (requires db)`;
/// under `--dry-run`, which does nothing, `db: would start first (…)`,
/// `app1: would stop first (…)`.
pub(crate) fn words(module: &str, because: &[String], starting: bool, dry_run: bool) -> String {
    let list = because.join(", ");
    let doing = match (starting, dry_run) {
        (true, false) => "starting first",
        (true, true) => "would start first",
        (false, false) => "stopping first",
        (false, true) => "would stop first",
    };
    if starting {
        let verb = if because.len() == 1 {
            "requires"
        } else {
            "require"
        };
        format!("{module}: {doing} ({list} {verb} it)")
    } else {
        format!("{module}: {doing} (requires {list})")
    }
}

/// The modules of `targets`, each once, in their order.
pub(crate) fn names_of(targets: &[Target]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for t in targets {
        if !names.contains(&t.module.name) {
            names.push(t.module.name.clone());
        }
    }
    names
}

/// `names` in the graph's layers; one module needs no order, so the
/// watch's repairs never build the graph.
pub(super) fn layers(node: &Node, names: &[String], stopping: bool) -> Vec<Vec<String>> {
    if names.len() > 1 {
        node.layers(names, stopping)
    } else {
        vec![names.to_vec()]
    }
}

/// A target left untried, with its place among the targets.
pub(super) type Untried = (usize, Report);

/// A layer's targets: those to work on, and the reports of those left
/// untried (see [`untried`]), each with its place among `targets`.
pub(super) fn split<'a>(
    node: &Node,
    verb: &crate::run::verb::Verb,
    targets: &'a [Target],
    layer: &[String],
    failed: &[String],
) -> (Vec<(usize, &'a Target)>, Vec<Untried>) {
    let mut batch = Vec::new();
    let mut left = Vec::new();
    for (i, t) in targets.iter().enumerate() {
        if !layer.contains(&t.module.name) {
            continue;
        }
        match untried(node, verb, &t.module.name, failed) {
            Some(e) => left.push((i, Report::untried(t, e))),
            None => batch.push((i, t)),
        }
    }
    (batch, left)
}

/// Why a verb that needs its requirements up leaves `module` untried: a
/// module it requires failed earlier in the same run (`not started: db did not start`).
fn untried(
    node: &Node,
    verb: &crate::run::verb::Verb,
    module: &str,
    failed: &[String],
) -> Option<anyhow::Error> {
    if failed.is_empty() || !verb.needs_requirements_up() {
        return None;
    }
    let graph = node.graph().ok()?;
    let req = graph
        .requires(module)
        .into_iter()
        .find(|e| failed.contains(&e.to))?;
    Some(
        anyhow::anyhow!("not started: {} did not start", req.to)
            .context(verb.step(module.to_string())),
    )
}
