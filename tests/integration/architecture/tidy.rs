//! ARCHITECTURE.md's invariants as checks over `src/` (in the style of
//! rust-analyzer's `xtask/src/tidy.rs`): which folder may name which, and the
//! names and words that belong to one place. Each rule is a function over
//! `(path under src/, text)` that returns its violations as
//! `src/FILE:LINE: what (the rule)`, so the self-tests at the end can plant a
//! violation of each and see it reported. Test code is exempt (`code.rs`).

use super::code::{Source, sources};
use super::imports;
pub(super) mod container_words;
pub(super) mod face;
pub(super) mod fn_lines;
pub(super) mod invalid_module;
pub(super) mod module_io;
pub(super) mod names;
pub(super) mod prefix;
pub(super) mod stack_rooms;
pub(super) mod wildcard_arms;
pub(super) mod worded_events;

/// Each folder of `src/` (a top-level module) and what it may name: the layers
/// of ARCHITECTURE.md's bird's-eye view, each using only what is below it.
/// `cli/` is a leaf beside the stack that only `cmd/` (and `main.rs`) uses.
/// An entry is a folder or a module inside one (`logs::line`).
pub(super) const MAY_USE: &[(&str, &[&str])] = &[
    (
        "cmd",
        &[
            "cli", "watch", "output", "run", "stack", "host", "state", "logs", "module", "util",
            "error",
        ],
    ),
    ("cli", &["module", "util", "error"]),
    (
        "watch",
        &[
            "output", "run", "stack", "host", "state", "logs", "module", "util", "error",
        ],
    ),
    (
        "run",
        &[
            "output", "stack", "host", "state", "logs", "module", "util", "error",
        ],
    ),
    // The printer stands below the runner: run hands it views it owns
    // (`output::reports::ReportView`, `VerbView`) and names nothing of run's
    // or a backend's. Nor of the state's: what it shows of hal's state comes
    // typed from `module/` (`UpdateTally`), built by the state's store.
    ("output", &["logs", "module", "util", "error"]),
    (
        "stack",
        &["docker", "state", "logs", "module", "util", "error"],
    ),
    ("host", &["state", "logs", "module", "util", "error"]),
    // Where the state lives depends on the engine (its socket's group), which
    // the endpoint resolution knows: state/ stands above the adapter.
    ("state", &["docker", "logs", "module", "util", "error"]),
    // The Docker adapter: the engine's wire, compose, the endpoint; it knows
    // nothing of hal's verbs, state or output.
    ("docker", &["module", "logs::line", "util", "error"]),
    ("logs", &["module", "util", "error"]),
    ("module", &["util", "error"]),
    ("util", &["error"]),
    ("error", &[]),
];

/// Every import from one folder into another that `MAY_USE` does not allow.
pub(super) fn folder_edges(files: &[(String, String)]) -> Vec<String> {
    folder_edges_in(&imports::graph(files))
}

/// [`folder_edges`] of a graph already drawn (the one every rule shares).
pub(super) fn folder_edges_in(graph: &imports::Graph) -> Vec<String> {
    let folder = |m: &str| m.split("::").next().unwrap_or("").to_string();
    let mut out = Vec::new();
    for (from, tos) in &graph.edges {
        for (to, at) in tos {
            let (f, t) = (folder(from), folder(to));
            if f == t {
                continue;
            }
            let Some((_, may)) = MAY_USE.iter().find(|(name, _)| *name == f) else {
                out.push(format!(
                    "{at}: {from} -> {to}: folder {f}/ has no row in MAY_USE; place it in \
                     ARCHITECTURE.md's layers and in tidy.rs"
                ));
                continue;
            };
            let allowed = may
                .iter()
                .any(|m| to == m || to.starts_with(&format!("{m}::")));
            if !allowed {
                out.push(format!(
                    "{at}: {from} -> {to}: {f}/ may use only {} (ARCHITECTURE.md, bird's-eye view)",
                    may.join(", ")
                ));
            }
        }
    }
    out
}

