//! Each module's container generations as hal saw them (id, service, creation, first and last seen), bounded, in a small file per module (`ledger/MODULE.json`): the ids `hal logs` reads the journal by when a service logs there without the compose labels.
//!
//! Written by whoever sees the module's containers in a listing it made
//! anyway (a start's wait, a stop, `status`, the supervisor's looks and its
//! start events, `logs`), never with an engine call of its own. A listing goes
//! through the ledgers' index ([`index`]): one file says which ids each
//! ledger already holds, so only a module with a new container has its
//! ledger read and written. A write is a
//! read-merge-rewrite under the module's ledger lock (`ledger/.MODULE.lock`,
//! an `flock` the kernel drops with the process: a crash leaves no stuck
//! lock), to a new file renamed over the old one (a crash mid-write leaves the
//! old file whole). Nothing new seen, nothing written.

use std::fs::OpenOptions;
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use serde::{Deserialize, Serialize};

use crate::state::Store;
use crate::util::stored;
use crate::util::timefmt::Stamp;

pub(crate) mod index;

/// The folder of the state directory that holds one ledger per module.
const DIR: &str = "ledger";
/// Generations kept per service replica: the newest by creation time.
pub(crate) const KEEP_PER_REPLICA: usize = 32;
/// A generation's `last_seen` is rewritten only when this much older,
/// and only when its ledger is read anyway (a new container of the module, a
/// stop, `hal logs`, a start event): a listing of unchanged modules (`status`,
/// the supervisor's looks) reads and writes no ledger, so `last_seen` is a
/// lower bound of when hal last saw the container. Nothing decides by it.
const LAST_SEEN_STEP: Duration = Duration::from_secs(600);

/// One container of a module, as hal saw it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Generation {
    /// The full container id (the journal's `CONTAINER_ID_FULL`).
    pub id: String,
    pub service: String,
    /// Compose's container number (replica), 1 for the first.
    #[serde(default = "one")]
    pub number: u32,
    /// The engine's creation time. Times here are written in Unix seconds.
    #[serde(with = "stored::unix_s")]
    pub created: Stamp,
    /// When hal first and last saw it.
    #[serde(with = "stored::unix_s")]
    pub first_seen: Stamp,
    #[serde(with = "stored::unix_s")]
    pub last_seen: Stamp,
    /// Whether it logs to the journal, once hal has read its log config.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub journal: Option<bool>,
}

fn one() -> u32 {
    1
}

impl Generation {
    /// `service`, or `service-N` for a later replica (the log prefix).
    pub(crate) fn replica_name(&self) -> String {
        crate::docker::labels::replica_name(&self.service, self.number)
    }
}

/// A module's ledger: its containers, oldest first.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Ledger {
    pub containers: Vec<Generation>,
}

/// One container seen now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Sighting {
    pub id: String,
    pub service: String,
    pub number: u32,
    /// The engine's creation time, to the second.
    pub created: Stamp,
    /// Its log config's answer, when the one who saw it read it.
    pub journal: Option<bool>,
}

impl Ledger {
    /// Adds what was seen at `now` (to the second), keeps the newest [`KEEP_PER_REPLICA`] of
    /// each replica; whether anything changed (pure).
    pub(crate) fn merge(&mut self, seen: &[Sighting], now: Stamp) -> bool {
        let before = self.clone();
        for s in seen {
            match self.containers.iter_mut().find(|g| g.id == s.id) {
                Some(g) => {
                    if now.since(g.last_seen) >= LAST_SEEN_STEP {
                        g.last_seen = now;
                    }
                    if s.journal.is_some() {
                        g.journal = s.journal;
                    }
                }
                None => self.containers.push(Generation {
                    id: s.id.clone(),
                    service: s.service.clone(),
                    number: s.number,
                    created: s.created,
                    first_seen: now,
                    last_seen: now,
                    journal: s.journal,
                }),
            }
        }
        self.containers
            .sort_by(|a, b| (a.created, &a.id).cmp(&(b.created, &b.id)));
        let mut newer: std::collections::HashMap<(String, u32), usize> = Default::default();
        for i in (0..self.containers.len()).rev() {
            let g = &self.containers[i];
            let n = newer.entry((g.service.clone(), g.number)).or_default();
            *n += 1;
            if *n > KEEP_PER_REPLICA {
                self.containers.remove(i);
            }
        }
        *self != before
    }
}

impl Store {
    fn ledger_path(&self, module: &str) -> PathBuf {
        self.dir.join(DIR).join(format!("{module}.json"))
    }

