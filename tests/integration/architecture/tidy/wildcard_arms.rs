//! The rule that the watch log's tables match their events exhaustively: a
//! `_ =>` arm in `output/watch_log/` let an event of the wrong group print an
//! empty line while the compiler said nothing (review N8). Each group of
//! events is its own enum, so each table names every variant of its group.

use super::super::code::Source;

/// The folder whose matches name every arm.
const TABLES: &str = "output/watch_log/";

/// Every wildcard arm (`_ =>`) in the watch log's code, tests left out.
pub(in crate::architecture) fn wildcard_arms(files: &[Source]) -> Vec<String> {
    let mut out = Vec::new();
    for s in files.iter().filter(|s| s.path.starts_with(TABLES)) {
        for (at, _) in s.code.match_indices("_ =>") {
            let before = s.code[..at].chars().next_back();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                continue;
            }
            out.push(format!(
                "src/{}:{}: `_ =>` in a table of the watch log: name each variant of the group",
                s.path,
                s.line_of(at)
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

    #[test]
    fn a_wildcard_arm_in_the_watch_log_is_reported() {
        let table = "fn f(e: &E) -> L {\n    match e {\n        E::A => a(),\n        _ => L::default(),\n    }\n}\n";
        let v = wildcard_arms(&read("output/watch_log/view.rs", table));
        assert_eq!(v.len(), 1, "{v:?}");
        assert!(
            v[0].starts_with("src/output/watch_log/view.rs:4: `_ =>`"),
            "{v:?}"
        );
        // Elsewhere, a named binding, a comment, a literal or test code: fine.
        assert!(wildcard_arms(&read("output/warnings.rs", table)).is_empty());
        let fine = "fn f(e: E) { match e { E::A => a(), other_ => b(other_) } }\n// _ => x\nfn g() { h(\"_ =>\") }";
        assert!(wildcard_arms(&read("output/watch_log/view.rs", fine)).is_empty());
        let in_test = "fn f() {}\n#[cfg(test)]\nmod tests { fn g(e: E) { match e { _ => () } } }";
        assert!(wildcard_arms(&read("output/watch_log/tests.rs", in_test)).is_empty());
    }
}