/// Which view of a file a rule reads.
#[derive(Clone, Copy, Debug)]
pub(super) enum View {
    /// Names in code (literal contents blanked).
    Code,
    /// Code and literals: words a string can carry.
    Text,
}

/// One rule: these words may appear only in these places.
#[derive(Debug)]
pub(super) struct Rule {
    pub name: &'static str,
    pub words: &'static [&'static str],
    pub view: View,
    /// The word must end at an identifier boundary too (`Format`, not `Formatter`).
    pub whole: bool,
    /// The word counts at the end of a longer name too (`StatusFormat` as
    /// well as `Format`): the rule is about a kind of name, not one name.
    pub tail: bool,
    /// Where the words may be: a file (`main.rs`), or a folder (`output/`) and
    /// everything under it; with the one word it allows there (`""`: any), and why.
    pub allowed: &'static [(&'static str, &'static str, &'static str)],
}

/// `bollard::` only in the engine adapter (the engine row of ARCHITECTURE.md).
pub(super) const BOLLARD: Rule = Rule {
    name: "only docker/engine.rs and its model (docker/engine/) name bollard",
    words: &["bollard"],
    view: View::Code,
    whole: true,
    tail: false,
    allowed: &[
        (
            "docker/engine.rs",
            "",
            "the engine adapter: the bollard client",
        ),
        (
            "docker/engine/",
            "",
            "the engine adapter: bollard's answers read into hal's types",
        ),
    ],
};

/// The Docker adapter is named only by the stack backend that drives it and by
/// the state (whose place depends on the endpoint); every layer above reaches
/// the engine through `stack/`'s face (ARCHITECTURE.md, `docker/`).
pub(super) const DOCKER: Rule = Rule {
    name: "docker:: is named only by docker/ itself, stack/ and state/",
    words: &["docker::"],
    view: View::Code,
    whole: false,
    tail: false,
    allowed: &[
        ("docker/", "", "the adapter itself"),
        (
            "stack.rs",
            "",
            "the stack backend's face: it re-exports what the layers above hold",
        ),
        ("stack/", "", "the stack backend"),
        (
            "state/",
            "",
            "where the state lives depends on the endpoint",
        ),
    ],
};

/// The adapter's engine handle, its errors, streams and kind stay below the
/// stack backend's face: the layers above ask a `stack::Session` (the probe,
/// the events, the log plan…) and never hold the engine itself, not even
/// through a re-export from the face, `stack.rs` (ARCHITECTURE.md, `stack/`).
pub(super) const ENGINE: Rule = Rule {
    name: "the engine handle (Engine, EngineError, EngineStream, EngineKind) is named only in docker/, stack/ and state/",
    words: &["Engine", "EngineError", "EngineStream", "EngineKind"],
    view: View::Code,
    whole: true,
    tail: false,
    allowed: &[
        ("docker/", "", "the adapter itself"),
        (
            "stack/",
            "",
            "the stack backend, and its session (stack/session.rs) that the layers above ask",
        ),
        ("state/", "", "the state, beside the backend"),
    ],
};

/// The compose CLI's handle (`Compose` runs a program) stays below the stack
/// backend's face like the engine's: doctor asks `Stacks::compose_found`
/// and `check_compose_config` (`stack/compose_cli.rs`) for typed answers and
/// never holds the handle (ARCHITECTURE.md, `stack/`).
pub(super) const COMPOSE: Rule = Rule {
    name: "the compose CLI's handle (Compose) is named only in docker/, stack/ and state/",
    words: &["Compose"],
    view: View::Code,
    whole: true,
    tail: false,
    allowed: &[
        ("docker/", "", "the adapter itself"),
        (
            "stack/",
            "",
            "the stack backend, and doctor's questions to the CLI (stack/compose_cli.rs)",
        ),
        ("state/", "", "the state, beside the backend"),
        (
            "module/",
            "Compose",
            "`Origin::Compose`, a dependency declared in a compose file; module/ cannot reach stack/ or docker/ (MAY_USE)",
        ),
        (
            "output/",
            "Compose",
            "`Origin::Compose` as the printer words it; output/ cannot reach stack/ or docker/ (MAY_USE)",
        ),
    ],
};

