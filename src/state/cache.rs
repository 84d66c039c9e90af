//! A cache kept in the state directory (the inspect cache, `containers.json`): read and written by the store like every state file, but never trusted when it does not read, and never worth a failed command.

use std::io::Read;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::state::Store;

/// The most of a cache file that is read: a larger one is not hal's.
const MAX_CACHE: u64 = 64 << 20;

impl Store {
    /// What the cache `name` holds; `None` when it is missing, a symlink,
    /// neither ours nor root's, writable by its group or others, unreadable
    /// or not a `T` (a cache that does not read is ignored whole, never
    /// half-trusted). Root's cache in the node's shared directory is read by
    /// every member of the engine's group: only root could have written it.
    pub(crate) fn read_cache<T: DeserializeOwned>(&self, name: &str) -> Option<T> {
        let file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(self.dir().join(name))
            .ok()?;
        let meta = file.metadata().ok()?;
        let owner = meta.uid();
        if owner != crate::util::sys::euid() && owner != 0 || meta.mode() & 0o022 != 0 {
            return None;
        }
        let mut text = Vec::new();
        file.take(MAX_CACHE).read_to_end(&mut text).ok()?;
        serde_json::from_slice(&text).ok()
    }

    /// Replaces the cache `name` with `value`, unsynced ([`crate::util::atomic::Sync::Cache`]: a
    /// crash loses the newest copy, nothing more), writable by us alone, and
    /// only into an existing state directory that is not a symlink and that
    /// is private or ours (the node's group-shared one, kept by root: a
    /// member of the group may replace the file, and a file of theirs is
    /// never read as the cache). Nothing is created for it.
    pub(crate) fn keep_cache<T: Serialize>(&self, name: &str, value: &T) -> anyhow::Result<()> {
        let meta = std::fs::symlink_metadata(self.dir())?;
        let private = meta.permissions().mode() & 0o022 == 0;
        if !meta.is_dir() || !private && meta.uid() != crate::util::sys::euid() {
            anyhow::bail!(
                "state directory {}: neither private nor ours; cache {name} not kept",
                self.dir().display()
            );
        }
        let text = serde_json::to_vec(value)?;
        self.replace_cache(name, &text)
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
    fn a_shared_directory_of_ours_keeps_a_cache_only_we_can_write() {
        let s = store("open");
        private(&s);
        std::fs::set_permissions(s.dir(), std::fs::Permissions::from_mode(0o2775)).unwrap();
        s.keep_cache("c.json", &[1]).unwrap();
        let mode = std::fs::metadata(s.dir().join("c.json"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o022, 0, "{mode:o}");
        assert_eq!(s.read_cache::<Vec<i32>>("c.json"), Some(vec![1]));
        // A cache its group could have written is not read.
        std::fs::set_permissions(
            s.dir().join("c.json"),
            std::fs::Permissions::from_mode(0o664),
        )
        .unwrap();
        assert_eq!(s.read_cache::<Vec<i32>>("c.json"), None);
        std::fs::remove_dir_all(s.dir()).unwrap();
    }
}
