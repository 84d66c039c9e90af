//! The one place that says whether a stack's inputs changed since hal last ran compose on it: a fingerprint of everything compose reads.
//!
//! The key covers, for the project compose sees in the module directory with
//! no `-f` (see `inputs.rs`): the names and contents of every file compose
//! reads (compose files and overrides, `include:` and `extends:` targets,
//! `env_file`s, `.env`, file-backed configs and secrets; a missing optional
//! file counts as absent), the values of the variables those files
//! interpolate and of `COMPOSE_FILE`, `COMPOSE_PATH_SEPARATOR`,
//! `COMPOSE_PROFILES` and `COMPOSE_PROJECT_NAME`, and hal's version. It does
//! not cover the engine's side (images, containers): the fast path checks those.
//! The image list compose gave is reused under this key plus the compose
//! version (`ModuleRecord::compose_version`), so a start after `down` runs `up` alone.

use std::path::Path;

use crate::stack::project::inputs::{self, InputError, Inputs};

/// Largest file read into the fingerprint; a larger one makes the module
/// always go through compose.
const MAX_FILE: u64 = 4 << 20;

/// A module's fingerprint (`None`: a file could not be read whole, so
/// compose decides, always).
pub(crate) struct Digest {
    pub key: Option<String>,
}

/// Reads what compose reads in `dir` and fingerprints it.
pub(crate) fn of_module(dir: &Path) -> Result<Digest, InputError> {
    let inputs = inputs::read(dir)?;
    let key = key(dir, &inputs);
    Ok(Digest { key })
}

/// [`of_module`] on a blocking thread, off the async ones: it reads and
/// hashes every file compose reads, and many modules start at once.
pub(crate) async fn digest_of_module(dir: &Path) -> anyhow::Result<Result<Digest, InputError>> {
    let dir = dir.to_path_buf();
    tokio::task::spawn_blocking(move || of_module(&dir))
        .await
        .map_err(anyhow::Error::new)
}

/// FNV-1a over the files' names and contents, in name order, and the variables.
fn key(dir: &Path, inputs: &Inputs) -> Option<String> {
    let mut h = Fnv::new();
    h.write(env!("CARGO_PKG_VERSION").as_bytes());
    for path in &inputs.files {
        let name = path.strip_prefix(dir).unwrap_or(path);
        h.field(name.as_os_str().as_encoded_bytes());
        match std::fs::metadata(path) {
            Ok(m) if m.len() > MAX_FILE => return None,
            Ok(_) => h.field(&std::fs::read(path).ok()?),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => h.write(&[0xff]),
            Err(_) => return None,
        }
    }
    for (k, v) in &inputs.vars {
        h.field(k.as_bytes());
        match v {
            Some(v) => h.field(v.as_bytes()),
            None => h.write(&[0xff]),
        }
    }
    Some(format!("fnv1a64:{:016x}", h.0))
}

struct Fnv(u64);

impl Fnv {
    fn new() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }

    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 ^= u64::from(*b);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }

    /// Length-prefixed, so that two fields never read as one.
    fn field(&mut self, bytes: &[u8]) {
        self.write(&(bytes.len() as u64).to_le_bytes());
        self.write(bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key_of(dir: &Path) -> String {
        of_module(dir).unwrap().key.unwrap()
    }

    #[test]
    fn changes_when_compose_inputs_change_and_only_then() {
        let dir = std::env::temp_dir().join(format!("hal-digest-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("data")).unwrap();
        std::fs::create_dir_all(dir.join("env")).unwrap();
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        std::fs::write(dir.join("compose.yaml"), "services: {}\n").unwrap();
        let a = key_of(&dir);
        std::fs::write(dir.join("notes.txt"), "not read by compose").unwrap();
        std::fs::write(dir.join("data/db"), "volume data").unwrap();
        assert_eq!(key_of(&dir), a);
        std::fs::write(dir.join(".env"), "A=1\n").unwrap();
        let b = key_of(&dir);
        assert_ne!(a, b);
        std::fs::write(dir.join(".env"), "A=2\n").unwrap();
        assert_ne!(key_of(&dir), b);
        std::fs::write(dir.join("env/app.env"), "B=1\n").unwrap();
        std::fs::write(dir.join("sub/inc.yaml"), "services: {i: {image: x}}\n").unwrap();
        std::fs::write(
            dir.join("compose.yaml"),
            "include: [sub/inc.yaml]\nservices: {x: {image: x, env_file: env/app.env}}\n",
        )
        .unwrap();
        let c = key_of(&dir);
        std::fs::write(dir.join("env/app.env"), "B=2\n").unwrap();
        let d = key_of(&dir);
        assert_ne!(c, d, "a sub-folder env_file counts");
        std::fs::write(dir.join("sub/inc.yaml"), "services: {i: {image: y}}\n").unwrap();
        assert_ne!(key_of(&dir), d, "an included file counts");
        std::fs::write(dir.join("compose.override.yaml"), "services: {}\n").unwrap();
        assert_ne!(key_of(&dir), d, "an override counts");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
