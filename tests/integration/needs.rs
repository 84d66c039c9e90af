//! End to end (issue 39): modules that need each other, through restarts and under the watch.
//! A dependent in another module's network namespace (`network_mode: container:gw-main`)
//! follows its provider through `hal restart` and through a `docker restart` behind hal's
//! back; a module whose requirement is broken waits, and is back within seconds of it.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::Duration;

use crate::rig::watch::{SUBSCRIBED, Watch, lines_about};
use crate::rig::{self, Rig, docker, eventually, hal, stack};

/// The gateway pair ([`Rig::gateway`]), started.
fn gateway(rig: &Rig) -> (String, String) {
    let (gw, tun) = rig.gateway();
    hal(rig).args(["start", &gw]).code(0);
    hal(rig).args(["start", &tun]).code(0);
    (gw, tun)
}

pub(crate) fn inspect(container: &str, format: &str) -> String {
    docker(&["inspect", "-f", format, container])
        .trim()
        .to_string()
}

/// Whether `tun`'s container runs in the namespace `GW-main` has now.
pub(crate) fn in_current_namespace(gw: &str, tun: &str) -> bool {
    let provider = inspect(&format!("{gw}-main"), "{{.Id}}");
    let mode = inspect(&format!("{tun}-vpn-1"), "{{.HostConfig.NetworkMode}}");
    let started = |c: &str| inspect(c, "{{.State.StartedAt}}");
    mode == format!("container:{provider}")
        && inspect(&format!("{tun}-vpn-1"), "{{.State.Running}}") == "true"
        && started(&format!("{tun}-vpn-1")) > started(&format!("{gw}-main"))
}

#[test]
fn a_restart_of_a_namespace_provider_restarts_its_dependents_and_status_tells_a_dead_namespace() {
    let Some(rig) = rig::engine() else { return };
    let (gw, tun) = gateway(&rig);
    assert!(in_current_namespace(&gw, &tun));

    // Behind hal's back: tun stays in the old namespace, and is not called active.
    docker(&["restart", "-t", "0", &format!("{gw}-main")]);
    let doc = rig.status_of(&[&tun]).code(3).doc().clone();
    let row = &doc["modules"][0];
    assert_eq!(row["state"], "degraded", "{doc}");
    let reason = row["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains(&format!(
            "service vpn in a dead network namespace: {gw}-main started again after it"
        )),
        "{doc}"
    );

    // hal restart gw: gw recreated, then tun restarted into its new namespace.
    let out = hal(&rig).args(["restart", &gw]).code(0);
    let said = format!("{}{}", out.stdout, out.stderr);
    assert!(
        said.contains(&format!(
            "restarted after {gw}: it shares its network namespace or volumes"
        )),
        "{said}"
    );
    assert!(in_current_namespace(&gw, &tun), "{said}");
    let doc = rig.status_of(&[&tun]).code(0).doc().clone();
    assert_eq!(doc["modules"][0]["state"], "active", "{doc}");
}

/// A provider stopped behind hal's back (not restarted, not removed) leaves its
/// dependent running without a network: every output calls it `degraded`, naming
/// the stopped provider, none `active`.
#[test]
fn a_dependent_of_a_stopped_namespace_provider_is_degraded_in_every_output() {
    let Some(rig) = rig::engine() else { return };
    let (gw, tun) = gateway(&rig);
    docker(&["stop", "-t", "0", &format!("{gw}-main")]);
    assert_eq!(
        inspect(&format!("{tun}-vpn-1"), "{{.State.Running}}"),
        "true"
    );
    let said = format!("service vpn in a dead network namespace: {gw}-main is stopped");

    let doc = rig.status_of(&[&tun]).code(3).doc().clone();
    let row = &doc["modules"][0];
    assert_eq!(row["state"], "degraded", "{doc}");
    assert!(
        row["reason"].as_str().unwrap_or_default().contains(&said),
        "{doc}"
    );
    // The whole node's document, and --failed's, say the same of it.
    let all = rig.status_of(&[]).code(3).run;
    assert_eq!(all.state_of(&tun), "degraded", "{all}");
    let failed = rig.status_of(&["--failed"]).code(3).run;
    assert_eq!(failed.state_of(&tun), "degraded", "{failed}");
    let table = hal(&rig).args(["status", &tun]).code(3);
    let line = table
        .stdout
        .lines()
        .find(|l| l.contains(tun.as_str()))
        .unwrap_or_default();
    assert!(line.contains("degraded") && line.contains(&said), "{table}");
    hal(&rig).args(["-q", "status", &tun]).code(3);

    // The provider runs again: the dependent's namespace is the old one, said so.
    docker(&["start", &format!("{gw}-main")]);
    let doc = rig.status_of(&[&tun]).code(3).doc().clone();
    let reason = doc["modules"][0]["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains(&format!("{gw}-main started again after it")),
        "{doc}"
    );
}