/// List and inspect are read by one decoder on every transport (hal's own GETs
/// into `docker/engine/answers.rs`'s tolerant types): bollard's strict list and
/// inspect calls and models are named nowhere (issue 33).
pub(super) const ONE_DECODER: Rule = Rule {
    name: "list and inspect are read only by docker/engine/answers.rs, never by bollard's strict types",
    words: &[
        "list_containers",
        "inspect_container",
        "ContainerSummary",
        "ContainerInspectResponse",
    ],
    view: View::Code,
    whole: true,
    tail: false,
    allowed: &[],
};

/// The answer's format (human, JSON, Prometheus) is decided once, in the
/// printer: no other place names a format type, `Format` or one of its own
/// (`StatusFormat`, `LogFormat`), except the flags that ask for one.
pub(super) const FORMAT: Rule = Rule {
    name: "a format (Format, or a name ending in it: StatusFormat) is named only in output/ and cli/",
    words: &["Format"],
    view: View::Code,
    whole: true,
    tail: true,
    allowed: &[
        ("output/", "", "the printer"),
        (
            "cli/",
            "",
            "the flags' values as clap parses them (`status --format`), read by `Command::asks_prometheus` into the printer's `Asked`",
        ),
    ],
};

/// The init's words are the init's: nothing outside `host/init/` runs or parses them.
pub(super) const UNIT_WORDS: Rule = Rule {
    name: "unit words (systemctl, journalctl, ActiveState, SubState, SYSTEMD_, ExecStart, ExecStop, \
           a `.timer` name) only in host/init/",
    words: &[
        "systemctl",
        "journalctl",
        "ActiveState",
        "SubState",
        "SYSTEMD_",
        // A unit file's command lines: what runs a unit (adopt's template check reads them).
        "ExecStart",
        "ExecStop",
        // A unit name's `.timer` suffix in a literal (`"x.timer"`, `ends_with(".timer")`):
        // which units start others is the init's to say (`init::is_timer`); a field
        // named `timer` is not the suffix.
        ".timer\"",
    ],
    view: View::Text,
    whole: false,
    tail: false,
    allowed: &[
        ("host/init/", "", "the init adapter"),
        (
            "module/keys.rs",
            "systemctl",
            "user-facing help of the `unit` and `scope` keys (hal.toml(5))",
        ),
        (
            "cmd/doctor.rs",
            "systemctl",
            "user-facing fix for a stopped Docker daemon (systemctl start docker)",
        ),
        (
            "stack/logs/history.rs",
            "systemctl",
            "user-facing fix: the daemon.json lines and the engine restart (systemctl restart docker)",
        ),
        (
            "cli/mod.rs",
            "ExecStart",
            "user-facing help of `hal adopt`: a unit whose ExecStart= is not the template's is refused",
        ),
        (
            "cli/mod.rs",
            "ExecStop",
            "user-facing help of `hal adopt`: the unit is disabled without running its ExecStop=",
        ),
        (
            "cmd/doctor/units.rs",
            ".timer\"",
            "doctor names the supervisor units hal ships (dist/systemd/: hal-rescue.timer)",
        ),
        (
            "logs/journal.rs",
            "journalctl",
            "the node journal's reader: the log store of containers' history, whatever the init",
        ),
        (
            "logs/journal.rs",
            "SYSTEMD_",
            "the journal reader's environment (SYSTEMD_COLORS, SYSTEMD_PAGER for journalctl)",
        ),
    ],
};

