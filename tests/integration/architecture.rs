//! The shape of `src/`, checked: no file over 450 lines, no import cycle
//! between modules (what counts as an import: `architecture/imports.rs`), and
//! ARCHITECTURE.md's invariants (`architecture/tidy.rs`: folder layers, and
//! the names and words that belong to one place). `src/` is walked once and
//! read once (`architecture/code.rs`), and every rule gets the same files.
//! ARCHITECTURE.md itself stays a map (`architecture/map.rs`). No engine needed.

mod code;
mod imports;
mod map;
mod tidy;

use std::path::Path;
use std::sync::OnceLock;

/// The most lines a file under `src/` may have.
const MAX_LINES: usize = 450;

/// Every `.rs` file under `src/`, as (path relative to `src/`, text), sorted:
/// walked once for every test of this area (they run in one process).
fn sources() -> &'static [(String, String)] {
    fn walk(dir: &Path, base: &Path, out: &mut Vec<(String, String)>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, base, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let rel = path
                    .strip_prefix(base)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                out.push((rel, std::fs::read_to_string(&path).unwrap()));
            }
        }
    }
    static FILES: OnceLock<Vec<(String, String)>> = OnceLock::new();
    FILES.get_or_init(|| {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut out = Vec::new();
        walk(&src, &src, &mut out);
        out.sort();
        out
    })
}

/// The import graph of the same files, drawn once from the one read of them.
fn graph() -> &'static imports::Graph {
    static GRAPH: OnceLock<imports::Graph> = OnceLock::new();
    GRAPH.get_or_init(|| imports::graph_of(read()))
}

/// The same files read once (comments, literals and test code blanked:
/// `code.rs`, the one lexer and the one test-code stripper), handed to every
/// rule and to the import graph.
fn read() -> &'static [code::Source] {
    static READ: OnceLock<Vec<code::Source>> = OnceLock::new();
    READ.get_or_init(|| code::sources(sources()))
}

#[test]

fn no_file_under_src_is_over_450_lines() {
    let long: Vec<String> = sources()
        .iter()
        .map(|(path, text)| (path, text.lines().count()))
        .filter(|(_, n)| *n > MAX_LINES)
        .map(|(path, n)| format!("src/{path}: {n} lines"))
        .collect();
    assert!(
        long.is_empty(),
        "{} file(s) over {MAX_LINES} lines; split them by concern:\n  {}",
        long.len(),
        long.join("\n  ")
    );
}

#[test]

fn no_import_cycle_between_src_modules() {
    let graph = graph();
    assert!(
        graph.modules.len() > 10,
        "the scanner found only {:?}",
        graph.modules
    );
    let cycles: Vec<String> = graph.cycles().iter().map(|c| graph.describe(c)).collect();
    assert!(
        cycles.is_empty(),
        "{} import cycle(s) between src/ modules; dependencies must flow one way:\n{}",
        cycles.len(),
        cycles.join("\n")
    );
}

/// Fails with every violation, one per line, under the rule's name.
fn assert_none(what: &str, violations: Vec<String>) {
    assert!(
        violations.is_empty(),
        "{what} (ARCHITECTURE.md, Architecture invariants); {} violation(s):\n  {}",
        violations.len(),
        violations.join("\n  ")
    );
}

#[test]
fn folders_name_only_the_layers_below_them() {
    assert_none(
        "a folder of src/ names one that is not below it",
        tidy::folder_edges_in(graph()),
    );
}

#[test]
fn stack_s_rooms_name_only_the_rooms_below_them() {
    let graph = graph();
    // A scanner that saw no room would pass: update/ names start/, below it.
    assert!(
        graph
            .edges
            .get("stack::update")
            .is_some_and(|tos| tos.keys().any(|t| t.starts_with("stack::start"))),
        "no edge stack::update -> stack::start seen"
    );
    let rule =
        "a room of stack/ names one that is not below it (tidy/stack_rooms.rs, STACK_FLOORS)";
    let mut v = tidy::stack_rooms::room_edges_in(graph);
    v.extend(tidy::stack_rooms::stale_rooms(graph));
    assert_none(rule, v);
}

#[test]
fn bollard_is_named_only_by_the_engine_adapter() {
    assert_none(tidy::BOLLARD.name, tidy::words_in(&tidy::BOLLARD, read()));
}

#[test]
fn docker_is_named_only_by_the_stack_backend_and_the_state() {
    assert_none(tidy::DOCKER.name, tidy::words_in(&tidy::DOCKER, read()));
}

#[test]
fn the_engine_handle_stays_below_the_stack_face() {
    assert_none(tidy::ENGINE.name, tidy::words_in(&tidy::ENGINE, read()));
}

