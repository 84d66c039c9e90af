//! The rule that the watch's events carry their causes typed, not in words:
//! a `reason` or `refusal` field, or a `Waiting` release, that is a `String` in
//! `output/watch_log/event.rs` is a sentence made far from the printer
//! (review N9). The words live in `output/watch_log/causes.rs`.

use super::super::code::Source;

/// The file of the watch's events.
pub(in crate::architecture) const EVENTS: &str = "output/watch_log/event.rs";

/// Fields that say why, typed (`Cause`) and never words.
const TYPED: [&str; 3] = ["reason: String", "refusal: String", "Waiting(String)"];

/// Every why field of the watch's events that is a `String`, tests left out.
pub(in crate::architecture) fn worded_events(files: &[Source]) -> Vec<String> {
    let mut out = Vec::new();
    for s in files.iter().filter(|s| s.path == EVENTS) {
        for field in TYPED {
            for (at, _) in s.code.match_indices(field) {
                let before = s.code[..at].chars().next_back();
                if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                    continue;
                }
                out.push(format!(
                    "src/{}:{}: `{field}` in a watch event: type it (a `Cause`), its words in output/watch_log/causes.rs",
                    s.path,
                    s.line_of(at)
                ));
            }
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
    fn a_worded_reason_in_a_watch_event_is_reported() {
        let events = "enum E {\n    Trouble {\n        module: String,\n        reason: String,\n    },\n    Waiting(String),\n}\n";
        let v = worded_events(&read(EVENTS, events));
        assert_eq!(v.len(), 2, "{v:?}");
        assert!(
            v[0].starts_with("src/output/watch_log/event.rs:4: `reason: String`"),
            "{v:?}"
        );
        // Typed, another name ending so, elsewhere, a comment or test code: fine.
        let fine = "enum E {\n    T { reason: Cause, the_reason: String },\n}\n// reason: String\n#[cfg(test)]\nmod tests { struct S { reason: String } }\n";
        assert!(worded_events(&read(EVENTS, fine)).is_empty());
        assert!(worded_events(&read("output/reports.rs", events)).is_empty());
    }
}