/// Only the printer writes to stdout or stderr.
pub(super) const PRINTS: Rule = Rule {
    name: "only output/ prints (plus main.rs and error::report)",
    words: &[
        "println!",
        "eprintln!",
        "print!",
        "eprint!",
        "stdout()",
        "stderr()",
        "io::stdout",
        "io::stderr",
    ],
    view: View::Code,
    whole: false,
    tail: false,
    allowed: &[
        ("output/", "", "the printer"),
        (
            "main.rs",
            "",
            "clap's errors, and a runtime that cannot start",
        ),
        ("error.rs", "", "error::report, the final error"),
    ],
};

/// JSON text is made in one place; the two files hal keeps are its own.
pub(super) const JSON_TEXT: Rule = Rule {
    name: "JSON text is made only in output/json.rs (and hal's own files)",
    words: &[
        "serde_json::to_string",
        "serde_json::to_vec",
        "serde_json::to_writer",
    ],
    view: View::Code,
    whole: false,
    tail: false,
    allowed: &[
        ("output/json.rs", "", "every JSON document hal prints"),
        (
            "state/mod.rs",
            "serde_json::to_vec",
            "hal's state file, not output",
        ),
        (
            "state/cache.rs",
            "serde_json::to_vec",
            "a cache in the state directory (containers.json), not output",
        ),
        (
            "state/last_run.rs",
            "serde_json::to_vec",
            "a crash's evidence (last-run/MODULE.json), not output",
        ),
        (
            "state/applied.rs",
            "serde_json::to_vec",
            "what each start applied (applied/MODULE.json), not output",
        ),
        (
            "state/ledger.rs",
            "serde_json::to_vec",
            "the containers hal saw (ledger/MODULE.json), not output",
        ),
        (
            "state/ledger/index.rs",
            "serde_json::to_vec",
            "the ledgers' index (ledger/.index.json), not output",
        ),
    ],
};

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

fn allowed_at(rule: &Rule, path: &str, word: &str) -> bool {
    rule.allowed.iter().any(|(place, w, _)| {
        let here = if place.ends_with('/') {
            path.starts_with(place)
        } else {
            path == *place
        };
        here && (w.is_empty() || *w == word)
    })
}

/// Every use of `rule`'s words outside its places, one per line and word.
pub(super) fn words(rule: &Rule, files: &[(String, String)]) -> Vec<String> {
    words_in(rule, &sources(files))
}

/// [`words`] over files already read (the one read of `src/` every rule shares).
pub(super) fn words_in(rule: &Rule, files: &[Source]) -> Vec<String> {
    let mut out = Vec::new();
    for s in files {
        let view = match rule.view {
            View::Code => &s.code,
            View::Text => &s.text,
        };
        let mut seen = std::collections::BTreeSet::new();
        for word in rule.words {
            if allowed_at(rule, &s.path, word) {
                continue;
            }
            for (at, _) in view.match_indices(word) {
                let before = view[..at].chars().next_back();
                let after = view[at + word.len()..].chars().next();
                let starts =
                    !rule.tail && word.starts_with(is_ident) && before.is_some_and(is_ident);
                let ends = rule.whole && after.is_some_and(is_ident);
                if starts || ends {
                    continue;
                }
                let line = s.line_of(at);
                if seen.insert(line) {
                    out.push(format!("src/{}:{line}: `{word}`: {}", s.path, rule.name));
                }
            }
        }
    }
    out
}

/// A unit's state split on `/` (systemd's `ActiveState/SubState`) outside
/// `host/init/`: a `.split('/')` or `.split_once('/')` on something named
/// `…state` or `…words`.
pub(super) fn unit_state_splits(files: &[Source]) -> Vec<String> {
    let mut out = Vec::new();
    for s in files {
        if s.path.starts_with("host/init/") {
            continue;
        }
        for call in [".split('/')", ".split_once('/')", ".rsplit_once('/')"] {
            for (at, _) in s.text.match_indices(call) {
                let receiver = receiver_before(&s.text[..at]).to_lowercase();
                if receiver.ends_with("state") || receiver.ends_with("words") {
                    out.push(format!(
                        "src/{}:{}: `{receiver}{call}`: a unit's state words are read only in host/init/",
                        s.path,
                        s.line_of(at)
                    ));
                }
            }
        }
    }
    out
}

