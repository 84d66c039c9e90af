//! What a stop and a restart ask the engine (issue 38, review rows 13 and 19):
//! hal's own container-list calls, counted through `rig::count`, pinned as
//! ceilings, so a step that lists a project again shows here. Each ceiling
//! says the count before the project's one list was handed down. Likewise a
//! stop's inspects of each container, before its one snapshot's inspects
//! were handed down with the list.

use crate::rig::count::{Counter, watch_live};
use crate::rig::{self, Rig, hal};

/// `hal -H <the proxy> ARGS`, exit 0; its list calls, the allowance for a
/// `hal watch` of another test (`stopped`: the modules the stop looks at
/// again), and what it asked.
fn counted(rig: &Rig, calls: &Counter, args: &[&str], stopped: usize) -> (usize, usize, String) {
    let watched = watch_live();
    calls.take();
    let mut h = hal(rig).args(["-H", &calls.host()]);
    for a in args {
        h = h.arg(a);
    }
    h.code(0);
    let (lists, asked) = calls.lists();
    let extra = if watched || watch_live() { stopped } else { 0 };
    (lists, extra, asked)
}

fn at_most(what: &str, (lists, extra, asked): (usize, usize, String), most: usize) {
    assert!(
        lists <= most + extra,
        "{what}: {lists} list calls, at most {most} (+{extra} for a live watch):\n{asked}"
    );
}

#[test]
fn a_stop_lists_its_project_once_before_it_and_once_after() {
    let Some(rig) = rig::engine() else { return };
    let web = rig.idle("web");
    let calls = Counter::start(&rig.dir);
    hal(&rig).args(["module", "start", &web]).code(0);
    // Before: 3 (the state before, the stop's own list, what it left).
    at_most("stop", counted(&rig, &calls, &["stop", &web], 1), 2);
    // Before: 3. Nothing listed, nothing removed: nothing to list after.
    let again = counted(&rig, &calls, &["stop", &web], 1);
    at_most("a stopped stack's stop", again, 1);
    hal(&rig).args(["module", "start", &web]).code(0);
    // Before: 1.
    let dry = counted(&rig, &calls, &["stop", "--dry-run", &web], 0);
    at_most("stop --dry-run", dry, 1);
    // Before: 5 (the refusal, the stop's own list, what it left, the start's
    // list, the wait's). The refusal's list is the stop's, and what the stop
    // left the start's.
    at_most("restart", counted(&rig, &calls, &["restart", &web], 0), 3);
}

#[test]
fn a_stop_that_stops_dependents_first_reads_their_states_at_once() {
    let Some(rig) = rig::engine() else { return };
    let (db, app, app2) = (rig.idle("db"), rig.idle("app"), rig.idle("app2"));
    rig.set_config(&format!(
        "[defaults]\npull = \"never\"\n\n[module.{app}]\nrequires = [\"{db}\"]\n\n[module.{app2}]\nrequires = [\"{db}\"]\n"
    ));
    hal(&rig)
        .args(["module", "start", &db, &app, &app2])
        .code(0);
    let calls = Counter::start(&rig.dir);
    // Before: 5 (each dependent's state, then each module's).
    let dry = counted(&rig, &calls, &["stop", "--dry-run", &db], 0);
    at_most("stop --dry-run of a requirement", dry, 2);
    // Before: 11 (each dependent's state, then three lists a module).
    let stop = counted(&rig, &calls, &["stop", &db], 3);
    at_most("stop of a requirement", stop, 7);
    for m in [&db, &app, &app2] {
        assert_eq!(rig.state_of(m), "inactive", "{m}");
    }
}

/// `hal -H <the proxy> ARGS`, exit 0; the containers it inspected (one id a
/// call, in the order asked), and what it asked.
fn inspected(rig: &Rig, calls: &Counter, args: &[&str]) -> (Vec<String>, String) {
    calls.take();
    let mut h = hal(rig).args(["-H", &calls.host()]);
    for a in args {
        h = h.arg(a);
    }
    h.code(0);
    calls.inspects()
}

#[test]
fn a_stop_inspects_each_container_once_before_it_goes() {
    let Some(rig) = rig::engine() else { return };
    let web = rig.idle("web");
    let calls = Counter::start(&rig.dir);
    hal(&rig).args(["module", "start", &web]).code(0);
    // Before: 3 (the state before, the evidence, the ledger), of the one
    // container. What the stop left is listed again: none, nothing inspected.
    let (stop, asked) = inspected(&rig, &calls, &["stop", &web]);
    eprintln!("stop: {} inspect calls", stop.len());
    assert!(
        stop.len() <= 1,
        "stop: {} inspect calls, at most 1:\n{asked}",
        stop.len()
    );
    hal(&rig).args(["module", "start", &web]).code(0);
    // The container running before is the first inspected (the new one is
    // created later). Before: 2 (the evidence, the ledger). The wait's
    // inspects of the new container are not counted: each poll sees the
    // start go on.
    let (restart, asked) = inspected(&rig, &calls, &["restart", &web]);
    let old = restart
        .first()
        .map_or(0, |first| restart.iter().filter(|id| *id == first).count());
    eprintln!(
        "restart: {} inspect calls, {old} of the old container",
        restart.len()
    );
    assert!(
        old <= 1,
        "restart: {old} inspects of the old container, at most 1:\n{asked}"
    );
    assert_eq!(rig.state_of(&web), "active");
}
