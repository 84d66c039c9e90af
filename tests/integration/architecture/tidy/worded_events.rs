//! The rule that the watch's events carry their causes typed, not in words:
//! a `reason` or `refusal` field, or a `Waiting` release, that is a `String` in
//! `output/watch_log/event.rs` is a sentence made far from the printer
//! (review N9). The words live in `output/watch_log/causes.rs`.
//!
//! And the causes carried to the printer from elsewhere (issue 47): a repair's
//! error and plan, a hold's reason (in the watch and in hal's state), a failed
//! start's and a rollback's cause in hal's state and in a status, a container's
//! trouble and what a diagnosed failure saw of it: each a type, its words in
//! `output/`. A `Display` of a cause's type is written only there ([`CAUSE_WORDS`]).

use super::super::code::Source;
use super::{Rule, View};

/// The file of the watch's events.
pub(in crate::architecture) const EVENTS: &str = "output/watch_log/event.rs";

/// Fields that say why, typed (`Cause`) and never words.
const TYPED: [&str; 3] = ["reason: String", "refusal: String", "Waiting(String)"];

/// Items whose why fields are typed: (file under `src/`, the item, its fields that must not be words).
pub(in crate::architecture) const TYPED_ITEMS: [(&str, &str, &[&str]); 14] = [
    (EVENTS, "enum RepairEvent", &["error: String"]),
    (EVENTS, "enum Repaired", &["Containers(Vec<String>)"]),
    (
        EVENTS,
        "enum Plan",
        &["why: String", "said: String", "how: &'static str"],
    ),
    ("watch/policy/hold.rs", "struct Hold", &["reason: String"]),
    ("state/records.rs", "struct HoldRecord", &["reason: String"]),
    (
        "state/records.rs",
        "struct FailureRecord",
        &["reason: String"],
    ),
    (
        "state/records.rs",
        "struct RollbackRecord",
        &["reason: String"],
    ),
    (
        "state/quarantined.rs",
        "struct QuarantineRecord",
        &["reason: String"],
    ),
    // A status's causes: a container's trouble, a failed start's and a rollback's cause.
    (
        "module/reason.rs",
        "enum Reason",
        &["Container(String)", "cause: String"],
    ),
    ("module/status.rs", "struct HeldStatus", &["reason: String"]),
    (
        "module/status.rs",
        "struct QuarantinedStatus",
        &["reason: String"],
    ),
    ("module/warning.rs", "enum Warning", &["reason: String"]),
    // What a diagnosed failure saw, and its record: compared as values, never words.
    (
        "module/diagnosed.rs",
        "struct Detailed",
        &["seen: Vec<String>"],
    ),
    (
        "module/recorded_causes.rs",
        "enum StartCause",
        &["seen: Vec<String>"],
    ),
];

/// The types of a module's causes whose words live in `output/`: a `Display`
/// for one of them anywhere else is a cause worded far from the printer.
pub(in crate::architecture) const CAUSE_WORDS: Rule = Rule {
    name: "a cause's words (`Display for Reason`, `Reasons`, `ContainerTrouble`, `StartCause`…) \
           only in output/",
    words: &[
        "Display for Reason",
        "Display for Reasons",
        "Display for Requirement",
        "Display for ContainerTrouble",
        "Display for StaleNamespace",
        "Display for MissingService",
        "Display for StartCause",
        "Display for RollbackCause",
        "Display for HoldCause",
        "Display for Warning",
    ],
    view: View::Code,
    whole: true,
    tail: false,
    allowed: &[(
        "output/",
        "",
        "the printer: a cause's words, beside the warnings'",
    )],
};

/// The text of `item`'s body in `code` (`struct Hold {` to its closing brace),
/// and where it starts; none when the item is not there.
fn body<'a>(code: &'a str, item: &str) -> Option<(usize, &'a str)> {
    let at = code.match_indices(item).find_map(|(at, _)| {
        let after = code[at + item.len()..].chars().next();
        after.is_some_and(|c| c == ' ' || c == '{').then_some(at)
    })?;
    let open = at + code[at..].find('{')?;
    let mut depth = 0usize;
    for (i, c) in code[open..].char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return Some((open, &code[open..=open + i]));
                }
            }
            _ => {}
        }
    }
    None
}

