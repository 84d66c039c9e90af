//! Which module of `src/` names which, read by a small scanner (no parser
//! crate), and the import cycles that makes.
//!
//! A module is a file: `a/b.rs` and `a/b/mod.rs` are `a::b`; `lib.rs` and
//! `main.rs` are the root, which is no module here. A module depends on
//! another when it names it: a `crate::…` path (in a `use` item, a grouped
//! `use crate::{a, b::c}` tree, or inline like `crate::x::f()`), a `super::…`
//! or `self::…` path, or a path through one of its own child modules
//! (`pub use child::X`). A path counts for the longest prefix of it that is a
//! module. Not counted: a module naming itself, the `mod child;` declaration,
//! and test code (`#[cfg(test)]` items, `mod tests` blocks, a `tests.rs`
//! child), so unit tests may import freely. The files are read as the tidy
//! rules read them (`code.rs`, the one lexer and test-code stripper: comments
//! and literals blanked, test code gone); this only splits that into tokens.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use super::code::{Source, sources};

/// A module path, e.g. `commands::doctor` (`""` is the root).
pub(super) type Module = String;

/// Who depends on whom, with where each dependency was first seen.
#[derive(Debug, Default)]
pub(super) struct Graph {
    pub modules: BTreeSet<Module>,
    /// from → to → `file:line`.
    pub edges: BTreeMap<Module, BTreeMap<Module, String>>,
}

/// The module a file under `src/` holds (`None` for a file that is not a module, e.g. under `bin/`).
pub(super) fn module_of(path: &str) -> Option<Module> {
    let stem = path.strip_suffix(".rs")?;
    if stem.starts_with("bin/") {
        return None;
    }
    let stem = stem.strip_suffix("/mod").unwrap_or(stem);
    if stem == "lib" || stem == "main" {
        return Some(String::new());
    }
    Some(stem.replace('/', "::"))
}

fn join(base: &str, name: &str) -> Module {
    if base.is_empty() {
        name.to_string()
    } else {
        format!("{base}::{name}")
    }
}

fn parent(module: &str) -> Option<Module> {
    if module.is_empty() {
        return None;
    }
    Some(
        module
            .rsplit_once("::")
            .map_or(String::new(), |(p, _)| p.to_string()),
    )
}

/// Builds the graph of `files`: `(path under src/, text)`, read as the tidy
/// rules read them (`code.rs`).
pub(super) fn graph(files: &[(String, String)]) -> Graph {
    graph_of(&sources(files))
}

/// Builds the graph of files already read: test code and test-only modules
/// are gone, comments and literals blanked (`code.rs`).
pub(super) fn graph_of(files: &[Source]) -> Graph {
    let scanned: Vec<(&str, Module, Paths)> = files
        .iter()
        .filter_map(|s| Some((s.path.as_str(), module_of(&s.path)?, scan(&s.code))))
        .collect();
    let mut g = Graph::default();
    for (_, module, _) in &scanned {
        if !module.is_empty() {
            g.modules.insert(module.clone());
        }
    }
    for (path, from, paths) in &scanned {
        if !g.modules.contains(from) {
            continue;
        }
        for (segments, line) in paths {
            let Some(absolute) = absolute(from, segments, &g.modules) else {
                continue;
            };
            let Some(to) = longest_module(&absolute, &g.modules) else {
                continue;
            };
            if to == *from {
                continue;
            }
            g.edges
                .entry(from.clone())
                .or_default()
                .entry(to)
                .or_insert_with(|| format!("src/{path}:{line}"));
        }
    }
    g
}

