//! The node read again under the watch: the whole config, the modules under the services root and the graph between them, when a file they come from changed, modules came or went, or at a resync; the config file is looked at every second, and read as soon as it changed. A config that cannot be used keeps the one before (said once).

use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::{Duration, Instant};

use super::{FileSeen, ReadInputs as Inputs, Watcher};
use crate::error::HalError;
use crate::module::deps::Graph;
use crate::module::inventory::Inventory;
use crate::output::watch_log::{WatchEvent, WatchOwn};
use crate::run::Node;

/// How often the config file's time and size are looked at: a change brings
/// the pass forward, so a config is read as it changes (once settled), not at `--interval`.
pub(super) const CONFIG_GLANCE: Duration = Duration::from_secs(1);

impl Watcher<'_> {
    /// At each pass, with `inv` the modules found now: reads the node again
    /// (config, modules, graph) when one of its files changed, modules came
    /// or went, or at a resync. From then on waiting, repairs and the graph
    /// use the new one; a repair under way ends with the one it began with.
    pub(super) fn reread(&mut self, inv: Inventory, resync: bool) {
        let mut now = self.inputs_now(&inv);
        let first = self.read_inputs.is_none();
        let mut config_changed =
            !first && self.read_inputs.as_ref().map(|i| &i.config) != Some(&now.config);
        // A config written this instant may be half written (truncated, not
        // yet filled): it is read once it has settled, at the next glance.
        let settling = config_changed && now.config.as_ref().is_some_and(written_just_now);
        if settling {
            now.config = self.read_inputs.as_ref().and_then(|i| i.config.clone());
            config_changed = false;
        }
        let changed = self.read_inputs.as_ref() != Some(&now);
        let moved = inv.modules != self.node.inventory.modules;
        if !moved && (first || !(changed || resync)) {
            self.read_inputs = Some(now);
            return;
        }
        let old = Rc::clone(&self.node);
        let old_edges = old.graph().ok();
        let (node, config_read) = self.node_again(&old, inv, config_changed, settling);
        if config_read {
            self.log.emit(WatchEvent::ConfigRead);
        }
        if let Ok(g) = node.graph()
            && old_edges.as_deref().map(Graph::edges) != Some(g.edges())
        {
            let edges = g.edges().len();
            self.log.emit(WatchEvent::DependenciesChanged { edges });
        }
        self.node = Rc::new(node);
        if config_read && self.updates.reread(&self.node) {
            self.updates_started();
        }
        // What the new graph was read from is watched from now on, each file
        // as it was before this reading: a change made meanwhile is seen next pass.
        let mut after = self.inputs_now(&self.node.inventory);
        for (path, stamp) in &mut after.files {
            if let Ok(i) = now.files.binary_search_by(|(p, _)| p.cmp(path)) {
                *stamp = now.files[i].1;
            }
        }
        if after.config.as_ref().map(|c| &c.0) == now.config.as_ref().map(|c| &c.0) {
            after.config = now.config;
        }
        self.read_inputs = Some(after);
    }

    /// The node with the config file read again and the modules found now;
    /// with the old config when the new one cannot be used, the old graph
    /// when none can be built (each reason said once). True when a config
    /// file that changed was taken.
    fn node_again(
        &mut self,
        old: &Node,
        inv: Inventory,
        config_changed: bool,
        settling: bool,
    ) -> (Node, bool) {
        let mut problems = Vec::new();
        let mut tries = Vec::new();
        let read = match settling {
            true => Ok(old.config.clone()),
            false => crate::module::load::config(old.config.path.as_deref()),
        };
        match read {
            Ok(c) if settling => tries.push((c, false)),
            Ok(c) => {
                let taken = config_changed || c.path != old.config.path;
                tries.push((c, taken));
                if taken {
                    tries.push((old.config.clone(), false));
                }
            }
            Err(e) => {
                problems.push(config_kept(&e));
                tries.push((old.config.clone(), false));
            }
        }
        let mut again = None;
        for (config, taken) in tries {
            match old.again(config) {
                Ok(n) => {
                    again = Some((n, taken));
                    break;
                }
                Err(e) if taken => problems.push(config_kept(&e)),
                Err(e) => problems.push(format!(
                    "dependencies not read again, the ones before are kept: {e}"
                )),
            }
        }
        self.read_problems(problems);
        again.unwrap_or_else(|| {
            let mut inv = inv;
            crate::module::load::remember(&mut inv, old.store.read().0.modules.keys());
            let config = old.config.clone();
            (old.with(config, inv, old.graph_as_built()), false)
        })
    }

    /// Says each reason the node could not be read again, once while it lasts.
    fn read_problems(&mut self, now: Vec<String>) {
        for why in &now {
            if !self.read_problems.contains(why) {
                self.log.emit(WatchOwn::Problem {
                    module: None,
                    why: why.clone(),
                });
            }
        }
        self.read_problems = now.into_iter().collect();
    }

    /// Once a [`CONFIG_GLANCE`] is over: when the config file changed, the
    /// pass that reads it is now, not at `--interval`.
    pub(super) fn glance(&mut self, now: Instant) {
        if now >= self.next_glance {
            self.next_glance = now + CONFIG_GLANCE;
            if self.config_changed() {
                self.next_pass = now;
            }
        }
    }

    /// Whether the config file's time or size is not what the node was last
    /// read from (one `stat`): the watch then reads it at once, and a config
    /// broken for a moment between two passes is said, not missed.
    fn config_changed(&self) -> bool {
        let Some(read) = &self.read_inputs else {
            return false;
        };
        let now = self
            .node
            .config
            .path
            .as_deref()
            .map(|p| seen(p.to_path_buf()));
        read.config != now
    }

    /// What the node is read from, as the file system has it now.
    fn inputs_now(&self, inv: &Inventory) -> Inputs {
        let graph = self.node.graph().ok();
        let read = graph.as_deref().map_or(&[][..], Graph::read_from);
        inputs(self.node.config.path.as_deref(), inv, read)
    }
}

