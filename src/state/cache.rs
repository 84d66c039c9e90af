//! A cache kept in the state directory (the inspect cache, `containers.json`): read and written by the store like every state file, but never trusted when it does not read, and never worth a failed command.

use std::io::Read;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::state::Store;
use crate::util::atomic::Sync;

/// The most of a cache file that is read: a larger one is not hal's.
const MAX_CACHE: u64 = 64 << 20;

impl Store {
    /// What the cache `name` holds; `None` when it is missing, a symlink,
    /// another user's, unreadable or not a `T` (a cache that does not read is
    /// ignored whole, never half-trusted).
    pub(crate) fn read_cache<T: DeserializeOwned>(&self, name: &str) -> Option<T> {
        let file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(self.dir().join(name))
            .ok()?;
        if file.metadata().ok()?.uid() != crate::util::sys::euid() {
            return None;
        }
        let mut text = Vec::new();
        file.take(MAX_CACHE).read_to_end(&mut text).ok()?;
        serde_json::from_slice(&text).ok()
    }

    /// Replaces the cache `name` with `value`, unsynced ([`Sync::Cache`]: a
    /// crash loses the newest copy, nothing more), and only into an existing
    /// state directory that is not a symlink and that neither its group nor
    /// others can write (a cache is never where a planted file could be
    /// taken for hal's). Nothing is created for it.
    pub(crate) fn keep_cache<T: Serialize>(&self, name: &str, value: &T) -> anyhow::Result<()> {
        let meta = std::fs::symlink_metadata(self.dir())?;
        if !meta.is_dir() || meta.permissions().mode() & 0o022 != 0 {
            anyhow::bail!(
                "state directory {}: not a private directory; cache {name} not kept",
                self.dir().display()
            );
        }
        let text = serde_json::to_vec(value)?;
        self.replace_as(name, &text, Sync::Cache)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn store(tag: &str) -> Store {
        let dir = std::env::temp_dir().join(format!("hal-cache-{}-{tag}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        Store::new(dir)
    }

    fn private(s: &Store) {
        std::fs::create_dir_all(s.dir()).unwrap();
        std::fs::set_permissions(s.dir(), std::fs::Permissions::from_mode(0o700)).unwrap();
    }

    #[test]
    fn a_cache_is_kept_private_and_read_back() {
        let s = store("kept");
        let mut v = BTreeMap::new();
        v.insert("a".to_string(), 1);
        // No state directory yet: nothing is made for a cache.
        assert!(s.keep_cache("c.json", &v).is_err());
        assert!(!s.dir().exists());
        private(&s);
        s.keep_cache("c.json", &v).unwrap();
        assert_eq!(s.read_cache::<BTreeMap<String, i32>>("c.json"), Some(v));
        let mode = std::fs::metadata(s.dir().join("c.json"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        std::fs::remove_dir_all(s.dir()).unwrap();
    }

    #[test]
    fn a_cache_that_does_not_read_or_is_a_symlink_is_none() {
        let s = store("odd");
        private(&s);
        assert_eq!(s.read_cache::<Vec<i32>>("c.json"), None);
        std::fs::write(s.dir().join("c.json"), b"{\"not\": \"a list\"}").unwrap();
        assert_eq!(s.read_cache::<Vec<i32>>("c.json"), None);
        let elsewhere = s.dir().join("elsewhere");
        std::fs::write(&elsewhere, b"[1]").unwrap();
        std::fs::remove_file(s.dir().join("c.json")).unwrap();
        std::os::unix::fs::symlink(&elsewhere, s.dir().join("c.json")).unwrap();
        assert_eq!(s.read_cache::<Vec<i32>>("c.json"), None);
        std::fs::remove_dir_all(s.dir()).unwrap();
    }

    #[test]
    fn a_directory_others_can_write_keeps_no_cache() {
        let s = store("open");
        private(&s);
        std::fs::set_permissions(s.dir(), std::fs::Permissions::from_mode(0o2775)).unwrap();
        assert!(s.keep_cache("c.json", &[1]).is_err());
        assert!(!s.dir().join("c.json").exists());
        std::fs::remove_dir_all(s.dir()).unwrap();
    }
}
