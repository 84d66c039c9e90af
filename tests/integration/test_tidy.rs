//! The tests' own tidiness, checked as `architecture.rs` checks `src/`: a
//! test asks for a module's status through the rig's helpers
//! (`rig/status.rs`), never by writing `hal --json status` again (review N12:
//! 55 such queries once, each walking `["modules"][0]` by hand). The few that
//! must stay are listed with their reason, and a planted query shows the rule
//! bites. No engine needed.

use std::path::Path;

/// The query's spellings, as a test would write its arguments (after
/// [`flat`] joins what rustfmt broke over lines).
const QUERIES: &[&str] = &[
    r#""--json", "status""#,
    r#""--json", "module", "status""#,
    r#""status", "--json""#,
];

/// Where the query is written on purpose: the rig, whose helpers are the
/// one place it is written, and this file, whose self-tests plant it.
const EXEMPT: &[&str] = &["rig/", "test_tidy.rs"];

/// The hand-written queries that stay, one entry for each (a file may appear
/// twice): the file under `tests/integration/` and why a helper does not fit.
const ALLOWED: &[(&str, &str)] = &[(
    "identity.rs",
    "a missing services root fails four spellings of status alike; the JSON one is one row of \
     the list the loop runs",
)];

/// Every `.rs` file under `tests/integration/`, as (path relative to it, text), sorted.
fn test_files() -> Vec<(String, String)> {
    let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/integration");
    let mut out = Vec::new();
    let mut dirs = vec![base.clone()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let rel = path.strip_prefix(&base).unwrap().to_string_lossy();
                out.push((rel.into_owned(), std::fs::read_to_string(&path).unwrap()));
            }
        }
    }
    out.sort();
    out
}

/// `text` with each comma's following whitespace (a line break and its
/// indent, as rustfmt writes a long array) made one space; each position of
/// the result is mapped to its line in `text`.
fn flat(text: &str) -> (String, Vec<usize>) {
    let mut out = String::with_capacity(text.len());
    let mut lines = Vec::with_capacity(text.len());
    let mut line = 1;
    let mut after_comma = false;
    for c in text.chars() {
        if after_comma && c.is_whitespace() {
            if c == '\n' {
                line += 1;
            }
            continue;
        }
        if after_comma {
            out.push(' ');
            lines.push(line);
            after_comma = false;
        }
        out.push(c);
        lines.extend(std::iter::repeat_n(line, c.len_utf8()));
        if c == ',' {
            after_comma = true;
        } else if c == '\n' {
            line += 1;
        }
    }
    (out, lines)
}

/// Each hand-written status query in `files` beyond its file's entries in
/// `allowed`, and each entry of `allowed` left with no query to excuse, one
/// per line.
fn hand_written_queries(files: &[(String, String)], allowed: &[(&str, &str)]) -> Vec<String> {
    let mut found = Vec::new();
    for (path, text) in files {
        if EXEMPT.iter().any(|e| path.starts_with(e)) {
            continue;
        }
        let (flat, lines) = flat(text);
        let mut at: Vec<usize> = QUERIES
            .iter()
            .flat_map(|q| flat.match_indices(q).map(|(i, _)| lines[i]))
            .collect();
        at.sort_unstable();
        let excused = allowed.iter().filter(|(p, _)| p == path).count();
        for line in at.iter().skip(excused) {
            found.push(format!(
                "tests/integration/{path}:{line}: `hal --json status` written by hand; ask \
                 rig.status(m), rig.status_of(args), hal(&rig)….status(args), \
                 scene.status(ms) or ModuleDoc::by(runner, args) (rig/status.rs)"
            ));
        }
        if at.len() < excused {
            found.push(format!(
                "tests/integration/{path}: ALLOWED excuses {excused} query(ies), the file has {} \
                 (drop the stale entries)",
                at.len()
            ));
        }
    }
    for (path, _) in allowed {
        if !files.iter().any(|(p, _)| p == path) {
            found.push(format!(
                "tests/integration/{path}: in ALLOWED, but no such file (drop its entry)"
            ));
        }
    }
    found
}

#[test]
fn tests_ask_for_status_through_the_rig() {
    let files = test_files();
    // A walk that read nothing would pass: the rig's one query is there.
    assert!(
        files
            .iter()
            .any(|(p, t)| p == "rig/status.rs" && t.contains(QUERIES[0])),
        "no status query seen in tests/integration/rig/status.rs"
    );
    let found = hand_written_queries(&files, ALLOWED);
    assert!(
        found.is_empty(),
        "a test writes the status query the rig's helpers make (test_tidy.rs, ALLOWED); {} \
         violation(s):\n  {}",
        found.len(),
        found.join("\n  ")
    );
}

#[test]
fn a_planted_status_query_is_reported() {
    let one = |path: &str, text: &str| vec![(path.to_string(), text.to_string())];
    // Written on one line, spelled out, or broken over lines by rustfmt.
    for text in [
        r#"let st = hal(&rig).args(["--json", "status", &m]).run();"#,
        r#"let st = hal(&rig).args(["-q", "--json", "module", "status", &m]).run();"#,
        "let st = hal(&rig)\n    .args([\n        \"--json\",\n        \"status\",\n        &m,\n    ])\n    .run();",
        r#"let st = hal(&rig).args(["status", "--json"]).run();"#,
    ] {
        let found = hand_written_queries(&one("x.rs", text), &[]);
        assert_eq!(found.len(), 1, "{text}: {found:?}");
        assert!(found[0].starts_with("tests/integration/x.rs:"), "{found:?}");
    }
    let found = hand_written_queries(&one("x.rs", "\n\nlet a = [\"--json\",\n \"status\"];"), &[]);
    assert!(
        found[0].starts_with("tests/integration/x.rs:3:"),
        "{found:?}"
    );
    // Not a query: another verb, or the table.
    for text in [
        r#"hal(&rig).args(["--json", "start", &m]).run();"#,
        r#"hal(&rig).args(["status", &m]).run();"#,
    ] {
        assert!(hand_written_queries(&one("x.rs", text), &[]).is_empty());
    }
    // The rig writes it; an allowed one is excused once, and only once.
    let query = r#"hal(&rig).args(["--json", "status"]).run();"#;
    assert!(hand_written_queries(&one("rig/status.rs", query), &[]).is_empty());
    let allowed = [("x.rs", "why")];
    assert!(hand_written_queries(&one("x.rs", query), &allowed).is_empty());
    let twice = format!("{query}\n{query}");
    let found = hand_written_queries(&one("x.rs", &twice), &allowed);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].starts_with("tests/integration/x.rs:2:"),
        "{found:?}"
    );
    // An entry with nothing left to excuse, or no file, is stale.
    let found = hand_written_queries(&one("x.rs", "fn f() {}"), &allowed);
    assert!(found[0].contains("drop the stale"), "{found:?}");
    let found = hand_written_queries(&one("y.rs", "fn f() {}"), &allowed);
    assert!(found[0].contains("no such file"), "{found:?}");
}
