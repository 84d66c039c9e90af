//! One atomic file replace for every file hal writes whole (its state, the kept runs, the ledger, the inspect cache, the metrics file, a unit's drop-in): a reader sees the old file or the new one, never half of either, and a symlink planted at the temporary name is refused.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::Path;

/// The mode a new file gets.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Mode {
    /// This mode less the process's umask (what `File::create` does with 0o666).
    Umask(u32),
    /// This mode whatever the umask took away (a group-shared state).
    Exact(u32),
}

/// How much the replace waits for the disk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Sync {
    /// The file and its directory are synced: after a crash, the old file or the new.
    Durable,
    /// Neither is synced (a cache: losing the newest copy loses nothing).
    Cache,
}

/// Replaces `path` with `text`: a new file `.NAME.tmp.PID` beside it
/// (`O_NOFOLLOW`, created new, in `mode`), written, renamed over `path`. The
/// temporary file is hidden and never ends in the target's suffix, so a
/// reader of `*.prom` or `*.conf` never sees it; it is removed on failure.
pub(crate) fn replace(path: &Path, text: &[u8], mode: Mode, sync: Sync) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.tmp.{}", std::process::id()));
    let _ = std::fs::remove_file(&tmp);
    let bits = match mode {
        Mode::Umask(m) | Mode::Exact(m) => m,
    };
    let mut f = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(bits)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(&tmp)?;
    let written = write(&mut f, text, mode, sync).and_then(|()| {
        drop(f);
        std::fs::rename(&tmp, path)
    });
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
        return written;
    }
    if sync == Sync::Durable
        && let Ok(d) = File::open(dir)
    {
        let _ = d.sync_all();
    }
    Ok(())
}

fn write(f: &mut File, text: &[u8], mode: Mode, sync: Sync) -> std::io::Result<()> {
    if let Mode::Exact(want) = mode
        && f.metadata()
            .is_ok_and(|m| m.permissions().mode() & 0o777 != want)
    {
        f.set_permissions(std::fs::Permissions::from_mode(want))?;
    }
    f.write_all(text)?;
    if sync == Sync::Durable {
        f.sync_all()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    fn scratch(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("hal-atomic-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn a_file_is_replaced_whole_in_its_mode_and_nothing_is_left_beside_it() {
        let dir = scratch("whole");
        let path = dir.join("state.json");
        std::fs::write(&path, "old").unwrap();
        replace(&path, b"new", Mode::Exact(0o640), Sync::Durable).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        assert_eq!(std::fs::metadata(&path).unwrap().mode() & 0o777, 0o640);
        let names: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
        assert_eq!(names.len(), 1, "{names:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_symlink_at_the_temporary_name_is_never_followed() {
        let dir = scratch("link");
        let path = dir.join("m.prom");
        let victim = dir.join("victim");
        std::fs::write(&victim, "mine").unwrap();
        // The name is removed first, so a planted link is replaced, not written through.
        let tmp = dir.join(format!(".m.prom.tmp.{}", std::process::id()));
        std::os::unix::fs::symlink(&victim, &tmp).unwrap();
        replace(&path, b"x 1\n", Mode::Umask(0o666), Sync::Cache).unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "mine");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "x 1\n");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_failed_replace_leaves_the_old_file() {
        let dir = scratch("fail");
        let path = dir.join("sub");
        // A directory cannot be renamed over by a file.
        std::fs::create_dir(&path).unwrap();
        std::fs::write(path.join("keep"), "k").unwrap();
        assert!(replace(&path, b"x", Mode::Umask(0o666), Sync::Durable).is_err());
        assert!(path.join("keep").exists());
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
