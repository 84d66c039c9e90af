//! Whether hal may run a command its config file names: only if nobody but root or the user running hal could have written it (as ssh and sudo decide).
//!
//! The config file and its directory (both the path as given and where it
//! resolves to, through symlinks) must be owned by root or by the effective
//! user of hal, and must not be writable by group or others. Anything else
//! could be changed by someone else to make hal — often root — run their program.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// Why a config file may not name commands to run.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Untrusted {
    /// The file or a directory on its way could not be read.
    #[error("{what} {}: {why}", path.display())]
    Unreadable {
        what: &'static str,
        path: PathBuf,
        why: std::io::Error,
    },
    #[error("{what} {} is owned by uid {uid}, not by root or by the user running hal (uid {me})", path.display())]
    Owner {
        what: &'static str,
        path: PathBuf,
        uid: u32,
        me: u32,
    },
    #[error("{what} {} is writable by {who} (mode {mode:04o}; fix: chmod go-w {})", path.display(), path.display())]
    Writable {
        what: &'static str,
        path: PathBuf,
        who: &'static str,
        mode: u32,
    },
}

/// Ok when `config` may name commands for this process to run; otherwise why not.
pub(crate) fn config_trusted(config: &Path) -> Result<(), Untrusted> {
    let me = crate::util::sys::euid();
    for (what, path) in paths_to_check(config)? {
        let meta = match std::fs::metadata(&path) {
            Ok(meta) => meta,
            Err(why) => return Err(Untrusted::Unreadable { what, path, why }),
        };
        judge(what, &path, meta.uid(), meta.mode(), me)?;
    }
    Ok(())
}

/// The file and its directory, as given and as resolved.
fn paths_to_check(config: &Path) -> Result<Vec<(&'static str, PathBuf)>, Untrusted> {
    let real = std::fs::canonicalize(config).map_err(|why| Untrusted::Unreadable {
        what: "config",
        path: config.to_path_buf(),
        why,
    })?;
    let parent = |p: &Path| match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let mut out = vec![
        ("config", real.clone()),
        ("config directory", parent(&real)),
    ];
    let given_dir = parent(config);
    if std::fs::canonicalize(&given_dir).ok().as_deref() != Some(parent(&real).as_path()) {
        out.push(("config directory", given_dir));
    }
    Ok(out)
}

/// The rule itself, on an owner and a mode (pure, for tests).
pub(crate) fn judge(
    what: &'static str,
    path: &Path,
    uid: u32,
    mode: u32,
    me: u32,
) -> Result<(), Untrusted> {
    let path = path.to_path_buf();
    if uid != 0 && uid != me {
        return Err(Untrusted::Owner {
            what,
            path,
            uid,
            me,
        });
    }
    let who = match (mode & 0o020 != 0, mode & 0o002 != 0) {
        (true, true) => "group and others",
        (true, false) => "its group",
        (false, true) => "others",
        (false, false) => return Ok(()),
    };
    Err(Untrusted::Writable {
        what,
        path,
        who,
        mode: mode & 0o7777,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn owner_must_be_root_or_me_and_nobody_else_may_write() {
        let p = Path::new("/etc/hal/hal.toml");
        assert!(judge("config", p, 0, 0o100644, 1000).is_ok());
        assert!(judge("config", p, 1000, 0o100600, 1000).is_ok());
        let e = judge("config", p, 1001, 0o100600, 1000)
            .unwrap_err()
            .to_string();
        assert!(e.contains("owned by uid 1001"), "{e}");
        let e = judge("config", p, 0, 0o100664, 0).unwrap_err().to_string();
        assert!(e.contains("writable by its group (mode 0664"), "{e}");
        let e = judge("config directory", Path::new("/tmp"), 0, 0o41777, 0)
            .unwrap_err()
            .to_string();
        assert!(e.contains("writable by group and others (mode 1777"), "{e}");
    }

    #[test]
    fn checks_the_real_file_and_both_directories() {
        let dir = std::env::temp_dir().join(format!("hal-trust-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("private")).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
        let private = dir.join("private");
        std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o700)).unwrap();
        let file = private.join("hal.toml");
        std::fs::write(&file, "").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert!(config_trusted(&file).is_ok());

        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o666)).unwrap();
        assert!(
            config_trusted(&file)
                .unwrap_err()
                .to_string()
                .starts_with("config ")
        );
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();

        // A symlink in a directory others may write: the link could be swapped.
        let open = dir.join("open");
        std::fs::create_dir_all(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
        let link = open.join("hal.toml");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        let e = config_trusted(&link).unwrap_err().to_string();
        assert!(e.contains("config directory") && e.contains("open"), "{e}");

        assert!(config_trusted(&dir.join("missing.toml")).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
