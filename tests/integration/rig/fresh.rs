//! Generated files kept in the repository: compare them with a fresh generation, or rewrite them on request.

use std::path::{Path, PathBuf};

/// The one command that rewrites every generated file (completions/, man/*.1, and
/// man/hal.toml.5 from src/module/keys.rs).
pub(crate) const REGENERATE: &str =
    "HAL_REGENERATE=1 cargo test --test integration -- completion:: manpages:: config_manual::";

/// The repository's own directory `name` (e.g. `man`).
pub(crate) fn repo_dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(name)
}

fn regenerating() -> bool {
    std::env::var("HAL_REGENERATE").is_ok_and(|v| v == "1" || v == "true")
}

/// Checks that `dir` holds exactly `files` among the names `owned` accepts;
/// with `HAL_REGENERATE=1`, makes it so instead. Panics with the list of
/// stale files and the command that regenerates them.
pub(crate) fn check(dir: &Path, files: &[(String, Vec<u8>)], owned: impl Fn(&str) -> bool) {
    if regenerating() {
        write(dir, files, &owned);
        return;
    }
    let mut stale = Vec::new();
    for (name, want) in files {
        match std::fs::read(dir.join(name)) {
            Ok(have) if &have == want => {}
            Ok(have) => stale.push(format!(
                "{name} differs from line {}",
                first_difference(&have, want)
            )),
            Err(_) => stale.push(format!("{name} is missing")),
        }
    }
    for extra in present(dir, &owned) {
        if !files.iter().any(|(n, _)| *n == extra) {
            stale.push(format!("{extra} is no longer generated"));
        }
    }
    assert!(
        stale.is_empty(),
        "{} is stale ({}); regenerate with:\n    {REGENERATE}",
        dir.display(),
        stale.join(", ")
    );
}

/// The 1-based line where `a` and `b` first differ.
fn first_difference(a: &[u8], b: &[u8]) -> usize {
    let same = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    a[..same].iter().filter(|c| **c == b'\n').count() + 1
}

fn write(dir: &Path, files: &[(String, Vec<u8>)], owned: &impl Fn(&str) -> bool) {
    std::fs::create_dir_all(dir).unwrap();
    for (name, text) in files {
        let path = dir.join(name);
        if std::fs::read(&path).is_ok_and(|old| &old == text) {
            continue;
        }
        // Atomic, so a test reading the file at the same time sees old or new, never half.
        let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
        std::fs::write(&tmp, text).unwrap();
        std::fs::rename(&tmp, &path).unwrap();
        eprintln!("wrote {}", path.display());
    }
    for extra in present(dir, owned) {
        if !files.iter().any(|(n, _)| *n == extra) {
            std::fs::remove_file(dir.join(&extra)).unwrap();
            eprintln!("removed {}", dir.join(extra).display());
        }
    }
}

/// Names of the files in `dir` that the generator owns.
fn present(dir: &Path, owned: &impl Fn(&str) -> bool) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with('.') && owned(n))
        .collect();
    names.sort();
    names
}

/// `man --warnings -l` of a page's text, 80 columns, no pager: whether it
/// succeeded, what it warned on stderr, and what it rendered.
pub(crate) fn render_man(name: &str, text: &[u8]) -> (bool, String, String) {
    use std::io::Write;
    let dir = std::env::temp_dir().join(format!("hal-man-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::File::create(&path)
        .and_then(|mut f| f.write_all(text))
        .unwrap();
    let out = std::process::Command::new("man")
        .args(["--warnings", "-l"])
        .arg(&path)
        .env("MANWIDTH", "80")
        .env_remove("MAN_KEEP_FORMATTING")
        .env("MANPAGER", "cat")
        .env("PAGER", "cat")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}