/// Every why field of [`TYPED_ITEMS`] that is words (a `String`), tests left out.
pub(in crate::architecture) fn worded_items(files: &[Source]) -> Vec<String> {
    let mut out = Vec::new();
    for (path, item, fields) in TYPED_ITEMS {
        for s in files.iter().filter(|s| s.path == path) {
            let Some((start, text)) = body(&s.code, item) else {
                continue;
            };
            for field in fields {
                for (at, _) in text.match_indices(field) {
                    let before = text[..at].chars().next_back();
                    if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                        continue;
                    }
                    out.push(format!(
                        "src/{}:{}: `{field}` in `{item}`: type it, its words in output/",
                        s.path,
                        s.line_of(start + at)
                    ));
                }
            }
        }
    }
    out
}

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

    #[test]
    fn a_worded_cause_in_a_typed_item_is_reported() {
        let records = "pub struct HoldRecord {\n    pub since: Stamp,\n    pub reason: String,\n}\npub struct RollbackRecord {\n    pub reason: String,\n}\npub struct FailureRecord {\n    pub at: Stamp,\n    pub reason: String,\n}\n";
        let v = worded_items(&read("state/records.rs", records));
        assert_eq!(v.len(), 3, "{v:?}");
        assert!(
            v[0].starts_with("src/state/records.rs:3: `reason: String` in `struct HoldRecord`"),
            "{v:?}"
        );
        assert!(v[1].starts_with("src/state/records.rs:10: "), "{v:?}");
        assert!(
            v[2].starts_with("src/state/records.rs:6: `reason: String` in `struct RollbackRecord`"),
            "{v:?}"
        );
        let reason = "pub(crate) enum Reason {\n    NoContainers,\n    Container(String),\n    Failed { service: Option<String>, cause: String },\n}\npub(crate) struct Requirement {\n    pub name: String,\n}\n";
        let v = worded_items(&read("module/reason.rs", reason));
        assert_eq!(v.len(), 2, "{v:?}");
        assert!(
            v[0].contains(":3: `Container(String)` in `enum Reason`"),
            "{v:?}"
        );
        assert!(
            v[1].contains(":4: `cause: String` in `enum Reason`"),
            "{v:?}"
        );
        let seen = "pub(crate) struct Detailed {\n    pub summary: String,\n    pub seen: Vec<String>,\n}\n";
        let v = worded_items(&read("module/diagnosed.rs", seen));
        assert_eq!(v.len(), 1, "{v:?}");
        let events = "enum Plan {\n    Module,\n    Recreate { why: String },\n}\nenum WatchOwn {\n    Stopped { why: String },\n}\nenum RepairEvent {\n    RepairFailed { error: String },\n}\n";
        let v = worded_items(&read(EVENTS, events));
        assert_eq!(v.len(), 2, "{v:?}");
        assert!(
            v[0].contains(":9: `error: String` in `enum RepairEvent`"),
            "{v:?}"
        );
        assert!(v[1].contains(":3: `why: String` in `enum Plan`"), "{v:?}");
        // Typed, another item of a longer name, another file: fine.
        let fine =
            "struct Hold {\n    reason: Cause,\n}\nstruct Holder {\n    reason: String,\n}\n";
        assert!(worded_items(&read("watch/policy/hold.rs", fine)).is_empty());
        assert!(worded_items(&read("watch/policy/other.rs", records)).is_empty());
    }

    #[test]
    fn a_causes_words_outside_the_printer_are_reported() {
        use super::super::words;
        let one = |path: &str, text: &str| vec![(path.to_string(), text.to_string())];
        for planted in [
            "impl fmt::Display for Reason {\n}",
            "impl std::fmt::Display for Reasons {}",
            "impl Display for ContainerTrouble {}",
            "impl fmt::Display for StartCause {}",
        ] {
            let v = words(&CAUSE_WORDS, &one("module/reason.rs", planted));
            assert_eq!(v.len(), 1, "{planted}: {v:?}");
            assert!(v[0].starts_with("src/module/reason.rs:1: "), "{v:?}");
        }
        // In the printer, another type of a longer name, a literal, test code: fine.
        let planted = "impl fmt::Display for Reason {}";
        assert!(words(&CAUSE_WORDS, &one("output/reason_words.rs", planted)).is_empty());
        let fine = "impl Display for Reasoning {}\nconst S: &str = \"Display for Reason\";\n#[cfg(test)]\nmod tests {\n    impl Display for Reason {}\n}\n";
        assert!(words(&CAUSE_WORDS, &one("module/reason.rs", fine)).is_empty());
    }
}