fn config_kept(e: &HalError) -> String {
    format!("config not read again, the one before is kept: {e}")
}

/// The config file's time and size first, then each stack's compose inputs':
/// the `*.yml`, `*.yaml` and `.env` in its directory, and every file its
/// graph was last read from (`include:` targets, `COMPOSE_FILE`'s in
/// subfolders, `env_file`s, `extends:` files).
fn inputs(config: Option<&Path>, inv: &Inventory, read: &[PathBuf]) -> Inputs {
    let mut files: Vec<PathBuf> = Vec::new();
    for m in &inv.modules {
        if let Some(dir) = m.stack_dir()
            && let Ok(entries) = std::fs::read_dir(dir)
        {
            files.extend(
                entries
                    .flatten()
                    .map(|e| e.path())
                    .filter(|p| compose_input(p)),
            );
        }
    }
    files.extend(read.iter().cloned());
    files.sort();
    files.dedup();
    Inputs {
        config: config.map(|p| seen(p.to_path_buf())),
        files: files.into_iter().map(seen).collect(),
    }
}

fn seen(p: PathBuf) -> FileSeen {
    let meta = std::fs::metadata(&p).ok();
    let stamp = meta.and_then(|m| Some((m.modified().ok()?, m.len())));
    (p, stamp)
}

/// How long after its last change a config file is taken as written whole.
const SETTLE: Duration = Duration::from_millis(300);

/// Whether the file was changed less than [`SETTLE`] ago (a writer may still
/// be filling it); a time in the future counts as settled.
fn written_just_now(seen: &FileSeen) -> bool {
    let Some((modified, _)) = seen.1 else {
        return false;
    };
    std::time::SystemTime::now()
        .duration_since(modified)
        .is_ok_and(|age| age < SETTLE)
}

fn compose_input(p: &Path) -> bool {
    p.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n == ".env" || n.ends_with(".yml") || n.ends_with(".yaml"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_written_this_instant_is_not_taken_until_it_settles() {
        let dir = std::env::temp_dir().join(format!("hal-settle-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("hal.toml");
        std::fs::write(&path, "").unwrap();
        assert!(written_just_now(&seen(path.clone())));
        let old = std::time::SystemTime::now() - Duration::from_secs(5);
        std::fs::File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(old)
            .unwrap();
        assert!(!written_just_now(&seen(path.clone())));
        assert!(!written_just_now(&(path, None)));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