/// The path `segments`, written in module `from`, from the crate root; `None`
/// when it leaves the crate (`std::…`, a dependency, a local name).
fn absolute(from: &str, segments: &[String], modules: &BTreeSet<Module>) -> Option<Vec<String>> {
    let first = segments.first()?;
    let (mut base, rest): (Module, &[String]) = match first.as_str() {
        "crate" => (String::new(), &segments[1..]),
        "self" => (from.to_string(), &segments[1..]),
        "super" => {
            let mut base = from.to_string();
            let mut i = 0;
            while segments.get(i).is_some_and(|s| s == "super") {
                base = parent(&base)?;
                i += 1;
            }
            (base, &segments[i..])
        }
        // A path through a child module, e.g. `check::Check` beside `mod check;`.
        child if modules.contains(&join(from, child)) => (from.to_string(), segments),
        _ => return None,
    };
    let mut out: Vec<String> = if base.is_empty() {
        Vec::new()
    } else {
        base.split("::").map(str::to_string).collect()
    };
    base.clear();
    out.extend(rest.iter().cloned());
    Some(out)
}

/// The longest prefix of `path` that is a module.
fn longest_module(path: &[String], modules: &BTreeSet<Module>) -> Option<Module> {
    (1..=path.len())
        .rev()
        .map(|n| path[..n].join("::"))
        .find(|m| modules.contains(m))
}

impl Graph {
    /// The cycles, each written from a module back to it, e.g. `["a::b",
    /// "c", "a::b"]`: for each strongly connected group of modules, the
    /// shortest cycle through its smallest module, then through each member
    /// no cycle so far went through, so every module caught in one is named.
    pub(super) fn cycles(&self) -> Vec<Vec<Module>> {
        let mut cycles = Vec::new();
        for group in self.groups() {
            if group.len() < 2 {
                continue;
            }
            let mut named: BTreeSet<Module> = BTreeSet::new();
            for start in &group {
                if named.contains(start) {
                    continue;
                }
                if let Some(c) = self.shortest_cycle(start, &group) {
                    named.extend(c.iter().cloned());
                    cycles.push(c);
                }
            }
        }
        cycles
    }

    fn next(&self, m: &str) -> impl Iterator<Item = &Module> {
        self.edges.get(m).into_iter().flat_map(|e| e.keys())
    }

    /// Strongly connected groups (Tarjan), each sorted.
    fn groups(&self) -> Vec<BTreeSet<Module>> {
        struct Walk<'g> {
            g: &'g Graph,
            index: BTreeMap<&'g str, usize>,
            low: BTreeMap<&'g str, usize>,
            stack: Vec<&'g str>,
            on_stack: BTreeSet<&'g str>,
            out: Vec<BTreeSet<Module>>,
        }
        impl<'g> Walk<'g> {
            fn visit(&mut self, v: &'g str) {
                let i = self.index.len();
                self.index.insert(v, i);
                self.low.insert(v, i);
                self.stack.push(v);
                self.on_stack.insert(v);
                let g = self.g;
                for w in g.next(v) {
                    let w = w.as_str();
                    if !self.index.contains_key(w) {
                        self.visit(w);
                        let lw = self.low[w];
                        let lv = self.low.get_mut(v).expect("visited");
                        *lv = (*lv).min(lw);
                    } else if self.on_stack.contains(w) {
                        let iw = self.index[w];
                        let lv = self.low.get_mut(v).expect("visited");
                        *lv = (*lv).min(iw);
                    }
                }
                if self.low[v] == self.index[v] {
                    let mut group = BTreeSet::new();
                    while let Some(w) = self.stack.pop() {
                        self.on_stack.remove(w);
                        group.insert(w.to_string());
                        if w == v {
                            break;
                        }
                    }
                    self.out.push(group);
                }
            }
        }
        let mut walk = Walk {
            g: self,
            index: BTreeMap::new(),
            low: BTreeMap::new(),
            stack: Vec::new(),
            on_stack: BTreeSet::new(),
            out: Vec::new(),
        };
        for m in &self.modules {
            if !walk.index.contains_key(m.as_str()) {
                walk.visit(m);
            }
        }
        let mut out = walk.out;
        out.sort();
        out
    }

    /// The shortest way from `start` back to itself inside `group` (breadth first).
    fn shortest_cycle(&self, start: &str, group: &BTreeSet<Module>) -> Option<Vec<Module>> {
        let mut came_from: BTreeMap<&str, &str> = BTreeMap::new();
        let mut queue: VecDeque<&str> = VecDeque::from([start]);
        while let Some(v) = queue.pop_front() {
            for w in self.next(v) {
                if !group.contains(w) {
                    continue;
                }
                if w == start {
                    let mut path = vec![start.to_string(), v.to_string()];
                    let mut at = v;
                    while at != start {
                        at = came_from[at];
                        path.push(at.to_string());
                    }
                    // start, v, …, start backwards: start, …, v, start.
                    path.reverse();
                    return Some(path);
                }
                if !came_from.contains_key(w.as_str()) && w != start {
                    came_from.insert(w, v);
                    queue.push_back(w);
                }
            }
        }
        None
    }

    /// `a::b -> c -> a::b`, with where each step was seen.
    pub(super) fn describe(&self, cycle: &[Module]) -> String {
        let steps: Vec<String> = cycle
            .windows(2)
            .map(|w| {
                let at = self
                    .edges
                    .get(&w[0])
                    .and_then(|e| e.get(&w[1]))
                    .map_or("?", String::as_str);
                format!("    {} -> {} ({at})", w[0], w[1])
            })
            .collect();
        format!("{}\n{}", cycle.join(" -> "), steps.join("\n"))
    }
}

