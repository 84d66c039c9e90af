//! The ledgers' index (`ledger/.index.json`): per module, the listed container ids its ledger already holds, so a listing of N modules reads one file and writes only the ledgers of modules with a new container.
//!
//! The index claims only this: every id under a module is in that module's
//! ledger. It is written after the ledgers it speaks for (a crash between the
//! two leaves an id the index lacks: one redundant look at that ledger next
//! time, never a generation lost), and every ledger write only adds ids (a
//! generation leaves a ledger only when [`super::KEEP_PER_REPLICA`] newer ones
//! of its replica are there). A missing or unreadable index is empty: every
//! listed module's ledger is read once and the index rebuilt.
//!
//! A module's entry is the ids of the listing that last brought something new,
//! not the ledger's whole history: it stays the size of the node's containers.
//! `.index.json` cannot be a module's ledger (a module name never starts with
//! `.`), nor `.index.json.lock` a module's ledger lock (it has no `.`).

use std::collections::{BTreeMap, BTreeSet};
use std::fs::OpenOptions;
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;

use anyhow::Context;
use serde::{Deserialize, Serialize};

use super::{DIR, Sighting};
use crate::state::Store;

/// The index's file in the ledger folder.
const FILE: &str = ".index.json";

/// Per module, ids its ledger holds.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Index {
    pub modules: BTreeMap<String, BTreeSet<String>>,
}

impl Index {
    /// The modules among `seen` with a container the index does not vouch
    /// for (only these need their ledger read).
    pub(crate) fn unknown<'a>(
        &self,
        seen: &'a [(String, Vec<Sighting>)],
    ) -> Vec<&'a (String, Vec<Sighting>)> {
        seen.iter()
            .filter(|(m, s)| {
                let known = self.modules.get(m);
                s.iter()
                    .any(|s| s.journal.is_some() || !known.is_some_and(|k| k.contains(&s.id)))
            })
            .collect()
    }

    /// Vouches for what was seen of `module` (now in its ledger): its entry
    /// becomes these ids.
    pub(crate) fn vouch(&mut self, module: &str, seen: &[Sighting]) {
        self.modules.insert(
            module.to_string(),
            seen.iter().map(|s| s.id.clone()).collect(),
        );
    }
}

impl Store {
    /// The ledgers' index (empty when missing or unreadable: nothing vouched).
    pub(crate) fn ledger_index(&self) -> Index {
        let Ok(file) = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(self.dir.join(DIR).join(FILE))
        else {
            return Index::default();
        };
        let mut text = Vec::new();
        if (&file).take(16 << 20).read_to_end(&mut text).is_err() {
            return Index::default();
        }
        serde_json::from_slice(&text).unwrap_or_default()
    }

    /// Adds a listing's containers to their modules' ledgers through the
    /// index, off the async thread: one file read when nothing is new; else
    /// the ledgers of the modules with a new id, then the index.
    pub(crate) async fn saw_listed(
        &self,
        seen: Vec<(String, Vec<Sighting>)>,
    ) -> anyhow::Result<()> {
        let store = self.clone();
        let now = crate::util::timefmt::Stamp::now().whole_second();
        tokio::task::spawn_blocking(move || store.saw_listed_blocking(&seen, now))
            .await
            .context("ledger task")?
    }

