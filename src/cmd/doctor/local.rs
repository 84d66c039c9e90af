//! Checks of the local filesystem: the services root, the state directory, and who may write the compose files.

use std::fs::OpenOptions;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use super::check::Check;
use crate::cmd::ctx::Ctx;

/// How many world-writable paths a line names before it says "and N more".
const SHOWN: usize = 4;

/// The services root exists and can be read.
pub(super) fn services_root(ctx: &Ctx) -> Check {
    let root = &ctx.node.inventory.root;
    if ctx.node.inventory.root_problem.is_some() {
        use std::io::ErrorKind;
        let err = std::fs::read_dir(root).err();
        let fix = match err.as_ref().map(std::io::Error::kind) {
            Some(ErrorKind::NotFound) => format!("create it (mkdir -p {}), or", root.display()),
            Some(ErrorKind::PermissionDenied) => "let this user read it, or".to_string(),
            _ => "make it a directory, or".to_string(),
        };
        let why = err.map_or("cannot be read".to_string(), |e| e.to_string());
        return Check::fail(
            "services-root",
            format!("{}: {why}", root.display()),
            format!(
                "{fix} point hal at the services directory: --services-dir, HAL_SERVICES_DIR or services_dir in the config"
            ),
        );
    }
    let stacks = ctx.node.inventory.stacks().count();
    Check::pass(
        "services-root",
        format!("{}: {stacks} stacks", root.display()),
    )
}

/// hal can create and remove a file in its state directory (or create the directory).
pub(super) fn state_dir(ctx: &Ctx) -> Check {
    let dir = ctx.node.store.dir();
    let hint =
        "run hal as the user that owns it, or set HAL_STATE_DIR to a directory this user can write";
    match std::fs::symlink_metadata(dir) {
        Ok(meta) if meta.file_type().is_symlink() => {
            return Check::fail(
                "state-dir",
                format!("{} is a symlink, which hal refuses to use", dir.display()),
                "replace the symlink with a directory, or set HAL_STATE_DIR",
            );
        }
        Ok(meta) if !meta.is_dir() => {
            return Check::fail(
                "state-dir",
                format!("{} is not a directory", dir.display()),
                hint,
            );
        }
        Ok(_) => {}
        Err(_) => {
            // Not there yet: hal creates it on first use, if its nearest existing parent lets it.
            let Some(parent) = dir.ancestors().skip(1).find(|p| p.is_dir()) else {
                return Check::fail(
                    "state-dir",
                    format!("{}: no existing parent", dir.display()),
                    hint,
                );
            };
            return match probe(parent) {
                Ok(()) => Check::pass(
                    "state-dir",
                    format!(
                        "{} will be created on first use ({} is writable)",
                        dir.display(),
                        parent.display()
                    ),
                ),
                Err(e) => Check::fail(
                    "state-dir",
                    format!("{} cannot be created: {e}", dir.display()),
                    hint,
                ),
            };
        }
    }
    match probe(dir) {
        Ok(()) => Check::pass("state-dir", format!("{} is writable", dir.display())),
        Err(e) => Check::fail(
            "state-dir",
            format!("{} is not writable: {e}", dir.display()),
            hint,
        ),
    }
}

/// Creates and removes a private file in `dir`.
fn probe(dir: &Path) -> std::io::Result<()> {
    let path = dir.join(format!(".hal-doctor-{}", std::process::id()));
    let file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(&path)?;
    drop(file);
    std::fs::remove_file(&path)
}

/// Nobody but their owners may write the services root, a stack directory or its files:
/// whoever can write a compose file is root on a Docker host.
pub(super) fn permissions(ctx: &Ctx) -> Check {
    if ctx.node.inventory.root_problem.is_some() {
        return Check::pass("permissions", "nothing to check: no services root");
    }
    let mut paths = vec![ctx.node.inventory.root.clone()];
    for m in &ctx.node.inventory.modules {
        if let Some((dir, file)) = m.stack_files() {
            paths.push(dir.to_path_buf());
            paths.push(file.to_path_buf());
            let env = dir.join(".env");
            if env.is_file() {
                paths.push(env);
            }
        }
    }
    let open: Vec<PathBuf> = paths
        .into_iter()
        .filter(|p| std::fs::metadata(p).is_ok_and(|m| m.permissions().mode() & 0o002 != 0))
        .collect();
    if open.is_empty() {
        return Check::pass(
            "permissions",
            "the services root, stack directories and compose files are not writable by others",
        );
    }
    let mut named: Vec<String> = open
        .iter()
        .take(SHOWN)
        .map(|p| p.display().to_string())
        .collect();
    if open.len() > SHOWN {
        named.push(format!("and {} more", open.len() - SHOWN));
    }
    Check::fail(
        "permissions",
        format!("writable by anyone: {}", named.join(", ")),
        format!(
            "chmod {}: a compose file is root on a Docker host, so only its owner may write it",
            if open.len() > SHOWN {
                format!("-R o-w {}", ctx.node.inventory.root.display())
            } else {
                format!("o-w {}", named.join(" "))
            }
        ),
    )
}