/// The name a method call is made on: `unit.state` in `unit.state.split`,
/// `state` in `s.state().split`.
fn receiver_before(text: &str) -> String {
    let mut chars: Vec<char> = text.chars().collect();
    // `x.state()`: step back over one call's parentheses.
    if chars.last() == Some(&')') {
        let mut depth = 0;
        while let Some(c) = chars.pop() {
            match c {
                ')' => depth += 1,
                '(' => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                _ => {}
            }
        }
    }
    let name: String = chars
        .iter()
        .rev()
        .take_while(|c| is_ident(**c))
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    name
}

#[cfg(test)]
mod self_tests {
    use super::*;

    fn one(path: &str, text: &str) -> Vec<(String, String)> {
        vec![(path.to_string(), text.to_string())]
    }

    #[test]
    fn a_folder_edge_against_the_layers_is_named_with_its_place() {
        let files = vec![
            ("cli/mod.rs".to_string(), "pub struct Cli;\n".to_string()),
            (
                "module/mod.rs".to_string(),
                "//! x\n\nuse crate::cli::Cli;\n".to_string(),
            ),
            (
                "cmd/mod.rs".to_string(),
                "use crate::cli::Cli;\nuse crate::module::X;\n".to_string(),
            ),
        ];
        let v = folder_edges(&files);
        assert_eq!(v.len(), 1, "{v:?}");
        assert!(
            v[0].starts_with("src/module/mod.rs:3: module -> cli"),
            "{v:?}"
        );
        assert!(v[0].contains("may use only util, error"), "{v:?}");
        // A module inside a folder may be allowed on its own.
        let files = vec![
            ("logs/line.rs".to_string(), "pub struct S;".to_string()),
            ("logs/journal.rs".to_string(), "pub fn j() {}".to_string()),
            (
                "docker/engine/model.rs".to_string(),
                "use crate::logs::line::S;\nfn f() { crate::logs::journal::j(); }".to_string(),
            ),
        ];
        let v = folder_edges(&files);
        assert_eq!(v.len(), 1, "{v:?}");
        assert!(
            v[0].contains("docker::engine::model -> logs::journal"),
            "{v:?}"
        );
        // The adapter is below the backend and the state: it names neither.
        let files = vec![
            ("stack/mod.rs".to_string(), "pub struct Stack;".to_string()),
            ("state/mod.rs".to_string(), "pub struct Store;".to_string()),
            (
                "docker/engine.rs".to_string(),
                "use crate::stack::Stack;\nuse crate::state::Store;".to_string(),
            ),
        ];
        assert_eq!(folder_edges(&files).len(), 2);
        // The printer reads no state: it is handed a typed view of it.
        let files = vec![
            (
                "state/records.rs".to_string(),
                "pub struct ModuleRecord;".to_string(),
            ),
            ("module/status.rs".to_string(), "pub struct S;".to_string()),
            (
                "output/prometheus.rs".to_string(),
                "use crate::module::status::S;\nfn f(r: &crate::state::records::ModuleRecord) {}"
                    .to_string(),
            ),
        ];
        let v = folder_edges(&files);
        assert_eq!(v.len(), 1, "{v:?}");
        assert!(
            v[0].starts_with("src/output/prometheus.rs:2: output::prometheus -> state::records"),
            "{v:?}"
        );
        // A folder the table does not know must be placed.
        let files = vec![
            (
                "newfolder/mod.rs".to_string(),
                "use crate::util::X;".to_string(),
            ),
            ("util/mod.rs".to_string(), "pub struct X;".to_string()),
        ];
        assert!(folder_edges(&files)[0].contains("no row in MAY_USE"));
    }

