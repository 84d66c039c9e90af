//! Whose state this is: the node's (one per system engine, shared by root, its units and the engine's group) or one user's (a rootless engine) — and who may change it.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::error::HalError;
use crate::module::config::RestartLimit;
use crate::state::records::refusal;
use crate::state::{Place, Store};
use crate::util::timefmt::Stamp;

/// The node's state directory, for the system engine and host units.
pub(crate) const NODE_DIR: &str = "/var/lib/hal";

/// `HAL_STATE_DIR`; else, for a user other than root, the user's own state
/// when the engine belongs to this user or the user may not drive the
/// system engine at all (their hal drives only their own user units); else the node's.
pub(crate) fn locate(endpoint_flag: Option<&str>) -> (PathBuf, Place) {
    if let Some(d) = std::env::var_os("HAL_STATE_DIR").filter(|v| !v.is_empty()) {
        return (PathBuf::from(d), Place::Given);
    }
    if !crate::util::sys::is_root()
        && (users_own_engine(endpoint_flag) || !may_drive_system_engine(endpoint_flag))
        && let Some(d) = user_state_dir()
    {
        return (d, Place::User);
    }
    (PathBuf::from(NODE_DIR), Place::Node)
}

/// The user's own state directory, where an older hal kept a private copy.
pub(crate) fn user_state_dir() -> Option<PathBuf> {
    crate::util::sys::user_dir("XDG_STATE_HOME", ".local/state", "hal")
}

/// Whether the engine hal would talk to belongs to this user: a unix socket
/// this user owns, or one under the user's runtime directory (rootless
/// Docker, Podman). A TCP engine or the system socket is the node's.
pub(crate) fn users_own_engine(endpoint_flag: Option<&str>) -> bool {
    let Ok(ep) = crate::docker::endpoint::Endpoint::resolve(endpoint_flag) else {
        return false;
    };
    let Some(path) = ep.host.strip_prefix("unix://") else {
        return false;
    };
    let euid = crate::util::sys::euid();
    let runtime = std::env::var_os("XDG_RUNTIME_DIR")
        .filter(|v| !v.is_empty())
        .map_or_else(|| PathBuf::from(format!("/run/user/{euid}")), PathBuf::from);
    Path::new(path).starts_with(&runtime)
        || Path::new(path).starts_with(format!("/run/user/{euid}"))
        || std::fs::metadata(path).is_ok_and(|m| m.uid() == euid)
}

/// Whether this user may use the engine's socket (a TCP engine: yes).
fn may_drive_system_engine(endpoint_flag: Option<&str>) -> bool {
    let Ok(ep) = crate::docker::endpoint::Endpoint::resolve(endpoint_flag) else {
        return true;
    };
    ep.host
        .strip_prefix("unix://")
        .is_none_or(|path| nix_access(Path::new(path), libc::R_OK | libc::W_OK))
}

/// The group that may drive the system engine: its socket's group (`docker`).
pub(crate) fn engine_gid() -> Option<u32> {
    std::fs::metadata("/var/run/docker.sock")
        .ok()
        .map(|m| m.gid())
        .filter(|g| *g != 0)
}

/// A group's name from `/etc/group`, else its number.
pub(crate) fn group_name(gid: u32) -> String {
    let text = std::fs::read_to_string("/etc/group").unwrap_or_default();
    text.lines()
        .find_map(|l| {
            let mut f = l.split(':');
            let name = f.next()?;
            (f.nth(1)?.parse::<u32>().ok()? == gid).then(|| name.to_string())
        })
        .unwrap_or_else(|| gid.to_string())
}

impl Store {
    /// Mode of the files hal creates here.
    pub(crate) fn file_mode(&self) -> u32 {
        if self.place == Place::Node {
            0o664
        } else {
            0o600
        }
    }

    /// Mode of the directories hal creates here.
    pub(crate) fn dir_mode(&self) -> u32 {
        if self.place == Place::Node {
            0o2775
        } else {
            0o700
        }
    }

