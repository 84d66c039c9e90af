//! A file of `src/` as the tidy rules read it: comments blanked (doc comments
//! too), test code blanked (`#[cfg(test)]` items, `tests.rs` and other
//! test-only children), every line kept where it was so a hit has its line.
//! Two views: `code` with the contents of string and char literals blanked
//! too (for names: `bollard`, `Format`, `println!`), and `text` with literals
//! kept (for words a string can carry: `"systemctl"`, `"SYSTEMD_COLORS"`).

use std::collections::BTreeSet;

use super::imports::module_of;

/// One file of `src/`, read for the tidy rules.
#[derive(Debug)]
pub(super) struct Source {
    /// The path under `src/`, e.g. `docker/engine.rs`.
    pub path: String,
    /// Comments, literal contents and test code blanked.
    pub code: String,
    /// Comments and test code blanked; literals kept.
    pub text: String,
}

impl Source {
    /// The 1-based line of byte offset `at`.
    pub(super) fn line_of(&self, at: usize) -> usize {
        self.code[..at].matches('\n').count() + 1
    }
}

/// The non-test files among `files` (`(path under src/, text)`), read.
pub(super) fn sources(files: &[(String, String)]) -> Vec<Source> {
    let mut test_modules: BTreeSet<String> = BTreeSet::new();
    let read: Vec<(String, String, String)> = files
        .iter()
        .filter_map(|(path, text)| {
            let (code, text) = blank(text);
            let (code, text, children, test_only) = drop_test_code(&code, &text);
            if test_only {
                return None;
            }
            if let Some(m) = module_of(path) {
                for child in children {
                    test_modules.insert(if m.is_empty() {
                        child
                    } else {
                        format!("{m}::{child}")
                    });
                }
            }
            Some((path.clone(), code, text))
        })
        .collect();
    read.into_iter()
        .filter(|(path, _, _)| {
            let Some(m) = module_of(path) else {
                return true;
            };
            let in_test = m.split("::").any(|seg| seg == "tests")
                || test_modules
                    .iter()
                    .any(|t| m == *t || m.starts_with(&format!("{t}::")));
            !in_test
        })
        .map(|(path, code, text)| Source { path, code, text })
        .collect()
}

/// `(code, text)`: comments blanked in both, literal contents in `code` only.
fn blank(src: &str) -> (String, String) {
    let c: Vec<char> = src.chars().collect();
    let mut code = String::with_capacity(src.len());
    let mut text = String::with_capacity(src.len());
    let keep_lines = |ch: char| if ch == '\n' { '\n' } else { ' ' };
    let mut i = 0;
    let ident = |ch: char| ch.is_alphanumeric() || ch == '_';
    while i < c.len() {
        let prev_ident = i > 0 && ident(c[i - 1]);
        // Comments.
        if c[i] == '/' && c.get(i + 1) == Some(&'/') {
            while i < c.len() && c[i] != '\n' {
                code.push(' ');
                text.push(' ');
                i += 1;
            }
            continue;
        }
        if c[i] == '/' && c.get(i + 1) == Some(&'*') {
            let mut depth = 0;
            while i < c.len() {
                if c[i] == '/' && c.get(i + 1) == Some(&'*') {
                    depth += 1;
                    code.push_str("  ");
                    text.push_str("  ");
                    i += 2;
                } else if c[i] == '*' && c.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    code.push_str("  ");
                    text.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    code.push(keep_lines(c[i]));
                    text.push(keep_lines(c[i]));
                    i += 1;
                }
            }
            continue;
        }
        // Literals: find where it ends, then copy (text) or blank (code).
        let end = if c[i] == '"' {
            Some(string_end(&c, i + 1))
        } else if !prev_ident && (c[i] == 'r' || (c[i] == 'b' && c.get(i + 1) == Some(&'r'))) {
            let start = if c[i] == 'b' { i + 2 } else { i + 1 };
            raw_end(&c, start)
        } else if c[i] == '\'' {
            char_end(&c, i)
        } else {
            None
        };
        match end {
            Some(end) => {
                let end = end.min(c.len());
                let lit: String = c[i..end].iter().collect();
                text.push_str(&lit);
                // Keep the opening and closing marks so `split('/')` stays `split(' ')`-shaped.
                for (k, ch) in c[i..end].iter().enumerate() {
                    let edge = k == 0 || k + 1 == end - i;
                    code.push(if edge && (*ch == '"' || *ch == '\'') {
                        *ch
                    } else {
                        keep_lines(*ch)
                    });
                }
                i = end;
            }
            None => {
                code.push(c[i]);
                text.push(c[i]);
                i += 1;
            }
        }
    }
    (code, text)
}

/// The index just past the closing `"` of a string whose body starts at `i`.
fn string_end(c: &[char], mut i: usize) -> usize {
    while i < c.len() {
        match c[i] {
            '\\' => i += 2,
            '"' => return i + 1,
            _ => i += 1,
        }
    }
    c.len()
}

/// A raw string `r#"…"#` whose `#`s start at `i`; `None` when it is not one (an identifier).
fn raw_end(c: &[char], mut i: usize) -> Option<usize> {
    let mut hashes = 0;
    while c.get(i) == Some(&'#') {
        hashes += 1;
        i += 1;
    }
    if c.get(i) != Some(&'"') {
        return None;
    }
    i += 1;
    while i < c.len() {
        if c[i] == '"' && (1..=hashes).all(|k| c.get(i + k) == Some(&'#')) {
            return Some(i + 1 + hashes);
        }
        i += 1;
    }
    Some(c.len())
}