    #[test]
    fn bollard_outside_the_engine_is_reported() {
        let v = words(
            &BOLLARD,
            &one("watch/link.rs", "use bollard::models::EventMessage;"),
        );
        assert_eq!(v.len(), 1, "{v:?}");
        assert!(v[0].starts_with("src/watch/link.rs:1: `bollard`"), "{v:?}");
        for ok in [
            "docker/engine.rs",
            "docker/engine/model.rs",
            "docker/engine/podman.rs",
        ] {
            assert!(words(&BOLLARD, &one(ok, "use bollard::Docker;")).is_empty());
        }
        let in_test = "fn f() {}\n#[cfg(test)]\nmod tests { use bollard::X; }";
        assert!(words(&BOLLARD, &one("stack/facts.rs", in_test)).is_empty());
        assert!(
            words(
                &BOLLARD,
                &one("stack/facts.rs", "// bollard::X\nlet s = \"bollard\";")
            )
            .is_empty()
        );
    }

    #[test]
    fn docker_named_above_the_backend_is_reported() {
        for planted in [
            "use crate::docker::engine::Engine;",
            "use crate::{docker::labels, module::Kind};",
            "fn f() { crate::docker::labels::working_dir(&l); }",
        ] {
            let v = words(&DOCKER, &one("cmd/rescue.rs", planted));
            assert_eq!(v.len(), 1, "{planted}: {v:?}");
            assert!(v[0].starts_with("src/cmd/rescue.rs:1: `docker::`"), "{v:?}");
        }
        for ok in [
            "stack/env.rs",
            "stack.rs",
            "state/shared.rs",
            "docker/engine/answers.rs",
        ] {
            assert!(words(&DOCKER, &one(ok, "use crate::docker::engine::Engine;")).is_empty());
        }
        // A word that only ends in docker, comments and test code are not the adapter.
        for fine in [
            "let x = podman_docker::f();",
            "// crate::docker::engine",
            "fn f() {}\n#[cfg(test)]\nmod tests { use crate::docker::labels::PROJECT; }",
        ] {
            assert!(
                words(&DOCKER, &one("watch/link.rs", fine)).is_empty(),
                "{fine}"
            );
        }
    }

    #[test]
    fn the_engine_named_above_the_backend_is_reported() {
        for (planted, word) in [
            ("use crate::stack::Engine;", "Engine"),
            ("async fn f(e: &Engine) {}", "Engine"),
            ("let e = Engine::connect(&to).await?;", "Engine"),
            ("use crate::stack::{EngineError, Session};", "EngineError"),
            ("type Events = EngineStream<EngineEvent>;", "EngineStream"),
            ("if k == EngineKind::Podman {}", "EngineKind"),
        ] {
            let v = words(&ENGINE, &one("cmd/doctor.rs", planted));
            assert_eq!(v.len(), 1, "{planted}: {v:?}");
            assert!(
                v[0].starts_with(&format!("src/cmd/doctor.rs:1: `{word}`")),
                "{v:?}"
            );
        }
        // The face itself may not hand the handle up.
        let v = words(
            &ENGINE,
            &one("stack.rs", "pub(crate) use crate::docker::engine::Engine;"),
        );
        assert_eq!(v.len(), 1, "{v:?}");
        for ok in [
            "stack/session.rs",
            "stack/env.rs",
            "state/shared.rs",
            "docker/engine.rs",
        ] {
            assert!(
                words(&ENGINE, &one(ok, "fn f(e: &Engine) {}")).is_empty(),
                "{ok}"
            );
        }
        // Longer names, the face's event data, comments, literals and test code are not the handle.
        for fine in [
            "WatchEvent::EngineUp { endpoint }",
            "use crate::stack::{EngineEvent, Session};",
            "let x = MyEngine::new();",
            "// the Engine API",
            "let s = \"the Docker Engine API\";",
            "fn f() {}\n#[cfg(test)]\nmod tests { use crate::docker::engine::Engine; }",
        ] {
            assert!(
                words(&ENGINE, &one("watch/link.rs", fine)).is_empty(),
                "{fine}"
            );
        }
    }