#[test]
fn the_compose_handle_stays_below_the_stack_face() {
    assert_none(tidy::COMPOSE.name, tidy::words_in(&tidy::COMPOSE, read()));
}

#[test]
fn list_and_inspect_have_one_decoder() {
    assert_none(
        tidy::ONE_DECODER.name,
        tidy::words_in(&tidy::ONE_DECODER, read()),
    );
}

#[test]
fn format_is_matched_only_in_the_printer() {
    assert_none(tidy::FORMAT.name, tidy::words_in(&tidy::FORMAT, read()));
}

#[test]
fn unit_words_stay_in_the_init_adapter() {
    let mut v = tidy::words_in(&tidy::UNIT_WORDS, read());
    v.extend(tidy::unit_state_splits(read()));
    assert_none(tidy::UNIT_WORDS.name, v);
}

#[test]
fn only_the_printer_prints() {
    assert_none(tidy::PRINTS.name, tidy::words_in(&tidy::PRINTS, read()));
}

#[test]
fn json_text_is_made_in_one_place() {
    assert_none(
        tidy::JSON_TEXT.name,
        tidy::words_in(&tidy::JSON_TEXT, read()),
    );
}

#[test]
fn container_words_are_read_only_where_they_are_defined() {
    let rule = &tidy::container_words::CONTAINER_WORDS;
    assert_none(rule.name, tidy::words_in(rule, read()));
}

#[test]
fn module_reads_nothing_outside_its_loader() {
    let rule = &tidy::module_io::MODULE_IO;
    assert_none(rule.name, tidy::module_io::reads_in_module(read()));
}

#[test]
fn an_invalid_module_is_refused_in_one_place() {
    let rule = &tidy::invalid_module::INVALID_MODULE;
    assert_none(rule.name, tidy::words_in(rule, read()));
}

#[test]
fn a_face_is_the_only_way_into_its_folder() {
    for face in tidy::face::FACES {
        assert!(
            read().iter().any(|s| s.path == format!("{face}.rs")),
            "the face of {face}/ is src/{face}.rs"
        );
    }
    let mut v = tidy::face::open_children(read());
    v.extend(tidy::face::children_naming_their_face(graph()));
    assert_none(
        "stack/'s and run/'s children are private and never name their face, stack.rs or \
         run.rs (tidy/face.rs)",
        v,
    );
}

#[test]
fn no_two_types_share_a_name() {
    // A scanner that read nothing would pass: the types it reads are there.
    let stacks = read().iter().find(|s| s.path == "stack/env.rs");
    assert!(
        stacks.is_some_and(|s| tidy::names::type_names(s).iter().any(|(n, _)| n == "Env")),
        "no `Env` seen in src/stack/env.rs"
    );
    let rule = "two types of src/ share a name (tidy/names.rs, ONE_NAME)";
    assert_none(rule, tidy::names::shared_type_names(read()));
}

#[test]
fn a_face_renames_nothing() {
    for face in tidy::face::FACES {
        assert!(
            read()
                .iter()
                .any(|s| s.path == format!("{face}.rs") || s.path == format!("{face}/mod.rs")),
            "no face of {face}/ seen in src/"
        );
    }
    let rule = "a face re-exports a name under another (`as`) (tidy/names.rs)";
    assert_none(rule, tidy::names::face_renames(read()));
}

#[test]
fn no_file_name_repeats_beyond_its_list() {
    let rule = "a file name of src/ is taken elsewhere (tidy/names.rs, REPEATED_FILES)";
    assert_none(rule, tidy::names::repeated_file_names(read()));
    // The list stays true: each place it names is a file of src/.
    let stale: Vec<String> = tidy::names::REPEATED_FILES
        .iter()
        .flat_map(|(_, places, _)| places.iter())
        .filter(|p| !read().iter().any(|s| s.path == **p))
        .map(|p| format!("src/{p}: listed in REPEATED_FILES, but no such file (drop its place)"))
        .collect();
    assert_none(rule, stale);
}

#[test]
fn no_function_is_over_80_lines() {
    let rule = "a function of src/ is over 80 lines (tidy/fn_lines.rs, LONG_FNS)";
    assert_none(rule, tidy::fn_lines::long_functions(read()));
}

#[test]
fn the_prefix_is_written_only_by_the_printer() {
    let rule = "a message on stderr writes `hal: ` again (tidy/prefix.rs)";
    // A scanner that read nothing would pass: the calls it reads are there.
    assert!(
        read().iter().any(|s| s.text.contains(".warn(")),
        "no `.warn(` call seen in src/"
    );
    assert_none(rule, tidy::prefix::doubled_prefixes(read()));
}