#[test]
fn a_namespace_provider_restarted_behind_hals_back_has_its_dependents_moved_under_the_watch() {
    let Some(rig) = rig::engine() else { return };
    let (gw, tun) = gateway(&rig);
    let mut w = Watch::spawn_every(&rig, &[], "1h");
    w.expect(Duration::from_secs(20), |l| l == SUBSCRIBED);

    docker(&["restart", "-t", "0", &format!("{gw}-main")]);
    // Within seconds, on the provider's start event: no pass, no resync in the way.
    let why = w.expect(Duration::from_secs(15), |l| {
        l.starts_with(&format!("{tun}: repairing: "))
    });
    assert!(
        why.contains(&format!("{gw}-main started again after it")),
        "{why}"
    );
    w.expect(Duration::from_secs(30), |l| {
        l.starts_with(&format!("{tun}: restarted, active ("))
    });
    assert!(in_current_namespace(&gw, &tun), "{}", w.dump());
}

/// `db` and `app` (which requires it) share a directory: `db` runs while `ok`
/// is there and says it is up with `up`; `app` runs while `up` is there.
pub(crate) fn broken_requirement(rig: &Rig) -> (String, String, std::path::PathBuf) {
    let shared = rig.dir.join("shared");
    std::fs::create_dir_all(&shared).unwrap();
    std::fs::write(shared.join("ok"), "").unwrap();
    let mount = format!("{}:/shared", shared.display());
    let db = rig.stack(
        "db",
        stack()
            .service("db")
            .runs("test -e /shared/ok || exit 3; touch /shared/up; sleep 100000")
            .keeps_running()
            .volume(&mount),
    );
    let app = rig.stack(
        "app",
        stack()
            .service("app")
            .runs("while test -e /shared/up; do sleep 0.2; done; echo db gone; exit 1")
            .keeps_running()
            .volume(&mount),
    );
    (db, app, shared)
}

