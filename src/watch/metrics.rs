//! `hal watch --metrics`: the modules as the watch last read them, its repairs and its last pass, written for node_exporter's textfile collector.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::module::Module;
use crate::module::status::ModuleStatus;
use crate::module::update_tally::UpdateTally;
use crate::output::prometheus::{WatchSeries, render};
use crate::run::Node;
use crate::util::atomic::{self, Mode, Sync};
use crate::util::timefmt::Stamp;
use crate::watch::policy::RepairScope;

/// What the metrics file says, kept between writes.
pub(super) struct Metrics {
    path: PathBuf,
    /// Each module's status as last read.
    modules: BTreeMap<String, ModuleStatus>,
    /// Repairs that ran, by (module, action).
    repairs: BTreeMap<(String, String), u64>,
    last_pass: Stamp,
    /// Why the last write failed, logged once until a write works again.
    failing: Option<String>,
    /// Whether hal's state could be written, as the watch last found.
    pub(super) state_writable: bool,
}

impl Metrics {
    pub(super) fn new(path: PathBuf) -> Metrics {
        Metrics {
            path,
            modules: BTreeMap::new(),
            repairs: BTreeMap::new(),
            last_pass: Stamp::now(),
            failing: None,
            state_writable: true,
        }
    }
}

/// The repair's action label: `containers`, `module`, or `escalated` (the
/// whole module because a repair of its containers did not hold).
fn action(scope: &RepairScope) -> &'static str {
    match scope {
        RepairScope::Containers(_) => "containers",
        RepairScope::Module => "module",
        RepairScope::Escalated(_) => "escalated",
    }
}

impl Metrics {
    /// A pass began: the time the metrics give as the watch's last.
    pub(super) fn pass(&mut self) {
        self.last_pass = Stamp::now();
    }

    /// Keeps the statuses a look read.
    pub(super) fn saw(&mut self, statuses: &[ModuleStatus]) {
        for s in statuses.iter().filter(|s| s.service.is_none()) {
            self.modules.insert(s.name.clone(), s.clone());
        }
    }

    /// Counts a repair that succeeded (`ok`: one refused by the start limit,
    /// or that failed, is not counted).
    pub(super) fn repaired(&mut self, module: &str, scope: &RepairScope, ok: bool) {
        if ok {
            let key = (module.to_string(), action(scope).to_string());
            *self.repairs.entry(key).or_default() += 1;
        }
    }

    /// Replaces the metrics file with what the watch knows of `modules` now
    /// (held: those in `holds`). Returns why it failed, once per new reason.
    pub(super) fn write<T>(
        &mut self,
        node: &Node,
        modules: &[Module],
        holds: &BTreeMap<String, T>,
        updates: &BTreeMap<String, UpdateTally>,
    ) -> Option<String> {
        let statuses: Vec<ModuleStatus> = modules
            .iter()
            .filter_map(|module| self.modules.get(&module.name))
            .map(|s| {
                let mut s = s.clone();
                // The holds as the watch last wrote them, not as the read before saw them.
                s.held = holds
                    .get(&s.name)
                    .map(|_| s.held.clone().unwrap_or_default());
                s
            })
            .collect();
        let series = WatchSeries {
            repairs: &self.repairs,
            last_pass: self.last_pass,
            state_writable: self.state_writable,
        };
        let summary = crate::run::node_summary(node, &statuses);
        let text = render(&statuses, updates, Some(&series), Some(&summary));
        match replace(&self.path, &text) {
            Ok(()) => {
                self.failing = None;
                None
            }
            Err(e) => {
                let why = format!("metrics: write {}: {e}", self.path.display());
                let new = self.failing.as_ref() != Some(&why);
                self.failing = Some(why.clone());
                new.then_some(why)
            }
        }
    }
}

/// Writes `text` beside `path` and renames it over `path`: a reader sees the
/// old file or the new one, never half of one (node_exporter reads only
/// `*.prom`, and the temporary file is `.NAME.tmp.PID`). In the mode
/// `File::create` gives, for the collector to read.
pub(super) fn replace(path: &Path, text: &str) -> std::io::Result<()> {
    atomic::replace(path, text.as_bytes(), Mode::Umask(0o666), Sync::Durable)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replace_leaves_the_new_text_and_no_temporary_file() {
        let dir = std::env::temp_dir().join(format!("hal-metrics-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("hal.prom");
        replace(&path, "a 1\n").unwrap();
        replace(&path, "a 2\n").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "a 2\n");
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