/// Paths of two or more segments, each with its line.
type Paths = Vec<(Vec<String>, usize)>;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    Ident(String),
    /// `::`
    Sep,
    Punct(char),
}

/// Every path of two or more segments in `code` (a file's code view), with its line.
fn scan(code: &str) -> Paths {
    let tokens = tokens(code);
    let mut out = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        let starts_path = match &tokens[i].0 {
            Tok::Ident(_) => tokens.get(i + 1).is_some_and(|t| t.0 == Tok::Sep),
            // `::std::…`, or `<T as Tr>::f`: leaves the crate; read and drop.
            Tok::Sep => true,
            Tok::Punct(_) => false,
        };
        if !starts_path {
            i += 1;
            continue;
        }
        let line = tokens[i].1;
        let extern_path = tokens[i].0 == Tok::Sep;
        let mut found = Vec::new();
        i = path_tree(
            &tokens,
            if extern_path { i + 1 } else { i },
            &[],
            &mut found,
        );
        if !extern_path {
            out.extend(
                found
                    .into_iter()
                    .filter(|p| p.len() >= 2)
                    .map(|p| (p, line)),
            );
        }
    }
    out
}

/// Reads one path, or a `use` tree, from `i`: `a::b::{c, d::*, self}`.
/// Pushes each full path onto `out` and returns where it ended.
fn path_tree(
    tokens: &[(Tok, usize)],
    mut i: usize,
    prefix: &[String],
    out: &mut Vec<Vec<String>>,
) -> usize {
    let mut path: Vec<String> = prefix.to_vec();
    loop {
        match tokens.get(i).map(|t| &t.0) {
            Some(Tok::Ident(name)) => {
                // `self` inside a group stands for the group's own path.
                if name != "self" || path.is_empty() {
                    path.push(name.clone());
                }
                i += 1;
                if tokens.get(i).map(|t| &t.0) == Some(&Tok::Sep) {
                    i += 1;
                    continue;
                }
                out.push(path);
                // `as alias`
                if tokens.get(i).map(|t| &t.0) == Some(&Tok::Ident("as".into())) {
                    i += 2;
                }
                return i;
            }
            Some(Tok::Punct('{')) => {
                i += 1;
                loop {
                    match tokens.get(i).map(|t| &t.0) {
                        None => return i,
                        Some(Tok::Punct('}')) => return i + 1,
                        Some(Tok::Punct(',')) => i += 1,
                        Some(_) => {
                            let next = path_tree(tokens, i, &path, out);
                            // Not a path (stray token): step over it.
                            i = if next == i { i + 1 } else { next };
                        }
                    }
                }
            }
            // `a::*`, `a::<T>`, or the end of something unusual: the path so far.
            _ => {
                if !path.is_empty() && path.len() > prefix.len() {
                    out.push(path);
                }
                if tokens.get(i).map(|t| &t.0) == Some(&Tok::Punct('*')) {
                    i += 1;
                }
                return i;
            }
        }
    }
}

