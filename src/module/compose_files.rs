//! What compose reads before any compose file: the directory's `.env` and the files
//! `COMPOSE_FILE` names. Module discovery needs it (a directory with only `.env` is a
//! stack), so it lives below `stack/`, which reads the rest of compose's inputs.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::module::dotenv;

/// The compose file names compose looks for, in its order of preference
/// (discovery and the stack backend both read this one list).
pub(crate) const COMPOSE_FILES: [&str; 4] = [
    "compose.yaml",
    "compose.yml",
    "docker-compose.yaml",
    "docker-compose.yml",
];

/// The compose files `COMPOSE_FILE` names for a project run in `dir` (the
/// environment, else the directory's `.env`), as compose finds a project
/// with no default file: `None` when it names none, `Err` with the reason
/// when `.env` cannot be read (or compose would refuse it) or a file it
/// names is missing. Reads `.env` only (interpolated as compose reads it):
/// cheap enough for discovery and completion.
pub(crate) fn named_files(dir: &Path) -> Option<Result<Vec<PathBuf>, String>> {
    let dotenv_path = dir.join(".env");
    let dotenv = match std::fs::read_to_string(&dotenv_path) {
        Ok(text) => match dotenv::parse(&text, &mut |k| std::env::var(k).ok()) {
            Ok(vars) => vars,
            Err(e) => {
                let at = dotenv_path.display();
                return Some(Err(format!("{at}:{}: {}", e.line, e.why)));
            }
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => BTreeMap::new(),
        Err(e) => {
            let why = crate::error::io_words(&e);
            return Some(Err(format!("{}: {why}", dotenv_path.display())));
        }
    };
    let var = |k: &str| std::env::var(k).ok().or_else(|| dotenv.get(k).cloned());
    let list = var("COMPOSE_FILE").filter(|v| !v.is_empty())?;
    // Named by this process's environment, it names files for every
    // directory: one where they are not is no project, not a broken one.
    let ours = std::env::var_os("COMPOSE_FILE").is_none();
    let sep = var("COMPOSE_PATH_SEPARATOR")
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| ":".to_string());
    let mut out = Vec::new();
    for part in list.split(sep.as_str()).filter(|p| !p.is_empty()) {
        let path = dir.join(part);
        if !path.is_file() {
            return ours.then(|| {
                Err(format!(
                    "COMPOSE_FILE in {} names {part}, which is not a file",
                    dotenv_path.display()
                ))
            });
        }
        out.push(path);
    }
    (!out.is_empty()).then_some(Ok(out))
}
