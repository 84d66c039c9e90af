//! The rule that a folder with a face is entered only through it: its module
//! file (`stack.rs`, or `stack/mod.rs`) declares every child private (the
//! compiler then keeps the layers above out), and no child names the face,
//! only the sibling that defines what it needs (`crate::stack::one_stack::Stack`,
//! never `crate::stack::Stack`), so the face stays the top floor of its folder
//! (ARCHITECTURE.md, `stack/`, `run/`). `stack.rs` sits beside its folder
//! rather than in it so that the start code the old `stack/mod.rs` held kept
//! its history as `stack/start/mod.rs`; `run.rs` followed (the runner the old
//! `run/mod.rs` held is `run/runner.rs`).

use super::super::code::Source;
use super::super::imports::Graph;

/// The folders whose module file is their face.
pub(in crate::architecture) const FACES: &[&str] = &["stack", "run"];

/// Every child of a face that names the face (an import graph edge from
/// `FOLDER::…` to `FOLDER`).
pub(in crate::architecture) fn children_naming_their_face(graph: &Graph) -> Vec<String> {
    let mut out = Vec::new();
    for face in FACES {
        let inside = format!("{face}::");
        for (from, tos) in &graph.edges {
            if !from.starts_with(&inside) {
                continue;
            }
            if let Some(at) = tos.get(*face) {
                out.push(format!(
                    "{at}: {from} -> {face}: a child of {face}/ names its face; name the sibling \
                     that defines it (the face only re-exports)"
                ));
            }
        }
    }
    out
}

/// Every child a face declares open (`pub … mod NAME;`): a face's children are
/// private, and what the layers above may use is re-exported by name.
pub(in crate::architecture) fn open_children(files: &[Source]) -> Vec<String> {
    let mut out = Vec::new();
    for face in FACES {
        let (file, folder) = (format!("{face}.rs"), format!("{face}/mod.rs"));
        let Some(s) = files.iter().find(|s| s.path == file || s.path == folder) else {
            continue;
        };
        let path = &s.path;
        for (n, line) in s.code.lines().enumerate() {
            let words: Vec<&str> = line.split_whitespace().collect();
            let opens = words.first().is_some_and(|w| w.starts_with("pub"));
            let child = words.len() >= 3
                && words[words.len() - 2] == "mod"
                && words[words.len() - 1].ends_with(';');
            if opens && child {
                out.push(format!(
                    "src/{path}:{}: `{}`: a face's children are private; re-export what the \
                     layers above use",
                    n + 1,
                    line.trim()
                ));
            }
        }
    }
    out
}

#[cfg(test)]
mod self_tests {
    use super::super::super::code::sources;
    use super::super::super::imports::graph;
    use super::*;

    fn files(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(p, t)| (p.to_string(), t.to_string()))
            .collect()
    }

    #[test]
    fn a_child_naming_its_face_is_reported() {
        let f = files(&[
            (
                "stack/mod.rs",
                "mod repair;\nmod start;\npub(crate) use start::Stack;\n",
            ),
            ("stack/start/mod.rs", "pub(crate) struct Stack;\n"),
            (
                "stack/repair.rs",
                "use crate::stack::start::Stack;\n\nuse crate::stack::Stack as S;\n",
            ),
        ]);
        let v = children_naming_their_face(&graph(&f));
        assert_eq!(v.len(), 1, "{v:?}");
        assert!(
            v[0].starts_with("src/stack/repair.rs:3: stack::repair -> stack"),
            "{v:?}"
        );
        // `super::` from a direct child is the face too.
        let f = files(&[
            ("stack/mod.rs", "mod down;\npub(crate) struct Stack;\n"),
            ("stack/down.rs", "use super::Stack;\n"),
        ]);
        assert_eq!(children_naming_their_face(&graph(&f)).len(), 1);
        // Outside the folder, the face is the way in.
        let f = files(&[
            ("stack/mod.rs", "pub(crate) struct Stack;\n"),
            ("cmd/mod.rs", "use crate::stack::Stack;\n"),
        ]);
        assert!(children_naming_their_face(&graph(&f)).is_empty());
        // `run/` is a face's folder too: its children name the sibling.
        let f = files(&[
            (
                "run.rs",
                "mod node;\nmod follow;\npub(crate) use node::Node;\n",
            ),
            ("run/node.rs", "pub(crate) struct Node;\n"),
            (
                "run/follow.rs",
                "use crate::run::node::Node;\nuse crate::run::Node as N;\n",
            ),
        ]);
        let v = children_naming_their_face(&graph(&f));
        assert_eq!(v.len(), 1, "{v:?}");
        assert!(
            v[0].starts_with("src/run/follow.rs:2: run::follow -> run"),
            "{v:?}"
        );
    }

    #[test]
    fn an_open_child_of_a_face_is_reported() {
        let text = "//! x\nmod start;\npub(crate) mod repair;\npub(crate) mod identity {\n    pub(crate) use crate::stack::look::identity::f;\n}\n";
        let v = open_children(&sources(&files(&[("stack/mod.rs", text)])));
        assert_eq!(v.len(), 1, "{v:?}");
        assert!(v[0].starts_with("src/stack/mod.rs:3:"), "{v:?}");
        let v = open_children(&sources(&files(&[("stack.rs", text)])));
        assert!(v[0].starts_with("src/stack.rs:3:"), "{v:?}");
        let text = "//! x\nmod node;\npub(crate) mod follow;\npub(crate) use node::Node;\n";
        let v = open_children(&sources(&files(&[("run.rs", text)])));
        assert_eq!(v.len(), 1, "{v:?}");
        assert!(v[0].starts_with("src/run.rs:3:"), "{v:?}");
        // A test-only child is test code.
        let text = "mod start;\n#[cfg(test)]\npub(crate) mod memory;\n";
        assert!(open_children(&sources(&files(&[("stack/mod.rs", text)]))).is_empty());
    }
}