    /// [`Store::saw_listed`] on the calling thread.
    pub(crate) fn saw_listed_blocking(
        &self,
        seen: &[(String, Vec<Sighting>)],
        now: crate::util::timefmt::Stamp,
    ) -> anyhow::Result<()> {
        let index = self.ledger_index();
        let new = index.unknown(seen);
        if new.is_empty() {
            return Ok(());
        }
        // The ledgers first: a crash after them and before the index costs a
        // second look, not a generation.
        for (module, s) in &new {
            self.saw_blocking(module, s, now)?;
        }
        self.folder(DIR)?;
        let lock = self.open_private(&format!("{DIR}/{FILE}.lock"), true)?;
        lock.lock().context("lock the ledgers' index")?;
        // Another hal may have vouched for other modules since the read above.
        let mut index = self.ledger_index();
        for (module, s) in &new {
            index.vouch(module, s);
        }
        let text = serde_json::to_vec(&index).context("encode the ledgers' index")?;
        self.replace(&format!("{DIR}/{FILE}"), &text)?;
        drop(lock);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seen(id: &str) -> Sighting {
        Sighting {
            id: id.into(),
            service: "web".into(),
            number: 1,
            created: crate::util::timefmt::Stamp::from_secs(1),
            journal: None,
        }
    }

    fn store(tag: &str) -> (Store, std::path::PathBuf) {
        let dir = std::env::temp_dir().join(format!("hal-index-{}-{tag}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        (Store::new(dir.clone()), dir)
    }

    fn mtime(p: &std::path::Path) -> Option<std::time::SystemTime> {
        std::fs::metadata(p).and_then(|m| m.modified()).ok()
    }

    #[test]
    fn unknown_is_what_the_index_does_not_vouch_for() {
        let mut i = Index::default();
        let listing = vec![
            ("a".to_string(), vec![seen("1"), seen("2")]),
            ("b".to_string(), vec![seen("3")]),
        ];
        assert_eq!(i.unknown(&listing).len(), 2);
        i.vouch("a", &[seen("1"), seen("2")]);
        let names: Vec<&str> = i.unknown(&listing).iter().map(|e| e.0.as_str()).collect();
        assert_eq!(names, ["b"]);
        // A container gone from the listing is nothing new.
        assert!(i.unknown(&[("a".to_string(), vec![seen("2")])]).is_empty());
        // What a stop learns of its log driver always goes to the ledger.
        let told = Sighting {
            journal: Some(true),
            ..seen("1")
        };
        assert_eq!(i.unknown(&[("a".to_string(), vec![told])]).len(), 1);
    }

    #[test]
    fn an_unchanged_listing_writes_nothing_and_a_new_id_writes_its_module_alone() {
        let (s, dir) = store("listed");
        let led = |m: &str| dir.join(DIR).join(format!("{m}.json"));
        let listing = vec![
            ("a".to_string(), vec![seen("1")]),
            ("b".to_string(), vec![seen("2")]),
        ];
        s.saw_listed_blocking(&listing, crate::util::timefmt::Stamp::from_secs(100))
            .unwrap();
        assert_eq!(s.ledger("a").containers.len(), 1);
        let (a0, b0, i0) = (
            mtime(&led("a")),
            mtime(&led("b")),
            mtime(&dir.join(DIR).join(FILE)),
        );
        assert!(a0.is_some() && b0.is_some() && i0.is_some());
        // Long after (past the old last_seen step): still nothing written.
        std::thread::sleep(std::time::Duration::from_millis(20));
        s.saw_listed_blocking(&listing, crate::util::timefmt::Stamp::from_secs(100 + 3600))
            .unwrap();
        assert_eq!((mtime(&led("a")), mtime(&led("b"))), (a0, b0));
        assert_eq!(mtime(&dir.join(DIR).join(FILE)), i0);
        // A new generation of b: b's ledger and the index, not a's.
        let next = vec![
            ("a".to_string(), vec![seen("1")]),
            ("b".to_string(), vec![seen("2"), seen("4")]),
        ];
        s.saw_listed_blocking(&next, crate::util::timefmt::Stamp::from_secs(200))
            .unwrap();
        assert_eq!(mtime(&led("a")), a0);
        assert_ne!(mtime(&led("b")), b0);
        let ids: Vec<String> = s.ledger("b").containers.into_iter().map(|g| g.id).collect();
        assert_eq!(ids, ["2", "4"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_lost_or_torn_index_rereads_the_ledgers_and_loses_nothing() {
        let (s, dir) = store("torn");
        s.saw_listed_blocking(
            &[("a".to_string(), vec![seen("1")])],
            crate::util::timefmt::Stamp::from_secs(100),
        )
        .unwrap();
        // A crash after the ledger, before the index: the index never heard of "5".
        std::fs::write(dir.join(DIR).join(FILE), b"{torn").unwrap();
        s.saw_listed_blocking(
            &[("a".to_string(), vec![seen("1"), seen("5")])],
            crate::util::timefmt::Stamp::from_secs(200),
        )
        .unwrap();
        let ids: Vec<String> = s.ledger("a").containers.into_iter().map(|g| g.id).collect();
        assert_eq!(ids, ["1", "5"]);
        assert_eq!(
            s.ledger_index().modules["a"],
            ["1", "5"].iter().map(|s| s.to_string()).collect()
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
