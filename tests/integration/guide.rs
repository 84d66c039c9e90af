//! The README stays a short guide: every page of `docs/` is reachable from its table, it stays under
//! 450 lines and shows the test command `.ci/run` runs, and no link in the README or the guide points
//! at a file or heading that is not there.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The README's length a newcomer still reads through.
const MOST_LINES: usize = 450;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The guide's pages, `docs/*.md`, by file name.
fn pages() -> BTreeSet<String> {
    std::fs::read_dir(root().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".md"))
        .collect()
}

/// The targets of the Markdown links `[text](target)` outside fenced code blocks.
fn links(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        let mut rest = line;
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let Some(end) = after.find(')') else { break };
            out.push(after[..end].to_string());
            rest = &after[end..];
        }
    }
    out
}

/// The anchors GitHub gives a file's headings: lower case, punctuation dropped, spaces as `-`.
fn anchors(text: &str) -> BTreeSet<String> {
    let mut fenced = false;
    let mut out = BTreeSet::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        }
        if fenced || !line.starts_with('#') {
            continue;
        }
        let title = line.trim_start_matches('#').trim();
        let slug: String = title
            .to_lowercase()
            .chars()
            .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
            .map(|c| if c == ' ' { '-' } else { c })
            .collect();
        out.insert(slug);
    }
    out
}

#[test]
fn the_readme_is_short_and_its_table_reaches_every_page_of_the_guide() {
    let readme = read(&root().join("README.md"));
    let lines = readme.lines().count();
    assert!(
        lines < MOST_LINES,
        "README.md has {lines} lines: put the reference in a page of docs/ and keep the README under {MOST_LINES}"
    );
    // The before-stop check and a newcomer both look for the test command here.
    assert!(
        readme.contains("cargo test --locked"),
        "README.md no longer shows the test command .ci/run runs"
    );
    let table: BTreeSet<String> = readme
        .lines()
        .filter(|l| l.starts_with("| ["))
        .flat_map(links)
        .filter_map(|l| l.strip_prefix("docs/").map(str::to_string))
        .collect();
    let pages = pages();
    assert!(!pages.is_empty(), "docs/ has no page");
    let unlisted: Vec<&String> = pages.difference(&table).collect();
    assert!(
        unlisted.is_empty(),
        "pages of docs/ missing from README.md's table: {unlisted:?}"
    );
    let gone: Vec<&String> = table.difference(&pages).collect();
    assert!(
        gone.is_empty(),
        "README.md's table names no such page: {gone:?}"
    );
}

#[test]
fn every_link_of_the_readme_and_the_guide_reaches_its_file_and_heading() {
    let mut files: Vec<PathBuf> = vec![root().join("README.md")];
    files.extend(pages().iter().map(|p| root().join("docs").join(p)));
    let mut broken = Vec::new();
    for file in &files {
        let text = read(file);
        let dir = file.parent().unwrap();
        for link in links(&text) {
            if link.contains("://") || link.starts_with("mailto:") {
                continue;
            }
            let (path, anchor) = match link.split_once('#') {
                Some((p, a)) => (p, Some(a)),
                None => (link.as_str(), None),
            };
            let target = if path.is_empty() {
                file.clone()
            } else {
                dir.join(path)
            };
            let name = file.strip_prefix(root()).unwrap().display();
            if !target.exists() {
                broken.push(format!("{name}: {link}: no such file"));
                continue;
            }
            if let Some(anchor) = anchor
                && !anchors(&read(&target)).contains(anchor)
            {
                broken.push(format!("{name}: {link}: no such heading"));
            }
        }
    }
    assert!(
        broken.is_empty(),
        "broken links:\n  {}",
        broken.join("\n  ")
    );
}
