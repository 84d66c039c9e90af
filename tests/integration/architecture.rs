//! The shape of `src/`, checked: no file over 500 lines, no import cycle
//! between modules (what counts as an import: `architecture/imports.rs`).
//! No engine needed.

mod imports;

use std::path::Path;

/// The most lines a file under `src/` may have.
const MAX_LINES: usize = 500;

/// Every `.rs` file under `src/`, as (path relative to `src/`, text), sorted.
fn sources() -> Vec<(String, String)> {
    fn walk(dir: &Path, base: &Path, out: &mut Vec<(String, String)>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, base, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let rel = path
                    .strip_prefix(base)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                out.push((rel, std::fs::read_to_string(&path).unwrap()));
            }
        }
    }
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut out = Vec::new();
    walk(&src, &src, &mut out);
    out.sort();
    out
}

#[test]

fn no_file_under_src_is_over_500_lines() {
    let long: Vec<String> = sources()
        .iter()
        .map(|(path, text)| (path, text.lines().count()))
        .filter(|(_, n)| *n > MAX_LINES)
        .map(|(path, n)| format!("src/{path}: {n} lines"))
        .collect();
    assert!(
        long.is_empty(),
        "{} file(s) over {MAX_LINES} lines; split them by concern:\n  {}",
        long.len(),
        long.join("\n  ")
    );
}

#[test]

fn no_import_cycle_between_src_modules() {
    let graph = imports::graph(&sources());
    assert!(
        graph.modules.len() > 10,
        "the scanner found only {:?}",
        graph.modules
    );
    let cycles: Vec<String> = graph.cycles().iter().map(|c| graph.describe(c)).collect();
    assert!(
        cycles.is_empty(),
        "{} import cycle(s) between src/ modules; dependencies must flow one way:\n{}",
        cycles.len(),
        cycles.join("\n")
    );
}
