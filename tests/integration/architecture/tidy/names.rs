//! The rules that a name leads to one thing (issue 47, the review's N4, N6
//! and N7): no two types of `src/` share a name (`ONE_NAME`), a face
//! re-exports each name as its definition spells it (no `as`), and no file
//! name repeats beyond the few listed with their reason. A grep of a name, or
//! a fuzzy find of a file, then lands on one definition. Test code is exempt
//! (`code.rs` blanks it and drops test-only files).

use std::collections::BTreeMap;

use super::super::code::Source;
use super::face::FACES;

/// The rule's name, as a violation ends.
pub(in crate::architecture) const ONE_NAME: &str = "ONE_NAME";

/// Type names allowed twice: (name, why). Each is a debt with its reason, not
/// a precedent; rename one of the pair and drop its row.
pub(in crate::architecture) const SHARED_TYPE_NAMES: &[(&str, &str)] = &[];

/// File names allowed in more than one place: (file name, its places under
/// `src/`, why). A folder's own module file (`mod.rs`) is named by its folder
/// and is not counted. Any other place with one of these names is reported:
/// a new file takes a name that says what it holds.
pub(in crate::architecture) const REPEATED_FILES: &[(&str, &[&str], &str)] = &[
    (
        "update.rs",
        &[
            "cli/update.rs",
            "cmd/update.rs",
            "run/update.rs",
            "stack/update.rs",
            "watch/update.rs",
        ],
        "the verb `update` in each layer it crosses: its flags, its command, its run, the backend's work, the watch's schedule",
    ),
    (
        "status.rs",
        &[
            "cmd/status.rs",
            "module/status.rs",
            "run/status.rs",
            "stack/look/status.rs",
        ],
        "the verb `status` in each layer: its command, the type it reports, the reading of many modules, a stack's reading",
    ),
    (
        "deps.rs",
        &["cmd/doctor/deps.rs", "module/deps.rs"],
        "the module graph's edges, and doctor's `deps` check of them (doctor's files are named by their check)",
    ),
    (
        "adopt.rs",
        &[
            "cmd/doctor/adopt.rs",
            "host/init/systemd/adopt.rs",
            "run/adopt.rs",
        ],
        "the verb `adopt` in each layer it crosses: its run, systemd's letting go of a template's instances, and doctor's `adopt` check (named by its check)",
    ),
    (
        "identity.rs",
        &["cmd/doctor/identity.rs", "stack/look/identity.rs"],
        "whether a project is the module, and doctor's `identity` check of it (named by its check)",
    ),
    (
        "history.rs",
        &["cmd/doctor/history.rs", "stack/logs/history.rs"],
        "whether a stack's lines outlive its containers, and doctor's `history` check of it (named by its check)",
    ),
    (
        "check.rs",
        &["cmd/doctor/check.rs", "stack/update/check.rs"],
        "doctor's check line, and `update --check` (the registry asked, nothing pulled)",
    ),
    (
        "waiting.rs",
        &["run/waiting.rs", "watch/waiting.rs"],
        "a module waiting on a requirement: the verbs' refusal, and the watch's leaving it alone",
    ),
    (
        "netns.rs",
        &["stack/look/netns.rs", "watch/netns.rs"],
        "containers in a dead network namespace: the backend finds them, the watch looks again at who shares one",
    ),
    (
        "node_state.rs",
        &["module/node_state.rs", "run/node_state.rs"],
        "the node's state: the pure rule over statuses, and its reading for `status` and the metrics",
    ),
    (
        "follow.rs",
        &["cmd/logs/follow.rs", "run/follow.rs"],
        // TODO(h-runface merge): run/follow.rs restarts the dependents (a
        // follow-up), not `logs -f`; rename it under run/ and drop this row.
        "`logs -f`, and the follow-up of a restart (to be renamed in run/)",
    ),
    (
        "act.rs",
        &["run/act.rs", "watch/act.rs"],
        "acting on one module: the verbs' step, and the watch's repair",
    ),
    (
        "assess.rs",
        &["host/assess.rs", "stack/look/assess.rs"],
        "a module's state judged from its backend's facts: a unit's and a stack's",
    ),
    (
        "node.rs",
        &["run/node.rs", "stack/look/node.rs"],
        "the node the runner holds, and what the engine says of the node (its start)",
    ),
    (
        "plan.rs",
        &["cmd/adopt/plan.rs", "cmd/plan.rs"],
        "a plan shown, agreed to and carried out, and `adopt`'s own plan",
    ),
    (
        "view.rs",
        &["output/view.rs", "output/watch_log/view.rs"],
        "a view of an answer, and the watch log's view of an event",
    ),
    (
        "line.rs",
        &["logs/line.rs", "output/watch_log/line.rs"],
        "a log line read, and a line of the watch's log before it is written",
    ),
    (
        "journal.rs",
        &["host/init/systemd/journal.rs", "logs/journal.rs"],
        "the node journal's reader, and a unit's lines as systemd's journal keeps them",
    ),
    (
        "logs.rs",
        &["cmd/logs.rs", "stack/logs.rs"],
        "the verb `logs`: its command, and the stack backend's lines",
    ),
    (
        "modules.rs",
        &["cmd/doctor/modules.rs", "watch/modules.rs"],
        "the modules the watch finds again at every pass, and doctor's `modules` check (named by its check)",
    ),
    (
        "last_run.rs",
        &["module/last_run.rs", "state/last_run.rs"],
        "a crash's evidence: as data, and as the file the state keeps",
    ),
    (
        "interpolate.rs",
        &[
            "module/interpolate.rs",
            "stack/project/inputs/interpolate.rs",
        ],
        "compose's variable interpolation: the one reading of a value, and the change check's walk of a project's documents with it",
    ),
    (
        "access.rs",
        &["cmd/logs/access.rs", "logs/access.rs"],
        "whether this process may read the system journal, and the logs command's one word about it",
    ),
];