    #[test]
    fn the_compose_handle_named_above_the_backend_is_reported() {
        for planted in [
            "use crate::stack::Compose;",
            "async fn f(c: Option<&Compose>) {}",
            "let c: Compose = ctx.node.stacks.compose().await?;",
            "use crate::stack::{Compose, Session};",
        ] {
            let v = words(&COMPOSE, &one("cmd/doctor.rs", planted));
            assert_eq!(v.len(), 1, "{planted}: {v:?}");
            assert!(v[0].starts_with("src/cmd/doctor.rs:1: `Compose`"), "{v:?}");
        }
        // The face itself may not hand the handle up.
        let v = words(
            &COMPOSE,
            &one(
                "stack.rs",
                "pub(crate) use crate::docker::compose::Compose;",
            ),
        );
        assert_eq!(v.len(), 1, "{v:?}");
        for ok in ["stack/env.rs", "stack/down.rs", "docker/compose.rs"] {
            assert!(
                words(&COMPOSE, &one(ok, "fn f(c: &Compose) {}")).is_empty(),
                "{ok}"
            );
        }
        // A dependency's origin, longer names, comments, literals and test code are not the handle.
        for (place, fine) in [
            ("module/deps.rs", "Origin::Compose { file, key }"),
            ("output/render.rs", "OriginJson::Compose { file, key }"),
            (
                "cmd/doctor.rs",
                "use crate::stack::{ComposeFound, Session};",
            ),
            ("cmd/doctor.rs", "struct NoCompose;"),
            ("cmd/doctor.rs", "// Compose restarts the dependents"),
            ("cmd/doctor.rs", "let s = \"a Docker Compose stack\";"),
            (
                "cmd/doctor.rs",
                "fn f() {}\n#[cfg(test)]\nmod tests { use crate::docker::compose::Compose; }",
            ),
        ] {
            assert!(words(&COMPOSE, &one(place, fine)).is_empty(), "{fine}");
        }
        // The origin's allowance is the one word, in its folders only.
        let v = words(
            &COMPOSE,
            &one("watch/act.rs", "Origin::Compose { file, key }"),
        );
        assert_eq!(v.len(), 1, "{v:?}");
    }

    #[test]
    fn a_second_decoder_of_list_or_inspect_is_reported() {
        let v = words(
            &ONE_DECODER,
            &one(
                "docker/engine.rs",
                "let l = self.api.list_containers(None).await;",
            ),
        );
        assert_eq!(v.len(), 1, "{v:?}");
        let model = "fn listed(s: bollard::models::ContainerSummary) {}";
        assert_eq!(
            words(&ONE_DECODER, &one("docker/engine/model.rs", model)).len(),
            1
        );
        assert!(words(&ONE_DECODER, &one("docker/engine.rs", "self.inspect(id)")).is_empty());
    }

    #[test]
    fn format_outside_output_is_reported() {
        let v = words(
            &FORMAT,
            &one("cmd/status.rs", "if ui.format == Format::Json {}"),
        );
        assert_eq!(v.len(), 1, "{v:?}");
        assert!(words(&FORMAT, &one("output/ui.rs", "Format::Json")).is_empty());
        assert!(words(&FORMAT, &one("cmd/x.rs", "fn fmt(f: &mut Formatter)")).is_empty());
        // A format of a command's own is a format all the same (rows 22 and 26).
        for planted in [
            "use crate::cli::{StatusArgs, StatusFormat};",
            "if a.format == Some(StatusFormat::Prometheus) {}",
            "pub(crate) enum YamlFormat { Block }",
        ] {
            let v = words(&FORMAT, &one("cmd/status.rs", planted));
            assert_eq!(v.len(), 1, "{planted}: {v:?}");
            assert!(v[0].starts_with("src/cmd/status.rs:1: `Format`"), "{v:?}");
        }
        for ok in ["output/node_view.rs", "cli/args.rs", "cli/mod.rs"] {
            assert!(words(&FORMAT, &one(ok, "pub enum StatusFormat {}")).is_empty());
        }
        assert!(words(&FORMAT, &one("cmd/x.rs", "use std::fmt::DebugFormatter;")).is_empty());
    }