/// Identifiers (`r#type` too), `::` and punctuation with their lines, from
/// code whose comments and literals are already blanked (`code.rs`, the one
/// lexer); numbers dropped.
fn tokens(code: &str) -> Vec<(Tok, usize)> {
    let c: Vec<char> = code.chars().collect();
    let ident = |ch: char| ch.is_alphanumeric() || ch == '_';
    let mut out = Vec::new();
    let mut line = 1;
    let mut i = 0;
    while i < c.len() {
        let ch = c[i];
        if ch == '\n' {
            line += 1;
            i += 1;
        } else if ch.is_whitespace() {
            i += 1;
        } else if ident(ch) {
            let start = i;
            while i < c.len() && ident(c[i]) {
                i += 1;
            }
            // A raw identifier: `r#type`.
            if i - start == 1 && ch == 'r' && c.get(i) == Some(&'#') {
                continue;
            }
            if !ch.is_ascii_digit() {
                out.push((Tok::Ident(c[start..i].iter().collect()), line));
            }
        } else if ch == ':' && c.get(i + 1) == Some(&':') {
            out.push((Tok::Sep, line));
            i += 2;
        } else {
            // `#` after a raw identifier's `r` is no punctuation of its own.
            if !(ch == '#' && i > 0 && c[i - 1] == 'r' && c.get(i + 1).is_some_and(|n| ident(*n))) {
                out.push((Tok::Punct(ch), line));
            }
            i += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(files: &[(&str, &str)]) -> Graph {
        let files: Vec<(String, String)> = files
            .iter()
            .map(|(p, t)| (p.to_string(), t.to_string()))
            .collect();
        graph(&files)
    }

    fn cycles(files: &[(&str, &str)]) -> Vec<String> {
        let g = tree(files);
        g.cycles().iter().map(|c| c.join(" -> ")).collect()
    }

    #[test]
    fn a_cycle_is_found_and_named() {
        let found = cycles(&[
            ("lib.rs", "pub mod a;\npub mod b;\npub mod c;\n"),
            ("a.rs", "use crate::b::Thing;\n"),
            ("b.rs", "pub fn f() { crate::c::g() }\n"),
            ("c.rs", "use crate::{a::Other, b};\n"),
        ]);
        assert_eq!(found, ["a -> b -> c -> a"]);
    }

    #[test]
    fn every_module_of_a_tangle_is_named() {
        let found = cycles(&[
            ("lib.rs", "pub mod a;\npub mod b;\npub mod c;\npub mod d;\n"),
            ("a.rs", "use crate::b::X;\n"),
            ("b.rs", "use crate::a::Y;\nuse crate::c::Z;\n"),
            ("c.rs", "use crate::b::W;\nuse crate::d::V;\n"),
            ("d.rs", ""),
        ]);
        assert_eq!(found, ["a -> b -> a", "c -> b -> c"]);
    }

    #[test]
    fn a_dag_passes() {
        let g = tree(&[
            ("lib.rs", "pub mod a;\npub mod b;\npub mod c;\nuse a::X;\n"),
            (
                "a.rs",
                "use crate::b::X;\nuse crate::c;\nfn f() { c::g(); }\n",
            ),
            ("b.rs", "use crate::c::{self, Y};\n"),
            (
                "c.rs",
                "use std::collections::BTreeMap;\nfn g() { ::std::mem::drop(1); }\n",
            ),
        ]);
        assert_eq!(g.cycles(), Vec::<Vec<String>>::new());
        let from_a: Vec<&String> = g.edges["a"].keys().collect();
        assert_eq!(from_a, ["b", "c"]);
        assert_eq!(g.edges["b"].keys().collect::<Vec<_>>(), ["c"]);
    }

    #[test]
    fn super_resolves_from_the_files_module() {
        let g = tree(&[
            ("lib.rs", "pub mod x;\npub mod y;\n"),
            ("x/mod.rs", "mod p;\nmod q;\n"),
            (
                "x/p.rs",
                "use super::q::Q;\nfn f() { super::super::y::g(); }\n",
            ),
            (
                "x/q.rs",
                "pub struct Q;\nuse super::p;\nfn h() { p::f(); }\n",
            ),
            ("y.rs", "use self::inner::Z;\nmod inner;\n"),
            ("y/inner.rs", ""),
        ]);
        assert_eq!(g.edges["x::p"].keys().collect::<Vec<_>>(), ["x::q", "y"]);
        assert_eq!(g.edges["y"].keys().collect::<Vec<_>>(), ["y::inner"]);
        let found: Vec<String> = g.cycles().iter().map(|c| c.join(" -> ")).collect();
        assert_eq!(found, ["x::p -> x::q -> x::p"]);
    }

    #[test]
    fn a_parent_reexporting_its_child_that_uses_the_parent_is_a_cycle() {
        let found = cycles(&[
            ("lib.rs", "pub mod p;\n"),
            (
                "p/mod.rs",
                "pub mod c;\npub use c::Thing;\npub struct Shared;\n",
            ),
            ("p/c.rs", "use super::Shared;\npub struct Thing;\n"),
        ]);
        assert_eq!(found, ["p -> p::c -> p"]);
        // Declaring the child alone is no dependency on it.
        let found = cycles(&[
            ("lib.rs", "pub mod p;\n"),
            ("p/mod.rs", "pub mod c;\npub struct Shared;\n"),
            ("p/c.rs", "use super::Shared;\n"),
        ]);
        assert!(found.is_empty(), "{found:?}");
    }

    #[test]
    fn the_longest_module_prefix_is_the_target() {
        let g = tree(&[
            ("lib.rs", "pub mod a;\npub mod b;\n"),
            ("a/mod.rs", "pub mod deep;\n"),
            ("a/deep.rs", ""),
            ("b.rs", "use crate::a::deep::Item;\nuse crate::a::Top;\n"),
        ]);
        assert_eq!(g.edges["b"].keys().collect::<Vec<_>>(), ["a", "a::deep"]);
        assert!(g.edges["b"]["a::deep"].starts_with("src/b.rs:1"));
    }

    #[test]
    fn test_code_comments_and_literals_are_not_dependencies() {
        let found = cycles(&[
            ("lib.rs", "pub mod a;\npub mod b;\n"),
            ("a.rs", "use crate::b::B;\n"),
            (
                "b.rs",
                concat!(
                    "// crate::a::A in a comment\n",
                    "/* crate::a::A /* nested */ crate::a::A */\n",
                    "const S: &str = \"crate::a::A\";\n",
                    "const R: &str = r#\"crate::a::A \"quoted\"\"#;\n",
                    "const C: char = '\"'; fn f<'a>(x: &'a str) {}\n",
                    "#[cfg(test)]\nmod tests {\n    use crate::a::A;\n}\n",
                    "#[cfg(test)]\nmod more;\n",
                    "#[cfg(test)]\n#[allow(unused)]\nuse crate::a::{A, B};\n",
                ),
            ),
            ("b/more.rs", "use crate::a::A;\n"),
            ("b/tests.rs", "use crate::a::A;\n"),
        ]);
        assert!(found.is_empty(), "{found:?}");
    }

    #[test]
    fn a_cycle_reads_with_where_each_step_was_seen() {
        let g = tree(&[
            ("lib.rs", "pub mod a;\npub mod b;\n"),
            ("a.rs", "\nuse crate::b::B;\n"),
            ("b.rs", "fn f() {\n    crate::a::g();\n}\n"),
        ]);
        let cycle = &g.cycles()[0];
        assert_eq!(
            g.describe(cycle),
            "a -> b -> a\n    a -> b (src/a.rs:2)\n    b -> a (src/b.rs:2)"
        );
    }

    #[test]
    fn files_map_to_modules() {
        assert_eq!(module_of("a/b.rs").as_deref(), Some("a::b"));
        assert_eq!(module_of("a/b/mod.rs").as_deref(), Some("a::b"));
        assert_eq!(module_of("lib.rs").as_deref(), Some(""));
        assert_eq!(module_of("main.rs").as_deref(), Some(""));
        assert_eq!(module_of("bin/x.rs"), None);
        assert_eq!(module_of("notes.txt"), None);
    }
}
