//! The rule that inside `stack/` a room (a child of the face: `stack/start/`,
//! `stack/bound.rs`, …) names only the rooms on the floors below its own
//! (issue 47, the review's N5): `start/` once used `update/`'s gate and
//! rollback while `update/` used `start/`'s `Stack` and `Bound`, so "start is
//! below update" was false. What both use sits below both (`swap/`), and the
//! floors are written down here, lowest first, over the import graph the
//! other rules read (`imports.rs`). Naming the face (`crate::stack::X` from a
//! child) is `face.rs`'s rule.

use super::super::imports::Graph;

/// `stack/`'s rooms, lowest first, a floor a row, with what the floor holds.
/// A room names only rooms on the floors below its own, never one beside it;
/// a new room takes its floor here (ARCHITECTURE.md, `stack/`).
pub(in crate::architecture) const STACK_FLOORS: &[(&[&str], &str)] = &[
    (
        &["env", "one_stack", "project", "started"],
        "what a verb works with: the connection, one stack, its files; the engine's start",
    ),
    (
        &["compose_cli", "look"],
        "compose's own answers, and what the containers say",
    ),
    (&["logs"], "a stack's lines and their history"),
    (
        &["bound", "evidence", "forecast"],
        "a start's deadline, a crash's evidence kept, what the next start would do",
    ),
    (
        &["swap"],
        "a change of images and the way back: gate, rollback, quarantine, checkpoint, transaction log",
    ),
    (
        &["start"],
        "a start: compose or the fast path, and the wait",
    ),
    (
        &["update", "down", "repair"],
        "the verbs on a start: an update, a stop, a repair",
    ),
    (
        &["session"],
        "the engine as the layers above ask it (a repair's plan among its questions)",
    ),
];

/// The floor of a room of `stack/` (`None`: it has no row).
fn floor_of(room: &str) -> Option<usize> {
    STACK_FLOORS
        .iter()
        .position(|(rooms, _)| rooms.contains(&room))
}

/// The room of `stack/` a module is in (`stack::start::wait` → `start`), or
/// `None` outside `stack/` and for the face itself.
fn room_of(module: &str) -> Option<&str> {
    module.strip_prefix("stack::")?.split("::").next()
}

/// Every import from one room of `stack/` into another that is not on a
/// floor below it, and every room with no floor in [`STACK_FLOORS`].
pub(in crate::architecture) fn room_edges_in(graph: &Graph) -> Vec<String> {
    let mut out = Vec::new();
    let rooms: std::collections::BTreeSet<&str> =
        graph.modules.iter().filter_map(|m| room_of(m)).collect();
    for room in &rooms {
        if floor_of(room).is_none() {
            out.push(format!(
                "src/stack/{room}: room {room} of stack/ has no floor in STACK_FLOORS; place it \
                 there and in ARCHITECTURE.md's `stack/` (tidy/stack_rooms.rs)"
            ));
        }
    }
    for (from, tos) in &graph.edges {
        let Some(f) = room_of(from) else { continue };
        for (to, at) in tos {
            let Some(t) = room_of(to) else { continue };
            let (Some(ff), Some(ft)) = (floor_of(f), floor_of(t)) else {
                continue;
            };
            if f != t && ft >= ff {
                out.push(format!(
                    "{at}: {from} -> {to}: stack/{f} (floor {ff}) names stack/{t} (floor {ft}), \
                     which is not below it; move what both use below both (STACK_FLOORS, \
                     tidy/stack_rooms.rs)"
                ));
            }
        }
    }
    out
}

/// The rooms [`STACK_FLOORS`] names that are no room of `stack/` (drop them).
pub(in crate::architecture) fn stale_rooms(graph: &Graph) -> Vec<String> {
    STACK_FLOORS
        .iter()
        .flat_map(|(rooms, _)| rooms.iter())
        .filter(|r| !graph.modules.iter().any(|m| room_of(m) == Some(**r)))
        .map(|r| format!("stack/{r}: listed in STACK_FLOORS, but no such room (drop it)"))
        .collect()
}

#[cfg(test)]
mod self_tests {
    use super::super::super::imports::graph;
    use super::*;

    fn files(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(p, t)| (p.to_string(), t.to_string()))
            .collect()
    }

    #[test]
    fn a_room_naming_one_not_below_it_is_reported() {
        // start/ naming update/ again: the climb this rule was written for.
        let f = files(&[
            ("stack.rs", "mod start;\nmod swap;\nmod update;\n"),
            ("stack/swap.rs", "pub(crate) mod rollback;\n"),
            ("stack/swap/rollback.rs", "pub(crate) struct Rollback;\n"),
            ("stack/update.rs", "pub(crate) mod gate;\n"),
            ("stack/update/gate.rs", "pub(crate) struct Gate;\n"),
            (
                "stack/start/mod.rs",
                "use crate::stack::swap::rollback::Rollback;\n\nuse crate::stack::update::gate::Gate;\n",
            ),
        ]);
        let v = room_edges_in(&graph(&f));
        assert_eq!(v.len(), 1, "{v:?}");
        assert!(
            v[0].starts_with("src/stack/start/mod.rs:3: stack::start -> stack::update::gate"),
            "{v:?}"
        );
        assert!(v[0].contains("not below it"), "{v:?}");
        // Downward is the way: update/ names start/ and swap/.
        let f = files(&[
            ("stack.rs", "mod start;\nmod swap;\nmod update;\n"),
            ("stack/swap.rs", "pub(crate) struct Swap;\n"),
            ("stack/start/mod.rs", "pub(crate) struct Launch;\n"),
            (
                "stack/update.rs",
                "use crate::stack::start::Launch;\nuse crate::stack::swap::Swap;\n",
            ),
        ]);
        assert!(room_edges_in(&graph(&f)).is_empty());
        // Rooms on one floor do not name each other: down/ beside repair/.
        let f = files(&[
            ("stack/repair.rs", "pub(crate) fn plan() {}\n"),
            (
                "stack/down.rs",
                "fn f() { crate::stack::repair::plan(); }\n",
            ),
        ]);
        let v = room_edges_in(&graph(&f));
        assert_eq!(v.len(), 1, "{v:?}");
        assert!(v[0].contains("stack::down -> stack::repair"), "{v:?}");
        // A room the table does not know must be placed; test code is exempt.
        let f = files(&[
            ("stack/env.rs", "pub(crate) struct Env;\n"),
            (
                "stack/newroom.rs",
                "use crate::stack::env::Env;\n#[cfg(test)]\nmod tests { use crate::stack::session::S; }\n",
            ),
        ]);
        let v = room_edges_in(&graph(&f));
        assert_eq!(v.len(), 1, "{v:?}");
        assert!(
            v[0].contains("room newroom of stack/ has no floor"),
            "{v:?}"
        );
        // A row with no room behind it is stale.
        assert!(
            stale_rooms(&graph(&f))
                .iter()
                .any(|s| s.contains("stack/swap:"))
        );
    }
}