#[test]
fn the_watch_log_tables_name_every_event_of_their_group() {
    let rule = "a table of the watch log has a `_ =>` arm (tidy/wildcard_arms.rs)";
    // A scanner that read nothing would pass: the tables are there.
    assert!(
        read()
            .iter()
            .any(|s| s.path == "output/watch_log/view.rs" && s.code.contains("match self")),
        "no table seen in src/output/watch_log/view.rs"
    );
    assert_none(rule, tidy::wildcard_arms::wildcard_arms(read()));
}

#[test]
fn the_watch_events_carry_their_causes_typed() {
    let rule = "a watch event says why or what in a `String` (tidy/worded_events.rs)";
    // A scanner that read nothing would pass: the events are there.
    assert!(
        read()
            .iter()
            .any(|s| s.path == tidy::worded_events::EVENTS && s.code.contains("reason: Cause")),
        "no typed reason seen in src/{}",
        tidy::worded_events::EVENTS
    );
    assert_none(rule, tidy::worded_events::worded_events(read()));
}

#[test]
fn the_causes_carried_to_the_printer_are_typed() {
    let rule = "a cause carried to the printer is a `String` (tidy/worded_events.rs TYPED_ITEMS)";
    // A scanner that read nothing would pass: every item it guards is there.
    let files = read();
    for (path, item, _) in tidy::worded_events::TYPED_ITEMS {
        assert!(
            files
                .iter()
                .any(|s| s.path == path && s.code.contains(item)),
            "no `{item}` seen in src/{path}"
        );
    }
    assert_none(rule, tidy::worded_events::worded_items(files));
}

#[test]
fn a_causes_words_live_in_the_printer() {
    let rule = &tidy::worded_events::CAUSE_WORDS;
    assert_none(rule.name, tidy::words_in(rule, read()));
}

#[test]
fn the_rules_see_the_code_they_guard() {
    // A scanner that read nothing would pass every rule: each rule's own
    // place must show its words.
    let files = sources();
    for (rule, place) in [
        (&tidy::BOLLARD, "docker/engine.rs"),
        (&tidy::DOCKER, "stack/env.rs"),
        (&tidy::ENGINE, "stack/session.rs"),
        (&tidy::COMPOSE, "stack/env.rs"),
        (&tidy::FORMAT, "output/ui.rs"),
        (&tidy::UNIT_WORDS, "host/init/systemd.rs"),
        (&tidy::PRINTS, "main.rs"),
        (&tidy::JSON_TEXT, "output/json.rs"),
        (
            &tidy::container_words::CONTAINER_WORDS,
            "module/run_state.rs",
        ),
        (&tidy::module_io::MODULE_IO, "module/load.rs"),
        (&tidy::invalid_module::INVALID_MODULE, "module/mod.rs"),
        (&tidy::worded_events::CAUSE_WORDS, "output/reason_words.rs"),
    ] {
        let strict = tidy::Rule {
            allowed: &[],
            ..*rule
        };
        let mine: Vec<(String, String)> =
            files.iter().filter(|(p, _)| p == place).cloned().collect();
        assert!(
            !tidy::words(&strict, &mine).is_empty(),
            "{}: found nothing in src/{place}",
            rule.name
        );
    }
}

/// ARCHITECTURE.md, and the text of these tests (the rules it may name).
fn map_and_rules() -> (String, String) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let doc = std::fs::read_to_string(root.join("ARCHITECTURE.md")).unwrap();
    let dir = root.join("tests/integration/architecture");
    let mut tests = std::fs::read_to_string(dir.with_extension("rs")).unwrap();
    let mut stack = vec![dir];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                tests.push_str(&std::fs::read_to_string(&path).unwrap());
            }
        }
    }
    (doc, tests)
}

#[test]
fn architecture_md_is_a_map_not_walls() {
    let (doc, _) = map_and_rules();
    assert!(
        map::pieces(&doc).len() > 100,
        "the map's reader found only {} pieces",
        map::pieces(&doc).len()
    );
    assert_none(
        "ARCHITECTURE.md has a wall: a piece over 150 words or the whole over 6,000 (map.rs)",
        map::walls(&doc),
    );
}

#[test]
fn architecture_md_invariants_name_rules_that_exist() {
    let (doc, tests) = map_and_rules();
    assert!(
        doc.matches("Architecture invariant:").count() >= 10,
        "ARCHITECTURE.md lists its invariants as `Architecture invariant:` lines"
    );
    assert_none(
        "an ARCHITECTURE.md invariant names no rule of the tests (map.rs)",
        map::unknown_rules(&doc, &tests),
    );
}
