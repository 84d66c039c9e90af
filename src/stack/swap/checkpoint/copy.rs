//! The copy a checkpoint is: GNU `cp -a --reflink=auto --sparse=always` (an argument vector), one entry at a time, and its size on disk.

use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::Path;

use anyhow::{Context, bail};

/// GNU cp's flags: contents, modes, owners, timestamps, symlinks, hard
/// links and xattrs kept (`-a`), a reflink where the filesystem has one,
/// holes kept as holes.
const CP_FLAGS: [&str; 3] = ["-a", "--reflink=auto", "--sparse=always"];

/// Makes `dir` empty and new (mode 0700: a checkpoint may hold secrets), its parents too.
pub(super) fn fresh_dir(dir: &Path) -> anyhow::Result<()> {
    if dir.exists() {
        std::fs::remove_dir_all(dir).with_context(|| format!("remove {}", dir.display()))?;
    }
    if let Some(parent) = dir.parent() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(parent)
            .with_context(|| format!("create {}", parent.display()))?;
    }
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(dir)
        .with_context(|| format!("create {}", dir.display()))
}

/// Copies `from` (a directory or a file) to `to`, which does not exist yet.
pub(super) async fn copy(from: &Path, to: &Path) -> anyhow::Result<()> {
    cp(&[from.as_os_str(), to.as_os_str()]).await
}

/// Makes `to` what `from` holds: a directory's entries are removed, then
/// `from`'s copied in with the directory's own mode and owner; a file is copied over.
pub(super) async fn put_back(from: &Path, to: &Path) -> anyhow::Result<()> {
    let meta = std::fs::symlink_metadata(from)
        .with_context(|| format!("the checkpoint's {}", from.display()))?;
    if !meta.is_dir() {
        if to.exists() {
            std::fs::remove_file(to).with_context(|| format!("remove {}", to.display()))?;
        }
        return cp(&[from.as_os_str(), to.as_os_str()]).await;
    }
    if !to.exists() {
        std::fs::create_dir_all(to).with_context(|| format!("create {}", to.display()))?;
    }
    for entry in std::fs::read_dir(to).with_context(|| format!("read {}", to.display()))? {
        let path = entry?.path();
        let kind = std::fs::symlink_metadata(&path)?;
        let gone = if kind.is_dir() {
            std::fs::remove_dir_all(&path)
        } else {
            std::fs::remove_file(&path)
        };
        gone.with_context(|| format!("remove {}", path.display()))?;
    }
    // `FROM/.` onto `TO`: the entries, and the directory's own mode and owner.
    let dot = from.join(".");
    cp(&[dot.as_os_str(), to.as_os_str()]).await
}

async fn cp(paths: &[&std::ffi::OsStr]) -> anyhow::Result<()> {
    let out = tokio::process::Command::new("cp")
        .args(CP_FLAGS)
        .args(paths)
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .context("run cp")?;
    if !out.status.success() {
        let said = String::from_utf8_lossy(&out.stderr);
        let line = said.lines().last().unwrap_or("").trim();
        bail!("{line}");
    }
    Ok(())
}

/// The disk `path` holds: allocated blocks (a sparse file's holes count
/// nothing), each hard-linked file once.
pub(crate) fn disk_usage(path: &Path) -> anyhow::Result<u64> {
    let mut seen = std::collections::HashSet::new();
    let mut total = 0u64;
    let mut stack = vec![path.to_path_buf()];
    while let Some(p) = stack.pop() {
        let meta = match std::fs::symlink_metadata(&p) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e).with_context(|| format!("measure {}", p.display())),
        };
        if meta.nlink() > 1 && !meta.is_dir() && !seen.insert((meta.dev(), meta.ino())) {
            continue;
        }
        total = total.saturating_add(meta.blocks().saturating_mul(512));
        if meta.is_dir() {
            for e in std::fs::read_dir(&p).with_context(|| format!("read {}", p.display()))? {
                stack.push(e?.path());
            }
        }
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_copy_put_back_is_what_was_copied() {
        let dir = std::env::temp_dir().join(format!("hal-copy-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let data = dir.join("data");
        std::fs::create_dir_all(data.join("sub")).unwrap();
        std::fs::write(data.join("sub/a"), "one").unwrap();
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let kept = dir.join("kept");
        rt.block_on(copy(&data, &kept)).unwrap();
        std::fs::write(data.join("sub/a"), "two").unwrap();
        std::fs::write(data.join("new"), "x").unwrap();
        rt.block_on(put_back(&kept, &data)).unwrap();
        assert_eq!(std::fs::read_to_string(data.join("sub/a")).unwrap(), "one");
        assert!(!data.join("new").exists());
        assert!(disk_usage(&data).unwrap() > 0);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
