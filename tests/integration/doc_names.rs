//! The guide names only what the code has: every `Type::item` it shows in code is defined in `src/`,
//! and the JSON's closed lists of words (an edge's `tie`) are the ones the code writes.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// README.md and every page of `docs/`.
fn guide() -> Vec<PathBuf> {
    let mut files = vec![root().join("README.md")];
    for e in std::fs::read_dir(root().join("docs")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "md") {
            files.push(p);
        }
    }
    files.sort();
    files
}

/// Every `.rs` file under `src/`, read.
fn sources() -> Vec<String> {
    fn walk(dir: &Path, out: &mut Vec<String>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(read(&p));
            }
        }
    }
    let mut out = Vec::new();
    walk(&root().join("src"), &mut out);
    out
}

/// The `Type::item` paths inside inline code spans: a capitalised type, then a
/// snake-case or capitalised item (`UpdateFacts::failed`, `Store::replace`).
fn paths(text: &str) -> BTreeSet<(String, String)> {
    let mut out = BTreeSet::new();
    for (n, span) in text.split('`').enumerate() {
        if n % 2 == 0 || span.contains(' ') {
            continue;
        }
        let mut parts = span.split("::");
        let (Some(ty), Some(item)) = (parts.next(), parts.next()) else {
            continue;
        };
        let item: String = item
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        let is_type = ty.chars().next().is_some_and(|c| c.is_ascii_uppercase())
            && ty.chars().all(|c| c.is_ascii_alphanumeric());
        if is_type && !item.is_empty() {
            out.insert((ty.to_string(), item));
        }
    }
    out
}

/// Whether `src` defines the type `ty` and, within it, `item` (a fn, a
/// variant, an associated const): each is looked for as a definition.
fn defined(src: &[String], ty: &str, item: &str) -> bool {
    let type_there = src.iter().any(|s| {
        ["struct ", "enum ", "trait ", "type "]
            .iter()
            .any(|k| s.contains(&format!("{k}{ty} ")) || s.contains(&format!("{k}{ty}<")))
    });
    let item_there = src.iter().any(|s| {
        s.contains(&format!("fn {item}("))
            || s.contains(&format!("fn {item}<"))
            || s.contains(&format!("const {item}:"))
            || s.contains(&format!("{ty}::{item}"))
            || s.lines().any(|l| {
                let l = l.trim_start();
                l.starts_with(&format!("{item},"))
                    || l.starts_with(&format!("{item} {{"))
                    || l.starts_with(&format!("{item}("))
            })
    });
    type_there && item_there
}

#[test]
fn every_type_path_the_guide_names_is_in_the_code() {
    let src = sources();
    let mut missing = Vec::new();
    for file in guide() {
        for (ty, item) in paths(&read(&file)) {
            if !defined(&src, &ty, &item) {
                let name = file
                    .strip_prefix(root())
                    .unwrap_or(&file)
                    .display()
                    .to_string();
                missing.push(format!("{name}: `{ty}::{item}`"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "the guide names code that src/ does not define:\n  {}",
        missing.join("\n  ")
    );
}

#[test]
fn a_made_up_path_is_caught() {
    let src = sources();
    assert!(defined(&src, "UpdateFacts", "failed"));
    assert!(!defined(&src, "UpdateReport", "failed"));
    assert_eq!(
        paths("the rule `UpdateReport::failed` and `Store::replace`, not `a b::c`"),
        BTreeSet::from([
            ("Store".to_string(), "replace".to_string()),
            ("UpdateReport".to_string(), "failed".to_string()),
        ])
    );
}

/// The words `Tie::word` writes for `edges[].tie`, read from the code.
fn tie_words() -> Vec<String> {
    let deps = read(&root().join("src/module/deps.rs"));
    let mut words = Vec::new();
    for line in deps.lines() {
        let l = line.trim();
        if let Some(rest) = l.strip_prefix("Tie::")
            && let Some((_, word)) = rest.split_once("=> \"")
        {
            words.push(word.trim_end_matches(['"', ',']).to_string());
        }
    }
    words
}

#[test]
fn the_guide_lists_every_tie_an_edge_can_have() {
    let words = tie_words();
    assert!(
        words.len() >= 4,
        "read the ties from src/module/deps.rs: {words:?}"
    );
    let page = read(&root().join("docs/dependencies.md"));
    let list = page
        .lines()
        .find(|l| l.starts_with("`tie` is "))
        .expect("docs/dependencies.md has the line \"`tie` is …\"");
    for w in &words {
        assert!(
            list.contains(&format!("`{w}`")),
            "docs/dependencies.md's list of ties lacks `{w}`: {list}"
        );
    }
}

/// The collection's README offers `MODULE/SERVICE` only where hal takes it:
/// `state: updated` runs `hal update`, which takes whole modules (exit 2).
#[test]
fn the_collections_readme_offers_a_service_only_where_hal_takes_one() {
    let readme = read(&root().join("ansible/hal/node/README.md"));
    for item in readme.split("\n- ") {
        if item.contains("`MODULE/SERVICE`") && item.contains("updated") {
            assert!(
                item.contains("except with `updated`"),
                "the collection's README offers MODULE/SERVICE beside `updated`: {item}"
            );
        }
    }
}