/// Every type (`struct`, `enum`, `union`, `trait`, `type`) defined in `s`
/// outside test code, as (name, line). A trait's associated type and an
/// impl's (`type After = Rescued;`) are members, not types of their own.
pub(in crate::architecture) fn type_names(s: &Source) -> Vec<(String, usize)> {
    let code: Vec<(usize, char)> = s.code.char_indices().collect();
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut out = Vec::new();
    // Whether each open block is an `impl` or a `trait` (its members are not types).
    let mut blocks: Vec<bool> = Vec::new();
    // The words of the item being read since the last `{`, `}` or `;`.
    let mut header: Vec<String> = Vec::new();
    let mut i = 0;
    while i < code.len() {
        let (at, c) = code[i];
        if c == '#' {
            // An attribute: its words are not the item's.
            let mut depth = 0;
            while i < code.len() {
                match code[i].1 {
                    '[' => depth += 1,
                    ']' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
            i += 1;
            continue;
        }
        if ident(c) {
            let start = i;
            while i < code.len() && ident(code[i].1) {
                i += 1;
            }
            let word: String = code[start..i].iter().map(|(_, c)| c).collect();
            let kind = matches!(
                word.as_str(),
                "struct" | "enum" | "union" | "trait" | "type"
            );
            if kind && !(word == "type" && blocks.last() == Some(&true)) {
                let mut j = i;
                while j < code.len() && code[j].1.is_whitespace() {
                    j += 1;
                }
                let name: String = code[j..]
                    .iter()
                    .map(|(_, c)| *c)
                    .take_while(|c| ident(*c))
                    .collect();
                if name.starts_with(|c: char| c.is_uppercase()) {
                    out.push((name, s.line_of(at)));
                }
            }
            header.push(word);
            continue;
        }
        match c {
            '{' => {
                let first = header.iter().find(|w| {
                    !matches!(
                        w.as_str(),
                        "pub" | "crate" | "super" | "self" | "in" | "unsafe" | "default"
                    )
                });
                blocks.push(first.is_some_and(|w| w == "impl" || w == "trait"));
                header.clear();
            }
            '}' => {
                blocks.pop();
                header.clear();
            }
            ';' => header.clear(),
            _ => {}
        }
        i += 1;
    }
    out
}

/// Every type whose name another type of `src/` has too, but for
/// [`SHARED_TYPE_NAMES`]: each place after the first, naming the first.
pub(in crate::architecture) fn shared_type_names(files: &[Source]) -> Vec<String> {
    let mut places: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for s in files {
        for (name, line) in type_names(s) {
            places
                .entry(name)
                .or_default()
                .push(format!("src/{}:{line}", s.path));
        }
    }
    let mut out = Vec::new();
    for (name, at) in places {
        if at.len() < 2 || SHARED_TYPE_NAMES.iter().any(|(n, _)| *n == name) {
            continue;
        }
        for place in &at[1..] {
            out.push(format!(
                "{place}: `{name}` is defined at {} too: one name per thing; name each for \
                 what it is ({ONE_NAME})",
                at[0]
            ));
        }
    }
    out
}

/// Every `as` in a face's `use` (`pub(crate) use x::{apply as repair}`): a
/// face re-exports each name as its definition spells it, so a grep of what
/// callers write lands on the definition. `as _` (a trait brought in for its
/// methods) renames nothing.
pub(in crate::architecture) fn face_renames(files: &[Source]) -> Vec<String> {
    let mut out = Vec::new();
    for face in FACES {
        let (file, folder) = (format!("{face}.rs"), format!("{face}/mod.rs"));
        let Some(s) = files.iter().find(|s| s.path == file || s.path == folder) else {
            continue;
        };
        for (at, _) in s.code.match_indices("use ") {
            if s.code[..at]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_alphanumeric() || c == '_')
            {
                continue;
            }
            let end = s.code[at..].find(';').map_or(s.code.len(), |e| at + e);
            let stmt = &s.code[at..end];
            let words: Vec<(usize, &str)> = stmt
                .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .scan(0, |off, w| {
                    let here = *off;
                    *off += w.len() + 1;
                    Some((here, w))
                })
                .filter(|(_, w)| !w.is_empty())
                .collect();
            for pair in words.windows(3) {
                let [(_, from), (off, "as"), (_, to)] = pair else {
                    continue;
                };
                if *to == "_" {
                    continue;
                }
                out.push(format!(
                    "src/{}:{}: `{from} as {to}`: a face re-exports by the defining name; \
                     rename the definition to what callers say",
                    s.path,
                    s.line_of(at + off)
                ));
            }
        }
    }
    out
}

/// Every file whose name another file of `src/` has too (not `mod.rs`), but
/// for the places [`REPEATED_FILES`] lists.
pub(in crate::architecture) fn repeated_file_names(files: &[Source]) -> Vec<String> {
    let mut places: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for s in files {
        let name = s.path.rsplit('/').next().unwrap_or(&s.path);
        if name != "mod.rs" {
            places.entry(name).or_default().push(&s.path);
        }
    }
    let mut out = Vec::new();
    for (name, at) in places {
        if at.len() < 2 {
            continue;
        }
        let listed = REPEATED_FILES
            .iter()
            .find(|(n, _, _)| *n == name)
            .map_or(&[][..], |(_, p, _)| *p);
        for place in at.iter().filter(|p| !listed.contains(p)) {
            let others: Vec<String> = at
                .iter()
                .filter(|p| *p != place)
                .map(|p| format!("src/{p}"))
                .collect();
            out.push(format!(
                "src/{place}: the file name `{name}` is taken ({}): name a file for what it \
                 holds (tidy/names.rs, REPEATED_FILES)",
                others.join(", ")
            ));
        }
    }
    out
}

#[cfg(test)]
mod self_tests {
    use super::super::super::code::sources;
    use super::*;

    fn read(list: &[(&str, &str)]) -> Vec<Source> {
        let files: Vec<(String, String)> = list
            .iter()
            .map(|(p, t)| (p.to_string(), t.to_string()))
            .collect();
        sources(&files)
    }

    #[test]
    fn two_types_of_one_name_are_reported() {
        let v = shared_type_names(&read(&[
            ("module/status.rs", "pub(crate) enum Verdict { Pass }\n"),
            (
                "output/checks.rs",
                "//! x\n\n#[derive(Debug)]\npub(crate) struct Verdict(u8);\n",
            ),
        ]));
        assert_eq!(v.len(), 1, "{v:?}");
        assert!(
            v[0].starts_with(
                "src/output/checks.rs:4: `Verdict` is defined at src/module/status.rs:1"
            ),
            "{v:?}"
        );
        // Every kind of type counts, and one inside a function too.
        for planted in [
            "type Seen = (u8, u8);",
            "trait Seen {}",
            "union Seen { a: u8 }",
            "fn f() { struct Seen; }",
        ] {
            let v = shared_type_names(&read(&[
                ("watch/policy/heard.rs", "pub(crate) struct Seen;"),
                ("watch/mod.rs", planted),
            ]));
            assert_eq!(v.len(), 1, "{planted}: {v:?}");
        }
        // An associated type is a member; comments, literals and test code are not types.
        for fine in [
            "impl Planned for ToRescue {\n    type After = Rescued;\n}",
            "trait Planned {\n    type After: Serialize;\n}",
            "unsafe impl<T> Send for X<T> { type After = u8; }",
            "// struct After;",
            "let s = \"struct After\";",
            "fn f() {}\n#[cfg(test)]\nmod tests { struct After; }",
        ] {
            let v = shared_type_names(&read(&[
                ("cmd/plan.rs", "pub(crate) struct After;"),
                ("cmd/rescue.rs", fine),
            ]));
            assert!(v.is_empty(), "{fine}: {v:?}");
        }
        // A function body's `impl Trait` return type is no impl block.
        let v = shared_type_names(&read(&[
            ("a.rs", "struct X;"),
            (
                "b.rs",
                "fn f() -> impl Iterator<Item = u8> { type X = u8; }",
            ),
        ]));
        assert_eq!(v.len(), 1, "{v:?}");
    }

    #[test]
    fn a_rename_in_a_face_is_reported() {
        let face = "//! x\nmod repair;\npub(crate) use repair::{Fix, apply as repair};\npub(crate) use logs::log_plan::Plan\n    as LogPlan;\npub(crate) use x::Trait as _;\npub(crate) mod history {\n    pub(crate) use crate::stack::logs::history::advice as unlabelled;\n}\n";
        let v = face_renames(&read(&[("stack.rs", face)]));
        assert_eq!(v.len(), 3, "{v:?}");
        assert!(
            v[0].starts_with("src/stack.rs:3: `apply as repair`"),
            "{v:?}"
        );
        assert!(
            v[1].starts_with("src/stack.rs:5: `Plan as LogPlan`"),
            "{v:?}"
        );
        assert!(
            v[2].starts_with("src/stack.rs:8: `advice as unlabelled`"),
            "{v:?}"
        );
        // A folder's mod.rs face too; a child of the face, a comment or another file is not the face.
        assert_eq!(
            face_renames(&read(&[("stack/mod.rs", "use a::b as c;")])).len(),
            1
        );
        for (path, fine) in [
            ("stack/start/mod.rs", "use a::b as c;"),
            ("stack.rs", "// use a::b as c;\npub(crate) use a::b;"),
            ("cmd/logs/follow.rs", "use crate::stack::{LogPlan as Plan};"),
        ] {
            assert!(face_renames(&read(&[(path, fine)])).is_empty(), "{fine}");
        }
    }

    #[test]
    fn a_repeated_file_name_is_reported() {
        let v = repeated_file_names(&read(&[
            ("output/order.rs", "pub struct Order;"),
            ("docker/compose/order.rs", "pub fn of_service() {}"),
        ]));
        assert_eq!(v.len(), 2, "{v:?}");
        assert!(
            v[0].starts_with(
                "src/output/order.rs: the file name `order.rs` is taken (src/docker/compose/order.rs)"
            ),
            "{v:?}"
        );
        // The listed places pass; a new place of a listed name does not.
        let v = repeated_file_names(&read(&[
            ("module/deps.rs", "pub struct Graph;"),
            ("cmd/doctor/deps.rs", "pub fn check() {}"),
            ("watch/deps.rs", "pub fn in_order() {}"),
        ]));
        assert_eq!(v.len(), 1, "{v:?}");
        assert!(v[0].starts_with("src/watch/deps.rs:"), "{v:?}");
        // A folder's mod.rs, and a test-only file, are not names of their own.
        let v = repeated_file_names(&read(&[
            ("watch/mod.rs", "mod policy;"),
            ("stack/mod.rs", "mod start;"),
            ("watch/policy.rs", "#[cfg(test)]\nmod waiting;\n"),
            ("watch/policy/waiting.rs", "fn t() {}"),
            ("watch/waiting.rs", "fn w() {}"),
        ]));
        assert!(v.is_empty(), "{v:?}");
    }
}
