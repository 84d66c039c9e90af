//! The rule that ARCHITECTURE.md stays a map (issue 47): no paragraph, list
//! item or table cell over [`MAX_PIECE`] words and the whole under
//! [`MAX_WORDS`] (`wc -w`), so a folder never grows back into a wall; and
//! every rule an "Architecture invariant:" line names in brackets is a
//! `const` or a `fn` of these tests, so the map names checks that exist.

/// The most words a paragraph, a list item or a table cell may have.
pub(in crate::architecture) const MAX_PIECE: usize = 150;

/// The most words the whole document may have, as `wc -w` counts them.
pub(in crate::architecture) const MAX_WORDS: usize = 6_000;

/// The marker of an invariant's line.
const INVARIANT: &str = "Architecture invariant:";

/// `doc` with its HTML comments (the merge notes) blanked, newlines kept.
fn without_comments(doc: &str) -> String {
    let mut out = String::with_capacity(doc.len());
    let mut rest = doc;
    while let Some(open) = rest.find("<!--") {
        out.push_str(&rest[..open]);
        let Some(close) = rest[open..].find("-->") else {
            rest = "";
            break;
        };
        let comment = &rest[open..open + close + 3];
        out.extend(comment.chars().filter(|c| *c == '\n'));
        rest = &rest[open + close + 3..];
    }
    out.push_str(rest);
    out
}

/// What a reader takes in at once: each paragraph, list item and table
/// cell (code fences and HTML comments left out), with the line it starts on.
pub(in crate::architecture) fn pieces(doc: &str) -> Vec<(usize, String)> {
    let mut out: Vec<(usize, String)> = Vec::new();
    let mut open: Option<(usize, String)> = None;
    let mut fenced = false;
    for (i, line) in without_comments(doc).lines().enumerate() {
        let n = i + 1;
        let t = line.trim();
        if t.starts_with("```") {
            fenced = !fenced;
            out.extend(open.take());
            continue;
        }
        if fenced {
            continue;
        }
        let starts_item = t.starts_with("- ") || t.starts_with("* ");
        if t.is_empty() || t.starts_with('#') || t.starts_with('|') || starts_item {
            out.extend(open.take());
        }
        if t.starts_with('|') {
            out.extend(t.split('|').map(|cell| (n, cell.trim().to_string())));
        } else if !t.is_empty() {
            let t = if starts_item { &t[2..] } else { t };
            let (_, text) = open.get_or_insert_with(|| (n, String::new()));
            text.push(' ');
            text.push_str(t);
        }
    }
    out.extend(open);
    out
}

/// Every piece over [`MAX_PIECE`] words, and the whole over [`MAX_WORDS`].
pub(in crate::architecture) fn walls(doc: &str) -> Vec<String> {
    let mut out: Vec<String> = pieces(doc)
        .into_iter()
        .map(|(line, text)| (line, text.split_whitespace().count(), text))
        .filter(|(_, words, _)| *words > MAX_PIECE)
        .map(|(line, words, text)| {
            let start: String = text.split_whitespace().take(8).collect::<Vec<_>>().join(" ");
            format!(
                "ARCHITECTURE.md:{line}: {words} words in one piece (at most {MAX_PIECE}): \"{start} …\"; \
                 make it a table of one line per file, or shorter"
            )
        })
        .collect();
    let total = doc.split_whitespace().count();
    if total > MAX_WORDS {
        out.push(format!(
            "ARCHITECTURE.md: {total} words (at most {MAX_WORDS}); say less, or point at the code"
        ));
    }
    out
}

/// Every invariant line that names no rule in brackets, or names one that
/// `tests` (the text of the architecture tests) defines as no `const` or `fn`.
pub(in crate::architecture) fn unknown_rules(doc: &str, tests: &str) -> Vec<String> {
    let defined = |name: &str| {
        [format!("const {name}:"), format!("fn {name}(")]
            .iter()
            .any(|d| tests.contains(d.as_str()))
    };
    let mut out = Vec::new();
    for (i, line) in doc.lines().enumerate() {
        let Some(at) = line.find(INVARIANT) else {
            continue;
        };
        let said = &line[at..];
        let named: Vec<&str> = said
            .split('[')
            .skip(1)
            .filter_map(|b| b.split_once(']').map(|(inside, _)| inside))
            .flat_map(|inside| inside.split([',', ' ']))
            .map(|w| w.trim_matches('`'))
            .filter(|w| !w.is_empty())
            .collect();
        if named.is_empty() {
            out.push(format!(
                "ARCHITECTURE.md:{}: an invariant names no rule in brackets ([RULE]); \
                 one no rule checks is not an invariant here",
                i + 1
            ));
        }
        for name in named.into_iter().filter(|n| !defined(n)) {
            out.push(format!(
                "ARCHITECTURE.md:{}: [{name}] is no `const` or `fn` of tests/integration/architecture",
                i + 1
            ));
        }
    }
    out
}

#[cfg(test)]
mod self_tests {
    use super::*;

    fn words(n: usize) -> String {
        vec!["word"; n].join(" ")
    }

    #[test]
    fn a_long_paragraph_item_or_cell_is_reported_with_its_line() {
        let para = format!("# T\n\n{}\n{}\n", words(100), words(51));
        let v = walls(&para);
        assert_eq!(v.len(), 1, "{v:?}");
        assert!(v[0].starts_with("ARCHITECTURE.md:3: 151 words"), "{v:?}");

        let item = format!("- {}\n  {}\n- short\n", words(150), words(1));
        assert_eq!(walls(&item).len(), 1);

        let cell = format!("| a | b |\n|---|---|\n| `x.rs` | {} |\n", words(151));
        let v = walls(&cell);
        assert_eq!(v.len(), 1, "{v:?}");
        assert!(v[0].starts_with("ARCHITECTURE.md:3:"), "{v:?}");
    }

    #[test]
    fn pieces_at_the_limit_fences_and_comments_pass() {
        let ok = format!(
            "{}\n\n- {}\n- {}\n\n| {} | {} |\n\n```\n{}\n```\n<!-- {} -->\n",
            words(150),
            words(150),
            words(150),
            words(150),
            words(150),
            words(400),
            words(400)
        );
        assert!(walls(&ok).is_empty(), "{:?}", walls(&ok));
    }

    #[test]
    fn the_whole_over_its_limit_is_reported() {
        let doc = (0..41).map(|_| words(147)).collect::<Vec<_>>().join("\n\n");
        let v = walls(&doc);
        assert_eq!(v.len(), 1, "{v:?}");
        assert!(v[0].contains("6027 words"), "{v:?}");
    }

    #[test]
    fn an_invariant_names_a_rule_the_tests_define() {
        let tests = "pub(super) const DOCKER: Rule = Rule {\nfn no_cycles() {}";
        let ok = "- Architecture invariant: x. [`DOCKER`, `no_cycles`]";
        assert!(unknown_rules(ok, tests).is_empty());
        let none = "- Architecture invariant: x, checked by nobody.";
        assert_eq!(unknown_rules(none, tests).len(), 1);
        let gone = "intro\n- Architecture invariant: x. [`DOCKR`]";
        let v = unknown_rules(gone, tests);
        assert_eq!(v.len(), 1, "{v:?}");
        assert!(v[0].starts_with("ARCHITECTURE.md:2: [DOCKR]"), "{v:?}");
    }
}