/// [`broken_requirement`] under the watch, `app` requiring `db` (burst 100)
/// with a burst of 2 and an `on_failure` that writes to the returned file.
fn broken_requirement_watched(
    rig: &Rig,
) -> (String, String, std::path::PathBuf, std::path::PathBuf) {
    let (db, app, shared) = broken_requirement(rig);
    let marker = rig.dir.join("on_failure.txt");
    rig.set_config(&format!(
        "[defaults]\npull = \"never\"\n\n[module.{db}]\nrestart = {{ burst = 100, interval = \"10m\" }}\n\n[module.{app}]\nrequires = [\"{db}\"]\nrestart = {{ burst = 2, interval = \"10m\" }}\non_failure = [\"/bin/sh\", \"-c\", \"echo \\\"$HAL_MODULE\\\" >> {}\"]\n",
        marker.display()
    ));
    std::fs::set_permissions(&rig.config, std::fs::Permissions::from_mode(0o600)).unwrap();
    std::fs::set_permissions(&rig.dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    hal(rig).args(["start", &db]).code(0);
    hal(rig).args(["start", &app]).code(0);
    (db, app, shared, marker)
}

/// A watch over [`broken_requirement_watched`]'s pair, then db broken (it
/// cannot start again, and app exits without it) until app says it waits on
/// db: the watch and that line.
pub(crate) fn break_under_watch(rig: &Rig, db: &str, app: &str, shared: &Path) -> (Watch, String) {
    let mut w = Watch::spawn(rig, &[]);
    w.expect(Duration::from_secs(20), |l| l == SUBSCRIBED);
    std::fs::remove_file(shared.join("ok")).unwrap();
    std::fs::remove_file(shared.join("up")).unwrap();
    docker(&["kill", &format!("{db}-db-1")]);
    let waiting = w.expect(Duration::from_secs(30), |l| {
        l.starts_with(&format!("{app}: waiting on {db} ({db}: "))
    });
    (w, waiting)
}

/// No hold and no `on_failure` for `app`: its cause was db's.
fn no_alarm_for(w: &Watch, app: &str, marker: &std::path::Path) {
    assert!(lines_about(&w.seen, app, "held").is_empty(), "{}", w.dump());
    assert!(
        !marker.exists(),
        "on_failure ran: {:?}",
        std::fs::read_to_string(marker)
    );
}

#[test]
fn a_broken_requirement_under_the_watch_holds_no_dependent_and_they_are_back_within_seconds() {
    let Some(rig) = rig::engine() else { return };
    let (db, app, shared, marker) = broken_requirement_watched(&rig);
    let (mut w, waiting) = break_under_watch(&rig, &db, &app, &shared);
    // Read once the watch's first repair of db has failed: the container it
    // started again runs a few milliseconds before it exits, and a status
    // read just then finds db started.
    w.expect(Duration::from_secs(30), |l| {
        l.starts_with(&format!("{db}: restart failed"))
    });
    let doc = rig.status_of(&[&app]).code(3).doc().clone();
    assert_eq!(doc["modules"][0]["waiting_on"][0], db.as_str(), "{doc}");
    let reason = doc["modules"][0]["reason"].as_str().unwrap_or_default();
    assert!(
        reason.starts_with(&format!("waiting on {db} ({db}: ")),
        "{doc}"
    );
    // Long enough that app, left to itself, would have used its burst of 2.
    let restarts = || inspect(&format!("{app}-app-1"), "{{.RestartCount}}");
    let before = restarts();
    let during = w.collect_for(Duration::from_secs(8));
    assert!(
        lines_about(&during, &app, "repairing").is_empty(),
        "{waiting}\n{during:?}"
    );
    // And app was failing all along (not a quiet window): it crashed and
    // Docker restarted it during it (its back-off is still under 8 s then).
    let after = restarts();
    assert!(
        after.parse::<u32>().unwrap_or(0) > before.parse::<u32>().unwrap_or(u32::MAX),
        "app's RestartCount {before} -> {after}\n{during:?}"
    );

    // db is fixed, and a person starts it again (Docker's own back-off on db,
    // after this many crashes, may be a minute): app is repaired at once, no
    // back-off in the way.
    std::fs::write(shared.join("ok"), "").unwrap();
    hal(&rig).args(["restart", &db]).code(0);
    assert!(
        eventually(Duration::from_secs(60), || rig.state_of(&db) == "active"),
        "{}",
        w.dump()
    );
    let db_back = std::time::Instant::now();
    // Docker's own back-off would take longer after this many crashes.
    assert!(
        eventually(Duration::from_secs(20), || rig.state_of(&app) == "active"),
        "{}",
        w.dump()
    );
    let took = db_back.elapsed();
    assert!(took < Duration::from_secs(10), "{took:?}\n{}", w.dump());
    no_alarm_for(&w, &app, &marker);
}

#[test]
fn a_restart_of_a_provider_leaves_a_dependent_joined_only_by_its_network_running() {
    let Some(rig) = rig::engine() else { return };
    let db = rig.db_on_gw_net();
    let gw = rig.network_gw();
    hal(&rig).args(["start", &db]).code(0);
    let db_c = format!("{db}-db-1");
    let before = (
        inspect(&db_c, "{{.Id}}"),
        inspect(&db_c, "{{.State.StartedAt}}"),
    );
    let out = hal(&rig).args(["restart", &gw]).code(0);
    // Its container and its uptime are kept: a network outlives the containers on it.
    let after = (
        inspect(&db_c, "{{.Id}}"),
        inspect(&db_c, "{{.State.StartedAt}}"),
    );
    assert_eq!(before, after, "{out}");
    assert!(
        !out.stderr.contains(&format!("restarted after {gw}")),
        "{out}"
    );
    assert_eq!(rig.state_of(&db), "active");
}

#[test]
fn a_rescue_of_a_namespace_provider_restarts_its_dependents_into_the_new_namespace() {
    let Some(rig) = rig::engine() else { return };
    let (gw, tun) = gateway(&rig);
    let out = hal(&rig)
        .args(["--yes", "--json", "module", "rescue", &gw])
        .code(0);
    assert!(in_current_namespace(&gw, &tun), "{out}");
    assert!(out.stdout.contains(&format!("\"{tun}\"")), "{out}");
    assert_eq!(rig.state_of(&tun), "active");
}

/// A dependent the rescue restarts after its provider is a line of the report that
/// says the state it was in, as status read it (not `unknown`), and every verb's fields.
#[test]
fn a_rescue_reports_the_state_its_namespace_dependents_were_in() {
    let Some(rig) = rig::engine() else { return };
    let (gw, tun) = gateway(&rig);
    // Behind hal's back: tun left in a dead namespace, degraded.
    docker(&["restart", "-t", "0", &format!("{gw}-main")]);
    assert_eq!(rig.state_of(&tun), "degraded");
    let out = hal(&rig)
        .args(["--yes", "--json", "module", "rescue", &gw])
        .code(0);
    let doc = out.json();
    let rows = doc["modules"].as_array().cloned().unwrap_or_default();
    let row = rows
        .iter()
        .find(|r| r["name"] == tun.as_str())
        .unwrap_or_else(|| panic!("{tun} not in {doc}"));
    assert_eq!(row["action"], "restart", "{doc}");
    assert_eq!(row["was"], "degraded", "{doc}");
    assert_eq!(
        (
            &row["now"],
            &row["state"],
            &row["changed"],
            &row["exit_code"]
        ),
        (
            &serde_json::json!("active"),
            &serde_json::json!("active"),
            &serde_json::json!(true),
            &serde_json::json!(0)
        ),
        "{doc}"
    );
    assert!(in_current_namespace(&gw, &tun), "{out}");
}

/// The first pass of the watch finds both down at once (as after an engine
/// restart): `after` orders the repairs, though it requires nothing.
#[test]
fn the_watch_repairs_a_module_after_the_one_it_comes_after() {
    let Some(rig) = rig::engine() else { return };
    let app = rig.stack("app", stack().service("app").keeps_running());
    let db = rig.stack("db", stack().service("db").keeps_running());
    rig.set_config(&format!(
        "[defaults]\npull = \"never\"\n\n[module.{app}]\nafter = [\"{db}\"]\n"
    ));
    hal(&rig).args(["start", &db, &app]).code(0);
    docker(&[
        "stop",
        "-t",
        "0",
        &format!("{app}-app-1"),
        &format!("{db}-db-1"),
    ]);
    let mut w = Watch::spawn(&rig, &[]);
    w.expect(Duration::from_secs(60), |l| {
        l.starts_with(&format!("{app}: restarted, active"))
    });
    let at = |p: &str| w.seen.iter().position(|l| l.starts_with(p));
    let db_back = at(&format!("{db}: restarted, active")).unwrap_or(usize::MAX);
    let app_began = [
        at(&format!("{app}: repairing")),
        at(&format!("{app}: restarting")),
    ]
    .into_iter()
    .flatten()
    .min()
    .unwrap_or(0);
    assert!(db_back < app_began, "{}", w.dump());
}

/// A `requires` added to the config while the watch runs counts from its
/// next pass: the dependent of a broken requirement waits, and is not held.
#[test]
fn the_watch_reads_a_requires_added_while_it_runs() {
    let Some(rig) = rig::engine() else { return };
    let (db, app, shared) = broken_requirement(&rig);
    let config = |extra: &str| {
        format!(
            "[defaults]\npull = \"never\"\n\n[module.{db}]\nrestart = {{ burst = 100, interval = \"10m\" }}\n\n[module.{app}]\nrestart = {{ burst = 2, interval = \"10m\" }}\n{extra}"
        )
    };
    rig.set_config(&config(""));
    hal(&rig).args(["start", &db]).code(0);
    hal(&rig).args(["start", &app]).code(0);
    let mut w = Watch::spawn_with(&rig, &[], &["--interval", "2s", "--resync", "1h"]);
    w.expect(Duration::from_secs(20), |l| l == SUBSCRIBED);

    rig.set_config(&config(&format!("requires = [\"{db}\"]\n")));
    w.expect(Duration::from_secs(15), |l| {
        l.starts_with("watch: dependencies read again: 1 edge(s)")
    });
    std::fs::remove_file(shared.join("ok")).unwrap();
    std::fs::remove_file(shared.join("up")).unwrap();
    docker(&["kill", &format!("{db}-db-1")]);
    w.expect(Duration::from_secs(30), |l| {
        l.starts_with(&format!("{app}: waiting on {db} ({db}: "))
    });
    w.collect_for(Duration::from_secs(8));
    assert!(
        lines_about(&w.seen, &app, "held").is_empty(),
        "{}",
        w.dump()
    );
}

/// A stack made under the services root while the watch runs, and required
/// then: the watch's module list follows the node, so a dependent that went
/// down waits on it by name and is not repaired.
#[test]
fn the_watch_names_a_requirement_made_while_it_runs() {
    let Some(rig) = rig::engine() else { return };
    let app = rig.idle("app");
    let pull = "[defaults]\npull = \"never\"\n";
    rig.set_config(pull);
    hal(&rig).args(["start", &app]).code(0);
    let mut w = Watch::spawn_with(&rig, &[], &["--interval", "2s", "--resync", "1h"]);
    w.expect(Duration::from_secs(20), |l| l == SUBSCRIBED);

    let db = rig.idle("db");
    rig.set_config(&format!("{pull}\n[module.{app}]\nrequires = [\"{db}\"]\n"));
    w.expect(Duration::from_secs(15), |l| {
        l.starts_with("watch: dependencies read again: 1 edge(s)")
    });
    docker(&["stop", "-t", "0", &format!("{app}-app-1")]);
    w.expect(Duration::from_secs(30), |l| {
        l.starts_with(&format!("{app}: waiting on {db} ({db}: "))
    });
    w.collect_for(Duration::from_secs(5));
    assert!(
        lines_about(&w.seen, &app, "repairing").is_empty()
            && lines_about(&w.seen, &app, "restarting").is_empty(),
        "{}",
        w.dump()
    );
}

/// A file a stack's compose file includes from a subfolder, and one
/// `COMPOSE_FILE` names in a subfolder, are watched as the stack's own: an
/// edge added there is read within a pass, not at the resync.
#[test]
fn the_watch_reads_an_edge_added_in_a_compose_file_in_a_subfolder() {
    let Some(rig) = rig::engine() else { return };
    let net = format!("{}-net", rig.name("gw"));
    rig.stack(
        "gw",
        stack()
            .top(&format!("networks:\n  gwnet:\n    name: {net}"))
            .service("main")
            .line("networks: [gwnet]"),
    );
    let inc = rig.stack(
        "inc",
        stack().top("include:\n  - sub/more.yaml").service("app"),
    );
    let named = rig.stack_dir("named");
    rig.write(&named, ".env", "COMPOSE_FILE=sub/compose.yaml\n");
    let sub = |m: &str| rig.root.join(m).join("sub");
    let (more, own) = (
        sub(&inc).join("more.yaml"),
        sub(&named).join("compose.yaml"),
    );
    for d in [sub(&inc), sub(&named)] {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::write(&more, "networks: {}\n").unwrap();
    std::fs::write(&own, stack().service("app").to_string()).unwrap();
    let mut w = Watch::spawn_with(&rig, &[], &["--interval", "2s", "--resync", "1h"]);
    w.expect(Duration::from_secs(20), |l| l == SUBSCRIBED);

    let external = format!("networks:\n  gwnet:\n    external: true\n    name: {net}\n");
    std::fs::write(&more, &external).unwrap();
    w.expect(Duration::from_secs(15), |l| {
        l.starts_with("watch: dependencies read again: 1 edge(s)")
    });
    let own_text = format!("{external}{}", stack().service("app"));
    std::fs::write(&own, own_text).unwrap();
    w.expect(Duration::from_secs(15), |l| {
        l.starts_with("watch: dependencies read again: 2 edge(s)")
    });
}

/// The watch brings a requirement back by itself within seconds of its cause
/// being fixed, with no person and no `hal` command: while `app` waits on it,
/// `db`'s pause between failed repairs stays short, and each repair restarts
/// or recreates its container, which Docker's own restart back-off (up to a
/// minute) does not hold up.
#[test]
fn a_broken_requirement_under_the_watch_is_back_by_itself_within_seconds_of_its_fix() {
    let Some(rig) = rig::engine() else { return };
    let (db, app, shared, marker) = broken_requirement_watched(&rig);
    let (mut w, _) = break_under_watch(&rig, &db, &app, &shared);
    // db stays broken a while: the watch's repairs of it fail.
    let broken = w.collect_for(Duration::from_secs(20));
    assert!(
        !lines_about(&broken, &db, "restart failed").is_empty(),
        "{}",
        w.dump()
    );

    // The cause is fixed; nobody runs hal. The slowest path measured (about
    // 11 s of 20 s on a loaded machine): the fix lands while a repair waits,
    // Docker's own restart of the fresh container comes within its back-off
    // (a few seconds at most, since each repair makes a fresh one), and a
    // container Docker restarted after a crash must stay up 5 s to count.
    // Before, db stayed failed for good in half the runs (over 90 s).
    std::fs::write(shared.join("ok"), "").unwrap();
    let fixed = std::time::Instant::now();
    assert!(
        eventually(Duration::from_secs(20), || rig.state_of(&db) == "active"),
        "{}",
        w.dump()
    );
    let db_took = fixed.elapsed();
    let db_back = std::time::Instant::now();
    assert!(
        eventually(Duration::from_secs(20), || rig.state_of(&app) == "active"),
        "{}",
        w.dump()
    );
    let app_took = db_back.elapsed();
    eprintln!("db active {db_took:?} after its fix, app {app_took:?} after db");
    // The lines of app's repair, read before they are looked through.
    w.collect_for(Duration::from_secs(1));
    assert!(
        app_took < Duration::from_secs(10),
        "{app_took:?}\n{}",
        w.dump()
    );
    no_alarm_for(&w, &app, &marker);
}
