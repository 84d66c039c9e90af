//! The rule that hal's prefix is written once: the printer (`output/ui.rs`)
//! puts `hal: ` before every message on stderr, so a caller that writes it
//! again prints `hal: hal: …` (as `adopt` once did). Moved here from a unit
//! test of `output/ui.rs` that walked `src/` on its own.

use super::super::code::Source;

/// The prefix the printer adds (`error::PREFIX`).
const PREFIX: &str = "hal: ";

/// The printer's calls that add the prefix themselves.
const CALLS: &[&str] = &[".note(", ".problem(", ".nothing(", ".warn("];

/// Every call of the printer whose message starts with the prefix again.
pub(in crate::architecture) fn doubled_prefixes(files: &[Source]) -> Vec<String> {
    let mut out = Vec::new();
    for s in files {
        for call in CALLS {
            for (at, _) in s.text.match_indices(call) {
                let arg = s.text[at + call.len()..].trim_start();
                let arg = arg.strip_prefix("&format!(").unwrap_or(arg).trim_start();
                if arg.starts_with(&format!("\"{PREFIX}")) {
                    out.push(format!(
                        "src/{}:{}: `{call}\"{PREFIX}…`: the printer writes the prefix; the message names what and why",
                        s.path,
                        s.line_of(at)
                    ));
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod self_tests {
    use super::super::super::code::sources;
    use super::*;

    fn read(text: &str) -> Vec<Source> {
        sources(&[("cmd/adopt.rs".to_string(), text.to_string())])
    }

    #[test]
    fn a_message_that_writes_the_prefix_again_is_reported() {
        let v = doubled_prefixes(&read(
            "fn f(ui: &Ui) {\n    ui.note(&format!(\"hal: adopt {x}: refused\"));\n}\n",
        ));
        assert_eq!(v.len(), 1, "{v:?}");
        assert!(
            v[0].starts_with("src/cmd/adopt.rs:2: `.note(\"hal: …`"),
            "{v:?}"
        );
        let v = doubled_prefixes(&read("fn f(ui: &Ui) { ui.warn(\"hal: x\") }"));
        assert_eq!(v.len(), 1, "{v:?}");
        // Without the prefix, in a comment, or in test code: fine.
        assert!(
            doubled_prefixes(&read("fn f(ui: &Ui) { ui.note(\"adopt web: refused\") }")).is_empty()
        );
        assert!(doubled_prefixes(&read("// ui.note(\"hal: x\")\nfn f() {}")).is_empty());
        let in_test =
            "fn f() {}\n#[cfg(test)]\nmod tests { fn g(ui: &Ui) { ui.note(\"hal: x\") } }";
        assert!(doubled_prefixes(&read(in_test)).is_empty());
    }
}