/// A char literal starting at `i` (`'x'`, `'\n'`, `'\''`); `None` for a lifetime.
fn char_end(c: &[char], i: usize) -> Option<usize> {
    if c.get(i + 1) == Some(&'\\') {
        let mut j = i + 3;
        while j < c.len() && c[j] != '\'' {
            j += 1;
        }
        return Some(j + 1);
    }
    (c.get(i + 2) == Some(&'\'')).then_some(i + 3)
}

/// Blanks every test item in both views: from a `#[cfg(…test…)]` attribute
/// (not `not(test)`; found in `code`) to the item's `;` or closing brace.
/// Returns the views, the names of test-only children (`#[cfg(test)] mod
/// NAME;`), and whether the whole file is test code (`#![cfg(test)]`).
fn drop_test_code(code: &str, text: &str) -> (String, String, Vec<String>, bool) {
    let mut code: Vec<char> = code.chars().collect();
    let mut text: Vec<char> = text.chars().collect();
    let mut children = Vec::new();
    let mut i = 0;
    while i < code.len() {
        let Some((after, inner)) = test_attribute(&code, i) else {
            i += 1;
            continue;
        };
        if inner {
            return (String::new(), String::new(), Vec::new(), true);
        }
        let start = i;
        let mut j = after;
        let mut depth = 0usize;
        while j < code.len() {
            match code[j] {
                '{' | '(' | '[' => depth += 1,
                ')' | ']' => depth = depth.saturating_sub(1),
                '}' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        j += 1;
                        break;
                    }
                }
                ';' if depth == 0 => {
                    let item: String = code[after..j].iter().collect();
                    let words: Vec<&str> = item.split_whitespace().collect();
                    if let [.., "mod", name] = words.as_slice() {
                        children.push(name.to_string());
                    }
                    j += 1;
                    break;
                }
                _ => {}
            }
            j += 1;
        }
        for k in start..j.min(code.len()) {
            if code[k] != '\n' {
                code[k] = ' ';
            }
            if text[k] != '\n' {
                text[k] = ' ';
            }
        }
        i = j;
    }
    (
        code.into_iter().collect(),
        text.into_iter().collect(),
        children,
        false,
    )
}

/// At `#[cfg(…)]` or `#![cfg(…)]` naming `test` (and not `not`): the index
/// past its `]`, and whether it is the inner form.
fn test_attribute(code: &[char], i: usize) -> Option<(usize, bool)> {
    if code[i] != '#' {
        return None;
    }
    let inner = code.get(i + 1) == Some(&'!');
    let open = if inner { i + 2 } else { i + 1 };
    if code.get(open) != Some(&'[') {
        return None;
    }
    let mut depth = 0usize;
    let mut close = None;
    for (k, ch) in code.iter().enumerate().skip(open) {
        match ch {
            '[' => depth += 1,
            ']' => {
                depth -= 1;
                if depth == 0 {
                    close = Some(k);
                    break;
                }
            }
            _ => {}
        }
    }
    let close = close?;
    let body: String = code[open + 1..close].iter().collect();
    let words: Vec<&str> = body
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .collect();
    let test = words.first() == Some(&"cfg") && words.contains(&"test") && !words.contains(&"not");
    test.then_some((close + 1, inner))
}

#[test]
fn comments_literals_and_test_code_are_blanked_in_place() {
    let src = "use a; // println!\n/* x /* y */ z */ let s = \"print!(\";\nlet c = '/'; fn f<'a>() {}\n#[cfg(test)]\nmod tests {\n    fn g() { println!(\"{}\", 1) }\n}\n#[cfg(test)]\nmod memory;\nlet r = r#\"a \" b\"#; x";
    let s = sources(&[("a.rs".into(), src.into())]);
    let one = &s[0];
    assert!(!one.code.contains("println"), "{}", one.code);
    assert!(!one.code.contains("print!("), "{}", one.code);
    assert!(one.text.contains("\"print!(\""), "{}", one.text);
    assert!(one.text.contains("'/'") && one.code.contains("' '"));
    assert!(one.code.contains("fn f<'a>()"), "a lifetime is code");
    assert!(one.code.trim_end().ends_with("x"), "{}", one.code);
    assert_eq!(one.code.lines().count(), src.lines().count());
    assert_eq!(one.line_of(one.code.find("let r").unwrap()), 10);
    // A test-only child is left out.
    let s = sources(&[
        (
            "host/init/mod.rs".into(),
            "#[cfg(test)]\npub mod memory;\n".into(),
        ),
        ("host/init/memory.rs".into(), "fn f() { println!() }".into()),
        ("host/tests.rs".into(), "fn f() { println!() }".into()),
        (
            "host/only.rs".into(),
            "#![cfg(test)]\nfn f() { println!() }".into(),
        ),
    ]);
    assert_eq!(s.len(), 1);
    // Any `cfg` naming `test` (not `not(test)`), up to the item's end past brackets.
    let s = sources(&[(
        "a.rs".into(),
        "#[cfg(all(test, unix))]\n#[allow(x)]\nfn g(a: [u8; 2]) { println!() }\n#[cfg(not(test))]\nfn h() { print!() }"
            .into(),
    )]);
    assert!(!s[0].code.contains("println"), "{}", s[0].code);
    assert!(s[0].code.contains("print!"), "{}", s[0].code);
}
