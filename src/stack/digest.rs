//! A fingerprint of what compose reads from a module directory, so an unchanged module can skip compose.

use std::path::Path;

/// Files compose reads besides the compose file itself: the `.env` it
/// interpolates from, override files, and `*.env` files (the usual `env_file`s).
fn counts(name: &str) -> bool {
    name == ".env"
        || name.ends_with(".env")
        || name.starts_with("compose.override.")
        || name.starts_with("docker-compose.override.")
        || crate::module::inventory::COMPOSE_FILES.contains(&name)
}

/// Largest file read into the fingerprint; a larger one makes the module
/// always go through compose.
const MAX_FILE: u64 = 4 << 20;

/// FNV-1a over the names and contents of the files compose reads, in name
/// order. `None` when a file cannot be read (then compose decides, always).
pub fn of_module(dir: &Path) -> Option<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file() || t.is_symlink()))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| counts(n))
        .collect();
    names.sort();
    let mut h = Fnv::new();
    h.write(env!("CARGO_PKG_VERSION").as_bytes());
    for n in &names {
        let path = dir.join(n);
        if std::fs::metadata(&path).ok()?.len() > MAX_FILE {
            return None;
        }
        let bytes = std::fs::read(&path).ok()?;
        h.write(n.as_bytes());
        h.write(&[0]);
        h.write(&(bytes.len() as u64).to_le_bytes());
        h.write(&bytes);
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_when_compose_inputs_change_and_only_then() {
        let dir = std::env::temp_dir().join(format!("hal-digest-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("data")).unwrap();
        std::fs::write(dir.join("compose.yaml"), "services: {}\n").unwrap();
        let a = of_module(&dir).unwrap();
        std::fs::write(dir.join("notes.txt"), "not read by compose").unwrap();
        std::fs::write(dir.join("data/db"), "volume data").unwrap();
        assert_eq!(of_module(&dir).unwrap(), a);
        std::fs::write(dir.join(".env"), "A=1\n").unwrap();
        let b = of_module(&dir).unwrap();
        assert_ne!(a, b);
        std::fs::write(dir.join(".env"), "A=2\n").unwrap();
        assert_ne!(of_module(&dir).unwrap(), b);
        std::fs::write(dir.join("app.env"), "B=1\n").unwrap();
        let c = of_module(&dir).unwrap();
        std::fs::write(dir.join("compose.yaml"), "services: {x: {}}\n").unwrap();
        assert_ne!(of_module(&dir).unwrap(), c);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