    /// The node's directory is group-shared (setgid 2775, so every file in it
    /// keeps its group; root gives it the engine's group); elsewhere a
    /// directory others or its group can write is refused.
    pub(crate) fn share_dir(&self, dir: &Path) -> anyhow::Result<()> {
        let meta = std::fs::symlink_metadata(dir)?;
        let euid = crate::util::sys::euid();
        if self.place == Place::Node && (euid == 0 || meta.uid() == euid) {
            if euid == 0
                && let Some(gid) = engine_gid().filter(|g| *g != meta.gid())
            {
                std::os::unix::fs::chown(dir, None, Some(gid))?;
            }
            if meta.permissions().mode() & 0o7777 != 0o2775 {
                std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o2775))?;
            }
            return Ok(());
        }
        let mode = meta.permissions().mode();
        let group_ok = self.place == Place::Node;
        if mode & 0o002 != 0 || (mode & 0o020 != 0 && !group_ok) {
            anyhow::bail!(
                "state directory {} is writable by others; use a private one (chmod 700 {}, or set HAL_STATE_DIR)",
                dir.display(),
                dir.display()
            );
        }
        Ok(())
    }

    /// Gives a file this store made its mode whatever the umask took away,
    /// so the next user of the engine's group can write it too.
    pub(crate) fn fix_mode(&self, file: &std::fs::File) {
        let want = self.file_mode();
        if file
            .metadata()
            .is_ok_and(|m| m.uid() == crate::util::sys::euid() && m.mode() & 0o777 != want)
        {
            let _ = file.set_permissions(std::fs::Permissions::from_mode(want));
        }
    }

    /// Refuses, before anything changes, a hal that cannot write this state:
    /// never a silent private copy. Says which group to join.
    pub(crate) fn check_writable(&self) -> Result<(), HalError> {
        if self.place != Place::Node || crate::util::sys::is_root() {
            return Ok(());
        }
        let dir = &self.dir;
        let user = crate::util::sys::user_name();
        let group = std::fs::metadata(dir)
            .ok()
            .map(|m| m.gid())
            .filter(|g| *g != 0)
            .or_else(engine_gid)
            .map_or_else(|| "docker".to_string(), group_name);
        let writable = |p: &Path| nix_access(p, libc::W_OK);
        let missing = !dir.exists();
        let ok = !missing
            && writable(dir)
            && ["state.json", "state.lock", "locks"]
                .iter()
                .all(|f| !dir.join(f).exists() || writable(&dir.join(f)));
        if ok {
            return Ok(());
        }
        let dir_gid = std::fs::metadata(dir).map(|m| m.gid()).ok();
        if let (Some(d), Some(e)) = (dir_gid, engine_gid())
            && d != e
        {
            let g = group_name(e);
            return Err(HalError::StateNotWritable(format!(
                "the node's state {} is not writable by {user}: it is not shared with the engine's group {g} yet; share it (sudo chgrp -R {g} {d} && sudo chmod -R g+rw {d} && sudo chmod 2775 {d}, as hal's package does), or run any hal verb once as root",
                dir.display(),
                d = dir.display()
            )));
        }
        let why = if missing {
            format!(
                "it does not exist yet (hal's package and `make install` create it for the group {group}, as does any hal verb run as root)"
            )
        } else {
            format!(
                "it is the node's state, shared by root's hal-watch.service and every user of the engine, and {user} may not write it"
            )
        };
        Err(HalError::StateNotWritable(format!(
            "the node's state {} is not writable by {user}: {why}; join its group (sudo usermod -aG {group} {user}, then log in again), or use sudo",
            dir.display()
        )))
    }

    /// Refuses (exit 5) a start while the limit is hit, unless `force`;
    /// counts nothing (the caller counts once something started).
    pub(crate) fn check_limit(
        &self,
        name: &str,
        limit: RestartLimit,
        force: bool,
    ) -> anyhow::Result<()> {
        if force {
            return Ok(());
        }
        let now = Stamp::now();
        let (mut state, _) = self.read();
        let Some(rec) = state.modules.get_mut(name) else {
            return Ok(());
        };
        rec.prune(limit, now);
        let used = rec.limit_use(limit, now);
        if used.used >= limit.burst {
            return Err(refusal(name, &used, now).into());
        }
        Ok(())
    }

    /// Where this state lives.
    pub(crate) fn place(&self) -> Place {
        self.place
    }
}

/// `access(2)` of `path` for `mode` by this process's user.
fn nix_access(path: &Path, mode: libc::c_int) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
        return false;
    };
    crate::util::sys::access(&c, mode)
}