    #[test]
    fn unit_words_outside_the_init_are_reported() {
        for planted in [
            "Command::new(\"systemctl\")",
            "let p = [\"--property=ActiveState\"];",
            "cmd.env(\"SYSTEMD_COLORS\", \"0\");",
            "run(\"journalctl\")",
            "let argv = props.get(\"ExecStart\")?;",
            "cmd.arg(\"--property=ExecStop=\");",
            "if unit.ends_with(\".timer\") {}",
            "let t = format!(\"{name}.timer\");",
        ] {
            let v = words(&UNIT_WORDS, &one("watch/policy/trouble.rs", planted));
            assert_eq!(v.len(), 1, "{planted}: {v:?}");
        }
        assert!(words(&UNIT_WORDS, &one("host/init/systemd.rs", "\"systemctl\"")).is_empty());
        // The named exceptions hold for their word only.
        assert!(words(&UNIT_WORDS, &one("module/keys.rs", "\"via systemctl\"")).is_empty());
        assert_eq!(
            words(&UNIT_WORDS, &one("module/keys.rs", "\"journalctl\"")).len(),
            1
        );
        // A field named `timer` is not the suffix; the exceptions hold for their word and place.
        assert!(words(&UNIT_WORDS, &one("output/render.rs", "let t = &m.timer;")).is_empty());
        assert!(words(&UNIT_WORDS, &one("cli/mod.rs", "\"its ExecStart= is not\"")).is_empty());
        assert_eq!(
            words(&UNIT_WORDS, &one("cli/mod.rs", "\"hal-rescue.timer\"")).len(),
            1
        );
        assert!(
            words(
                &UNIT_WORDS,
                &one("cmd/doctor/units.rs", "\"hal-rescue.timer\"")
            )
            .is_empty()
        );
        let split = "let top = unit.state.split('/').next();\nlet (a, b) = s.words().split_once('/')?;\nlet t = target.split('/');";
        let v = unit_state_splits(&sources(&one("cmd/doctor/units.rs", split)));
        assert_eq!(v.len(), 2, "{v:?}");
        assert!(v[0].starts_with("src/cmd/doctor/units.rs:1:"), "{v:?}");
        assert!(unit_state_splits(&sources(&one("host/init/systemd/show.rs", split))).is_empty());
    }

    #[test]
    fn printing_outside_the_printer_is_reported() {
        for planted in [
            "println!(\"x\");",
            "eprintln!(\"x\");",
            "print!(\"x\");",
            "eprint!(\"x\");",
            "let _ = std::io::stdout().write_all(b\"x\");",
            "let e = io::stderr();",
        ] {
            let v = words(&PRINTS, &one("run/mod.rs", planted));
            assert_eq!(v.len(), 1, "{planted}: {v:?}");
        }
        assert!(words(&PRINTS, &one("output/ui.rs", "println!()")).is_empty());
        assert!(words(&PRINTS, &one("main.rs", "eprintln!()")).is_empty());
        assert!(words(&PRINTS, &one("run/mod.rs", "if e.use_stderr() {}")).is_empty());
    }

    #[test]
    fn json_text_outside_the_json_writer_is_reported() {
        let v = words(
            &JSON_TEXT,
            &one(
                "cmd/doctor/check.rs",
                "let t = serde_json::to_string_pretty(&c)?;",
            ),
        );
        assert_eq!(v.len(), 1, "{v:?}");
        assert!(
            words(
                &JSON_TEXT,
                &one("output/json.rs", "serde_json::to_string(&v)")
            )
            .is_empty()
        );
        assert!(
            words(
                &JSON_TEXT,
                &one("state/mod.rs", "serde_json::to_vec_pretty(s)")
            )
            .is_empty()
        );
        assert_eq!(
            words(&JSON_TEXT, &one("state/mod.rs", "serde_json::to_string(s)")).len(),
            1,
            "an exception holds for its word only"
        );
    }
}
