//! The node's module graph, built once per process when a verb asks: declared edges from the config, inferred ones from what each stack's compose files use.

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::error::HalError;
use crate::module::Module;
use crate::module::config::Config;
use crate::module::deps::{Edge, Graph, Origin, Strength, Ties, infer};
use crate::module::inventory::Inventory;
use crate::stack::Models;

/// Below this many stacks a thread costs more than it saves.
const PARALLEL_FROM: usize = 64;

/// Builds the graph, each stack's files read through `models` (the cache of
/// what compose reads); a `requires` naming no module, or a cycle (declared or
/// inferred), is a config error naming it (exit 2).
pub(super) fn build(
    config: &Config,
    inventory: &Inventory,
    models: &Models,
) -> Result<Graph, HalError> {
    let declared = config.declared_edges();
    for e in declared.iter().filter(|e| e.strength == Strength::Requires) {
        if inventory.get(&e.to).is_none() {
            return Err(config.key_error(
                &format!("module.{}.requires", e.from),
                format!(
                    "{:?} is no module (`hal module list` shows the modules in {})",
                    e.to,
                    inventory.root.display()
                ),
            ));
        }
    }
    let stacks: Vec<&Module> = inventory.stacks().collect();
    let mut files = Vec::new();
    let ties: BTreeMap<String, Ties> = read_ties(&stacks, models)
        .into_iter()
        .map(|(name, (ties, read))| {
            files.extend(read);
            (name, ties)
        })
        .collect();
    let (inferred, unowned) = infer(&ties);
    let mut edges: Vec<Edge> = declared;
    edges.extend(inferred);
    let graph = Graph::with_unowned(edges, unowned).with_files(files);
    if let Some(cycle) = graph.cycle() {
        let words = graph.describe_cycle(&cycle);
        let key = match graph.edge(&cycle[0], &cycle[1]).map(|e| &e.origin) {
            Some(Origin::Config { key, .. }) => format!("module.{}.{key}", cycle[0]),
            _ => format!("module.{}", cycle[0]),
        };
        return Err(config.key_error(&key, words));
    }
    Ok(graph)
}

/// What each stack's compose files use outside it, and the files read; a
/// stack whose files cannot be read has none (its start says what is wrong).
fn read_ties(stacks: &[&Module], models: &Models) -> BTreeMap<String, (Ties, Vec<PathBuf>)> {
    // What the cache still holds first, on this thread (stats only); the
    // rest is parsed, on many threads when there are many.
    let mut kept = BTreeMap::new();
    let mut read: Vec<&Module> = Vec::new();
    for m in stacks {
        let Some(dir) = m.stack_dir() else { continue };
        match crate::stack::kept_ties_of(models, dir, &m.name) {
            Some(t) => {
                kept.insert(m.name.clone(), t);
            }
            None => read.push(m),
        }
    }
    kept.extend(parse_ties(&read, models));
    kept
}

/// [`read_ties`] of the stacks whose files must be read.
fn parse_ties(stacks: &[&Module], models: &Models) -> BTreeMap<String, (Ties, Vec<PathBuf>)> {
    let of = |part: &[&Module]| -> Vec<(String, (Ties, Vec<PathBuf>))> {
        part.iter()
            .filter_map(|m| {
                let dir = m.stack_dir()?;
                crate::stack::ties_of(models, dir, &m.name).map(|t| (m.name.clone(), t))
            })
            .collect()
    };
    let cpus = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
    if cpus < 2 || stacks.len() < PARALLEL_FROM {
        return of(stacks).into_iter().collect();
    }
    let chunk = stacks.len().div_ceil(cpus.min(8));
    std::thread::scope(|s| {
        let parts: Vec<_> = stacks
            .chunks(chunk)
            .map(|p| s.spawn(move || of(p)))
            .collect();
        parts
            .into_iter()
            .zip(stacks.chunks(chunk))
            .flat_map(|(h, p)| h.join().unwrap_or_else(|_| of(p)))
            .collect()
    })
}
