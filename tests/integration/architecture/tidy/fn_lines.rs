//! The rule that a function is short enough to read at once: at most
//! [`FN_LINES`] lines from its `fn` line to its closing brace (the
//! review's count), test code exempt (`code.rs` blanks it), with the few
//! longer ones named and the reason each stays.

use super::super::code::Source;

/// The most lines a function of `src/` may have.
pub(in crate::architecture) const FN_LINES: usize = 80;

/// The functions allowed over the limit: (file under `src/`, function, why).
/// Each is a debt with its reason, not a precedent; split it and drop its row.
pub(in crate::architecture) const LONG_FNS: &[(&str, &str, &str)] = &[];

/// A function's name, its first line and its length in lines.
#[derive(Debug, PartialEq, Eq)]
pub(in crate::architecture) struct Fn {
    pub name: String,
    pub line: usize,
    pub lines: usize,
}

/// Every function with a body in `s` (test code is already blanked).
pub(in crate::architecture) fn functions(s: &Source) -> Vec<Fn> {
    let code = s.code.as_bytes();
    let ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut out = Vec::new();
    for (at, _) in s.code.match_indices("fn") {
        let before = at.checked_sub(1).map(|i| code[i]);
        let after = code.get(at + 2).copied();
        if before.is_some_and(ident) || !after.is_some_and(|b| b.is_ascii_whitespace()) {
            continue;
        }
        let rest = s.code[at + 2..].trim_start();
        let name: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if name.is_empty() {
            continue; // `fn(u8) -> u8`, a pointer type
        }
        let Some(open) = body_of(code, at) else {
            continue; // a declaration without a body (a trait's)
        };
        let Some(close) = closing(code, open) else {
            continue;
        };
        let line = s.line_of(at);
        out.push(Fn {
            name,
            line,
            lines: s.line_of(close) - line + 1,
        });
    }
    out
}

/// The `{` that opens the body of the `fn` at `at`; `None` at a `;` first.
fn body_of(code: &[u8], at: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (i, b) in code.iter().enumerate().skip(at) {
        match b {
            b'(' | b'[' => depth += 1,
            b')' | b']' => depth = depth.saturating_sub(1),
            b'{' if depth == 0 => return Some(i),
            b';' if depth == 0 => return None,
            _ => {}
        }
    }
    None
}

/// The `}` closing the `{` at `open`.
fn closing(code: &[u8], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (i, b) in code.iter().enumerate().skip(open) {
        match b {
            b'{' => depth += 1,
            b'}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// Every function over the limit that is not a named exception, and every
/// named exception that is no longer over it (its row should go).
pub(in crate::architecture) fn long_functions(files: &[Source]) -> Vec<String> {
    long_functions_but(files, LONG_FNS)
}

/// [`long_functions`] with `named` as the exceptions.
fn long_functions_but(files: &[Source], named: &[(&str, &str, &str)]) -> Vec<String> {
    let mut out = Vec::new();
    let mut excused = std::collections::BTreeSet::new();
    for s in files {
        for f in functions(s) {
            if f.lines <= FN_LINES {
                continue;
            }
            if named.iter().any(|(p, n, _)| *p == s.path && *n == f.name) {
                excused.insert((s.path.as_str(), f.name.clone()));
                continue;
            }
            out.push(format!(
                "src/{}:{}: fn {} is {} lines (at most {FN_LINES}): split it, or name it in \
                 LONG_FNS with why it stays",
                s.path, f.line, f.name, f.lines
            ));
        }
    }
    let walked: Vec<&str> = files.iter().map(|s| s.path.as_str()).collect();
    for (path, name, _) in named {
        if walked.contains(path) && !excused.contains(&(*path, name.to_string())) {
            out.push(format!(
                "src/{path}: fn {name} is a named exception in LONG_FNS but no longer over \
                 {FN_LINES} lines: drop its row"
            ));
        }
    }
    out
}

#[cfg(test)]
mod self_tests {
    use super::super::super::code::sources;
    use super::*;

    fn read(path: &str, text: &str) -> Vec<Source> {
        sources(&[(path.to_string(), text.to_string())])
    }

    fn body(n: usize) -> String {
        (0..n).map(|i| format!("    let x{i} = {i};\n")).collect()
    }

    #[test]
    fn a_function_over_the_limit_is_reported_with_its_length() {
        // 3 lines of signature, 79 of body and the brace: 83.
        let text = format!(
            "//! x\nfn short() {{}}\n\npub(crate) async fn long<T: Fn(u8)>(\n    t: T,\n) -> [u8; 2] {{\n{}}}\n",
            body(79)
        );
        let v = long_functions(&read("watch/act.rs", &text));
        assert_eq!(v.len(), 1, "{v:?}");
        assert!(
            v[0].starts_with("src/watch/act.rs:4: fn long is 83 lines"),
            "{v:?}"
        );
        // At the limit: fine.
        let text = format!("fn edge() {{\n{}}}\n", body(78));
        assert!(long_functions(&read("watch/act.rs", &text)).is_empty());
    }

    #[test]
    fn test_code_declarations_and_pointer_types_are_not_counted() {
        let long = body(90);
        let text = format!(
            "trait T {{ fn f(&self); }}\ntype P = fn(u8) -> u8;\n#[cfg(test)]\nmod tests {{\n    fn big() {{\n{long}    }}\n}}\n"
        );
        let s = read("run/mod.rs", &text);
        assert!(functions(&s[0]).is_empty(), "{:?}", functions(&s[0]));
        // Braces in comments and literals do not end a body.
        let text = "fn a() {\n    let s = \"}\";\n    // }\n    let c = '}';\n}\n";
        let f = functions(&read("run/mod.rs", text)[0]);
        assert_eq!(f[0].lines, 5, "{f:?}");
    }

    #[test]
    fn a_named_exception_holds_for_its_function_and_must_still_be_long() {
        // A planted row: the rule holds whatever LONG_FNS names today.
        let named = [("run/status.rs", "annotate", "planted")];
        let (path, name, _) = named[0];
        let text = format!(
            "fn {name}() {{\n{}}}\nfn other() {{\n{}}}\n",
            body(90),
            body(90)
        );
        let v = long_functions_but(&read(path, &text), &named);
        assert_eq!(v.len(), 1, "{v:?}");
        assert!(v[0].contains("fn other"), "{v:?}");
        let v = long_functions_but(&read(path, &format!("fn {name}() {{}}\n")), &named);
        assert_eq!(v.len(), 1, "{v:?}");
        assert!(v[0].contains("no longer over"), "{v:?}");
    }
}
