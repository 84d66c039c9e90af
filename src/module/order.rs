//! Start order from the config's `after = [...]`: layers that may run concurrently, and cycles named.

use std::collections::{BTreeMap, BTreeSet};

/// Splits `names` into layers: every module comes after the modules it names
/// in `after` (among those in `names`; others are not waited for).
/// `reverse` gives the stop order: dependents first.
pub(crate) fn layers(
    names: &[String],
    after: &dyn Fn(&str) -> Vec<String>,
    reverse: bool,
) -> Vec<Vec<String>> {
    let set: BTreeSet<&str> = names.iter().map(String::as_str).collect();
    let mut deps: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
    for n in names {
        let mine: BTreeSet<String> = after(n)
            .into_iter()
            .filter(|d| set.contains(d.as_str()) && d != n)
            .collect();
        deps.insert(n.as_str(), mine);
    }
    let mut done: BTreeSet<String> = BTreeSet::new();
    let mut out: Vec<Vec<String>> = Vec::new();
    while done.len() < names.len() {
        // Keep the caller's order within a layer.
        let layer: Vec<String> = names
            .iter()
            .filter(|n| !done.contains(n.as_str()))
            .filter(|n| deps[n.as_str()].iter().all(|d| done.contains(d)))
            .cloned()
            .collect();
        if layer.is_empty() {
            // A cycle: config loading refuses these, so run the rest together.
            out.push(
                names
                    .iter()
                    .filter(|n| !done.contains(n.as_str()))
                    .cloned()
                    .collect(),
            );
            break;
        }
        done.extend(layer.iter().cloned());
        out.push(layer);
    }
    if reverse {
        out.reverse();
    }
    out
}

/// The first cycle in the `after` graph, as `a → b → a`.
pub(crate) fn find_cycle(graph: &BTreeMap<String, Vec<String>>) -> Option<Vec<String>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        Open,
        Closed,
    }
    fn visit(
        n: &str,
        graph: &BTreeMap<String, Vec<String>>,
        marks: &mut BTreeMap<String, Mark>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        match marks.get(n).copied().unwrap_or(Mark::New) {
            Mark::Closed => return None,
            Mark::Open => {
                let start = path.iter().position(|p| p == n).unwrap_or(0);
                let mut cycle = path[start..].to_vec();
                cycle.push(n.to_string());
                return Some(cycle);
            }
            Mark::New => {}
        }
        marks.insert(n.to_string(), Mark::Open);
        path.push(n.to_string());
        for d in graph.get(n).map(Vec::as_slice).unwrap_or(&[]) {
            if let Some(c) = visit(d, graph, marks, path) {
                return Some(c);
            }
        }
        path.pop();
        marks.insert(n.to_string(), Mark::Closed);
        None
    }
    let mut marks = BTreeMap::new();
    for n in graph.keys() {
        let mut path = Vec::new();
        if let Some(c) = visit(n, graph, &mut marks, &mut path) {
            return Some(c);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn dependencies_come_first_and_stop_reverses() {
        let after = |n: &str| match n {
            "web" | "mail" => vec!["meshware".to_string()],
            "app" => vec!["web".to_string(), "absent".to_string()],
            _ => vec![],
        };
        let all = names(&["app", "web", "mail", "meshware", "solo"]);
        assert_eq!(
            layers(&all, &after, false),
            vec![
                names(&["meshware", "solo"]),
                names(&["web", "mail"]),
                names(&["app"])
            ]
        );
        assert_eq!(layers(&all, &after, true)[0], names(&["app"]));
        assert_eq!(
            layers(&names(&["app"]), &after, false),
            vec![names(&["app"])]
        );
    }

    #[test]
    fn cycles_are_named() {
        let g: BTreeMap<String, Vec<String>> = [
            ("a".to_string(), names(&["b"])),
            ("b".to_string(), names(&["c"])),
            ("c".to_string(), names(&["a"])),
            ("d".to_string(), names(&["a"])),
        ]
        .into_iter()
        .collect();
        assert_eq!(find_cycle(&g).unwrap(), names(&["a", "b", "c", "a"]));
        let ok: BTreeMap<String, Vec<String>> =
            [("a".to_string(), names(&["b"]))].into_iter().collect();
        assert!(find_cycle(&ok).is_none());
    }
}
