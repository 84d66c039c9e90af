//! Whether a stack's files ask for a project name other than its directory's: what `list` and `doctor` warn of, cheap enough for `list` of a thousand stacks.

use std::path::Path;

use crate::module::Module;
use crate::module::compose_files::COMPOSE_FILES;
use crate::stack::project::inputs::{OVERRIDE_FILES, read};

/// The warnings of [`name_mismatch`] for every stack among `modules`, in their
/// order. For many stacks the time is the file system's (a few small reads per
/// stack), so the stacks are split among the CPUs.
pub(crate) fn name_mismatches(modules: &[Module]) -> Vec<String> {
    let of = |part: &[Module]| -> Vec<String> { part.iter().filter_map(name_mismatch).collect() };
    let cpus = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
    if cpus < 2 || modules.len() < PARALLEL_FROM {
        return of(modules);
    }
    let chunk = modules.len().div_ceil(cpus.min(8));
    std::thread::scope(|s| {
        let parts: Vec<_> = modules
            .chunks(chunk)
            .map(|p| s.spawn(move || of(p)))
            .collect();
        // A part whose thread panicked is looked at again here, where a panic is reported.
        let chunks = modules.chunks(chunk);
        parts
            .into_iter()
            .zip(chunks)
            .flat_map(|(h, p)| h.join().unwrap_or_else(|_| of(p)))
            .collect()
    })
}

/// Below this many modules a thread costs more than it saves.
const PARALLEL_FROM: usize = 64;

/// For a stack whose files or `COMPOSE_PROJECT_NAME` ask for a project name
/// other than its directory's: what `list` and `doctor` say about it.
///
/// The files are read in full (every input, as a start reads them) only when
/// a glance says they could name the project; most stacks never do.
pub(crate) fn name_mismatch(m: &Module) -> Option<String> {
    let (module, dir) = (m.name.as_str(), m.stack_dir()?);
    if !may_name_itself(dir) {
        return None;
    }
    let inputs = read(dir).ok()?;
    let (name, from) = inputs.own_name()?;
    (name != module).then(|| {
        format!(
            "{module}: {from} says the project is {name:?}, but hal runs it as {module:?} (the directory name); `docker compose` run there by hand would make a second project"
        )
    })
}

/// False only when compose surely takes no project name from `dir`: no
/// `COMPOSE_PROJECT_NAME` or `COMPOSE_FILE` in the environment or `.env`, and
/// no line of the default compose file or its override that could be a
/// top-level `name:` (or a merge or flow mapping that could hide one). Any doubt
/// (a file it cannot read, a `name` key anywhere, even a network's) is true.
fn may_name_itself(dir: &Path) -> bool {
    const VARS: [&str; 2] = ["COMPOSE_PROJECT_NAME", "COMPOSE_FILE"];
    if VARS.iter().any(|v| std::env::var_os(v).is_some()) {
        return true;
    }
    match std::fs::read(dir.join(".env")) {
        Ok(text) if VARS.iter().any(|v| contains(&text, v.as_bytes())) => return true,
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(_) => return true,
    }
    for names in [&COMPOSE_FILES, &OVERRIDE_FILES] {
        for f in names {
            match std::fs::read(dir.join(f)) {
                Ok(text) if could_name(&text) => return true,
                // The first one present is the one compose reads.
                Ok(_) => break,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(_) => return true,
            }
        }
    }
    false
}

/// Whether a compose document's text could hold a top-level `name:`.
fn could_name(text: &[u8]) -> bool {
    text.split(|b| *b == b'\n').any(|line| {
        let key = line.trim_ascii_start();
        let key = key
            .strip_prefix(b"\"")
            .or_else(|| key.strip_prefix(b"'"))
            .unwrap_or(key);
        key.starts_with(b"name")
            || key.starts_with(b"<<")
            || key.starts_with(b"{")
            || key.starts_with(b"?")
    })
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::could_name;

    #[test]
    fn a_plain_stack_cannot_name_itself() {
        let text = b"services:\n  app:\n    image: x\n    container_name: y\n";
        assert!(!could_name(text));
    }

    #[test]
    fn anything_that_could_be_a_top_level_name_is_read_in_full() {
        for text in [
            "name: other\nservices: {}\n",
            "  name: indented\n",
            "\"name\": quoted\n",
            "'name': quoted\n",
            "<<: *base\n",
            "{name: flow, services: {}}\n",
            "? name\n: complex\n",
            "networks:\n  default:\n    name: shared\n",
        ] {
            assert!(could_name(text.as_bytes()), "{text}");
        }
    }
}