    /// What hal saw of `module`'s containers (nothing when no file, or an unreadable one).
    pub(crate) fn ledger(&self, module: &str) -> Ledger {
        let Ok(file) = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(self.ledger_path(module))
        else {
            return Ledger::default();
        };
        let mut text = Vec::new();
        if (&file).take(4 << 20).read_to_end(&mut text).is_err() {
            return Ledger::default();
        }
        serde_json::from_slice(&text).unwrap_or_default()
    }

    /// Adds what was seen of each module's containers to its ledger, off the
    /// async thread; a module with nothing new is not written.
    pub(crate) async fn saw(&self, seen: Vec<(String, Vec<Sighting>)>) -> anyhow::Result<()> {
        let store = self.clone();
        let now = Stamp::now().whole_second();
        tokio::task::spawn_blocking(move || {
            seen.iter()
                .filter(|(_, s)| !s.is_empty())
                .try_for_each(|(module, s)| store.saw_blocking(module, s, now))
        })
        .await
        .context("ledger task")?
    }

    /// [`Store::saw`] of one module on the calling thread.
    fn saw_blocking(&self, module: &str, seen: &[Sighting], now: Stamp) -> anyhow::Result<()> {
        if !self.ledger(module).merge(seen, now) {
            return Ok(());
        }
        self.folder(DIR)?;
        let lock = self.open_private(&format!("{DIR}/.{module}.lock"), true)?;
        lock.lock()
            .with_context(|| format!("lock the ledger of {module}"))?;
        // Another hal may have written since the read above.
        let mut ledger = self.ledger(module);
        if !ledger.merge(seen, now) {
            return Ok(());
        }
        let text = serde_json::to_vec_pretty(&ledger).context("encode the ledger")?;
        self.replace(&format!("{DIR}/{module}.json"), &text)?;
        drop(lock);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(secs: i64) -> Stamp {
        Stamp::from_secs(secs)
    }

    fn seen(id: &str, service: &str, created: i64) -> Sighting {
        Sighting {
            id: id.into(),
            service: service.into(),
            number: 1,
            created: t(created),
            journal: None,
        }
    }

    #[test]
    fn merge_adds_refreshes_coarsely_and_bounds_each_replica() {
        let mut l = Ledger::default();
        assert!(l.merge(&[seen("a", "web", 10), seen("b", "db", 5)], t(100)));
        assert_eq!(l.containers[0].id, "b", "oldest first");
        // Seen again soon: nothing to write.
        assert!(!l.merge(&[seen("a", "web", 10)], t(101)));
        assert!(l.merge(&[seen("a", "web", 10)], t(100).plus(LAST_SEEN_STEP)));
        let learned = Sighting {
            journal: Some(true),
            ..seen("b", "db", 5)
        };
        assert!(l.merge(&[learned], t(102)));
        assert_eq!(l.containers[0].journal, Some(true));
        let many: Vec<Sighting> = (0..40)
            .map(|i| seen(&format!("w{i}"), "web", 20 + i))
            .collect();
        assert!(l.merge(&many, t(200)));
        let web: Vec<&Generation> = l.containers.iter().filter(|g| g.service == "web").collect();
        assert_eq!(web.len(), KEEP_PER_REPLICA);
        assert_eq!(web.last().unwrap().id, "w39");
        assert!(l.containers.iter().any(|g| g.id == "b"), "db keeps its own");
    }

    #[tokio::test]
    async fn saw_writes_only_what_is_new_and_reads_back() {
        let dir = std::env::temp_dir().join(format!("hal-ledger-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let s = Store::new(dir.clone());
        assert_eq!(s.ledger("m"), Ledger::default());
        s.saw(vec![("m".into(), vec![seen("a", "web", 1)])])
            .await
            .unwrap();
        let path = dir.join(DIR).join("m.json");
        let written = std::fs::metadata(&path).unwrap().modified().unwrap();
        s.saw(vec![("m".into(), vec![seen("a", "web", 1)])])
            .await
            .unwrap();
        assert_eq!(
            std::fs::metadata(&path).unwrap().modified().unwrap(),
            written
        );
        assert_eq!(s.ledger("m").containers.len(), 1);
        std::fs::write(&path, b"{not json").unwrap();
        assert_eq!(s.ledger("m"), Ledger::default(), "a torn file reads empty");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_ledger_written_before_reads_and_is_written_back_the_same() {
        let text = r#"{"containers":[{"id":"a","service":"web","number":2,"created":1764900000,"first_seen":1764900001,"last_seen":1764900601,"journal":true}]}"#;
        let l: Ledger = serde_json::from_str(text).unwrap();
        assert_eq!(l.containers[0].created, t(1_764_900_000));
        assert_eq!(serde_json::to_string(&l).unwrap(), text);
    }
}
