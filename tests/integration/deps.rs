//! End to end: modules that need each other. A start pulls in what a module requires (declared, or
//! implied by compose: another module's container namespace, an external network it creates), a stop
//! stops what requires the module first, a requirement that fails fails its dependents untried, `list`
//! shows each edge and its origin, and a cycle or a `requires` naming no module is exit 2.

use crate::rig::{self, Rig, hal, stack};

/// The node in small: `gw` owns a network and a named container,
/// `tun` lives in gw's container's namespace, `db` joins gw's network as
/// an external one, `app` requires `db` in the config.
struct Node {
    gw: String,
    tun: String,
    db: String,
    app: String,
    net: String,
}

/// Writes the node's stacks, dependents first (the rig removes projects in
/// the order it made them: a network goes after the containers on it).
fn node(rig: &Rig) -> Node {
    let net = rig.gw_net();
    let app = rig.stack("app", stack().service("app").keeps_running());
    let db = rig.db_on_gw_net();
    let (gw, tun) = rig.gateway_networked();
    rig.set_config(&format!(
        "[defaults]\npull = \"never\"\n\n[module.{app}]\nrequires = [\"{db}\"]\n"
    ));
    Node {
        gw,
        tun,
        db,
        app,
        net,
    }
}

fn network_exists(name: &str) -> bool {
    rig::docker(&["network", "ls", "-q", "--filter", &format!("name=^{name}$")])
        .split_whitespace()
        .next()
        .is_some()
}

/// The row of `name` in a verb document.
fn row<'a>(doc: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    doc["modules"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == name)
        .unwrap_or_else(|| panic!("{name} not in {doc}"))
}

/// A dry run does nothing, and says so of the modules it adds: `would start first`,
/// `would stop first`, never `starting first`/`stopping first`.
#[test]
fn a_dry_run_says_what_would_go_first_not_that_it_goes() {
    let Some(rig) = rig::engine() else { return };
    let app = rig.stack("app", stack().service("app").keeps_running());
    let db = rig.stack("db", stack().service("db").keeps_running());
    rig.set_config(&format!(
        "[defaults]\npull = \"never\"\n\n[module.{app}]\nrequires = [\"{db}\"]\n"
    ));

    let run = hal(&rig).args(["start", "--dry-run", &app]).code(0);
    let line = format!("{db}: would start first ({app} requires it)");
    assert!(run.stderr.contains(&line), "no {line:?}: {run}");
    assert!(!run.stderr.contains("starting first"), "{run}");
    assert_eq!(rig.state_of(&db), "inactive", "a dry run changes nothing");

    hal(&rig).args(["start", &app]).code(0);
    let run = hal(&rig).args(["stop", "--dry-run", &db]).code(0);
    let line = format!("{app}: would stop first (requires {db})");
    assert!(run.stderr.contains(&line), "no {line:?}: {run}");
    assert!(!run.stderr.contains("stopping first"), "{run}");
    assert_eq!(rig.state_of(&app), "active", "a dry run changes nothing");
}

#[test]
fn start_pulls_in_requirements_and_stop_stops_dependents_first() {
    let Some(rig) = rig::engine() else { return };
    let n = node(&rig);

    // app requires db (config), db requires gw (its external network).
    let run = hal(&rig).args(["module", "start", &n.app]).code(0);
    for line in [
        format!("{}: starting first ({} requires it)", n.db, n.app),
        format!("{}: starting first ({} requires it)", n.gw, n.db),
    ] {
        assert!(run.stderr.contains(&line), "no {line:?}: {run}");
    }
    for m in [&n.gw, &n.db, &n.app] {
        assert_eq!(rig.state_of(m), "active", "{m}");
    }

    // An active requirement is left alone: no row, nothing counted.
    let run = hal(&rig)
        .args(["--json", "module", "start", &n.tun])
        .code(0);
    assert_eq!(rig::module_names(&run.json()), vec![n.tun.clone()], "{run}");

    // The dry run lists what a stop of gw stops first, and why.
    let run = hal(&rig)
        .args(["--json", "module", "stop", "--dry-run", &n.gw])
        .code(0);
    let doc = run.json();
    let names = rig::module_names(&doc);
    for m in [&n.tun, &n.db, &n.app, &n.gw] {
        assert!(names.contains(m), "{m} not listed: {run}");
    }
    assert_eq!(row(&doc, &n.tun)["stopped_first_for"][0], n.gw.as_str());
    assert_eq!(row(&doc, &n.app)["stopped_first_for"][0], n.db.as_str());
    assert_eq!(row(&doc, &n.tun)["would"], "stop");
    assert_eq!(rig.state_of(&n.tun), "active", "a dry run changes nothing");

    let run = hal(&rig).args(["module", "stop", &n.gw]).code(0);
    for line in [
        format!("{}: stopping first (requires {})", n.tun, n.gw),
        format!("{}: stopping first (requires {})", n.app, n.db),
    ] {
        assert!(run.stderr.contains(&line), "no {line:?}: {run}");
    }
    for m in [&n.gw, &n.tun, &n.db, &n.app] {
        assert_eq!(rig.state_of(m), "inactive", "{m}");
    }

    // tun in gw's namespace: gw comes first, said so.
    let run = hal(&rig).args(["module", "start", &n.tun]).code(0);
    let line = format!("{}: starting first ({} requires it)", n.gw, n.tun);
    assert!(run.stderr.contains(&line), "no {line:?}: {run}");
    assert_eq!(rig.state_of(&n.tun), "active");

    // stop --all goes dependents first: the network goes last, with no error.
    hal(&rig).args(["module", "start", &n.app]).code(0);
    let run = hal(&rig)
        .args(["--yes", "--json", "module", "stop", "--all"])
        .code(0);
    let doc = run.json();
    for m in [&n.gw, &n.tun, &n.db, &n.app] {
        let r = row(&doc, m);
        assert_eq!(r["ok"], true, "{run}");
        assert_eq!(r["warnings"], serde_json::json!([]), "{m}: {run}");
    }
    assert!(!network_exists(&n.net), "{} is still there", n.net);
}

#[test]
fn a_requirement_that_does_not_start_fails_its_dependents_untried() {
    let Some(rig) = rig::engine() else { return };
    let app = rig.stack("app", stack().service("app").keeps_running());
    let db = rig.stack("db", stack().service("db").runs("exit 1").restart("no"));
    rig.set_config(&format!(
        "[defaults]\npull = \"never\"\ntimeout = \"20s\"\n\n[module.{app}]\nrequires = [\"{db}\"]\n"
    ));
    let run = hal(&rig).args(["module", "start", &app]).code(1);
    let line = format!("{app}: not started: {db} did not start");
    assert!(run.stderr.contains(&line), "no {line:?}: {run}");
    let out = rig::docker(&[
        "ps",
        "-aq",
        "--filter",
        &format!("label=com.docker.compose.project={app}"),
    ]);
    assert!(out.trim().is_empty(), "app was tried: {out}");

    let run = hal(&rig).args(["--json", "module", "start", &app]).code(1);
    let doc = run.json();
    assert_eq!(row(&doc, &db)["pulled_in_by"][0], app.as_str(), "{run}");
    let r = row(&doc, &app);
    assert_eq!(r["ok"], false);
    assert!(
        r["error"]
            .as_str()
            .unwrap()
            .contains(&format!("not started: {db} did not start")),
        "{run}"
    );
}

#[test]
fn list_shows_edges_with_origins_and_bad_edges_are_config_errors() {
    let Some(rig) = rig::engine() else { return };
    let n = node(&rig);
    let run = hal(&rig).args(["--json", "module", "list"]).code(0);
    let doc = run.json();
    let edges = |m: &str| row(&doc, m)["edges"].clone();
    let tun = edges(&n.tun);
    assert_eq!(tun[0]["to"], n.gw.as_str(), "{run}");
    assert_eq!(tun[0]["strength"], "requires");
    assert_eq!(tun[0]["tie"], "namespace");
    assert_eq!(tun[0]["origin"]["source"], "compose");
    assert_eq!(tun[0]["origin"]["key"], "services.vpn.network_mode");
    let db = edges(&n.db);
    assert_eq!(db[0]["to"], n.gw.as_str(), "{run}");
    assert_eq!(db[0]["tie"], "network");
    assert_eq!(db[0]["origin"]["key"], "networks.gwnet");
    let app = edges(&n.app);
    assert_eq!(app[0]["to"], n.db.as_str(), "{run}");
    assert_eq!(app[0]["tie"], "declared");
    assert_eq!(app[0]["origin"]["source"], "config");
    assert_eq!(app[0]["origin"]["key"], "requires");
    assert_eq!(app[0]["origin"]["line"], 5);
    assert_eq!(edges(&n.gw), serde_json::json!([]));
    let table = hal(&rig).args(["module", "list"]).code(0);
    assert!(table.stdout.contains("DEPENDS ON"), "{table}");
    assert!(
        table.stdout.contains(&format!(
            "{} (requires, namespace: compose.yaml services.vpn.network_mode)",
            n.gw
        )),
        "{table}"
    );

    // A requires naming no module: exit 2, naming the key and its line.
    rig.set_config(&format!(
        "[defaults]\npull = \"never\"\n\n[module.{}]\nrequires = [\"nosuch\"]\n",
        n.app
    ));
    let run = hal(&rig).args(["module", "start", &n.app]).code(2);
    let key = format!("line 5, key module.{}.requires", n.app);
    assert!(run.stderr.contains(&key), "{run}");
    assert!(run.stderr.contains("\"nosuch\" is no module"), "{run}");

    // A cycle through an inferred edge: gw requires app, app db, db gw.
    rig.set_config(&format!(
        "[defaults]\npull = \"never\"\n\n[module.{}]\nrequires = [\"{}\"]\n[module.{}]\nrequires = [\"{}\"]\n",
        n.app, n.db, n.gw, n.app
    ));
    let run = hal(&rig).args(["module", "list"]).code(2);
    assert!(
        run.stderr.contains(&format!(
            "a cycle: {} → {} → {} → {}",
            n.app, n.db, n.gw, n.app
        )),
        "{run}"
    );
    assert!(run.stderr.contains("networks.gwnet"), "{run}");
}

#[test]
fn an_inferred_use_no_module_owns_is_a_doctor_warning_never_an_error() {
    let Some(rig) = rig::engine() else { return };
    let stranger = format!("{}-by-hand", rig.prefix);
    let tun = rig.stack(
        "tun",
        stack()
            .service("vpn")
            .network_mode(&format!("\"container:{stranger}\"")),
    );
    let run = hal(&rig).args(["--json", "doctor"]).run();
    let doc = run.json();
    let check = rig::check(&doc, "dependencies");
    assert_eq!(check["ok"], true, "{run}");
    let detail = check["detail"].as_str().unwrap();
    assert!(
        detail.contains(&stranger) && detail.contains("services.vpn.network_mode"),
        "{run}"
    );
    assert!(run.stderr.contains("warning:"), "{run}");
    let run = hal(&rig).args(["--json", "module", "list"]).code(0);
    assert_eq!(row(&run.json(), &tun)["edges"], serde_json::json!([]));
}

#[test]
fn rescue_goes_in_dependency_order_critical_first_among_the_rest() {
    let Some(rig) = rig::engine() else { return };
    let app = rig.stack("app", stack().service("app").keeps_running());
    let other = rig.stack("other", stack().service("other").keeps_running());
    let db = rig.stack("db", stack().service("db").keeps_running());
    rig.set_config(&format!(
        "[defaults]\npull = \"never\"\n\n[module.{app}]\ncritical = true\nrequires = [\"{db}\"]\n"
    ));
    hal(&rig)
        .args(["--yes", "module", "rescue", &other, &app, &db])
        .code(0);
    // app is critical, but needs db: db first, then app, then the rest.
    let (db_at, app_at, other_at) = (rig::created(&db), rig::created(&app), rig::created(&other));
    assert!(
        app_at.since(db_at) > std::time::Duration::ZERO,
        "app before db"
    );
    assert!(
        other_at.since(app_at) > std::time::Duration::ZERO,
        "other before app"
    );
}

/// An `after` naming no module is accepted (systemd's After= on a unit that
/// does not exist), shown by `list` and warned of by `doctor`.
#[test]
fn an_after_naming_no_module_is_accepted_listed_and_a_doctor_warning() {
    let Some(rig) = rig::engine() else { return };
    let app = rig.stack("app", stack().service("app").keeps_running());
    rig.set_config(&format!(
        "[defaults]\npull = \"never\"\n\n[module.{app}]\nafter = [\"nosuch\"]\n"
    ));
    hal(&rig).args(["module", "start", &app]).code(0);
    let run = hal(&rig).args(["--json", "module", "list"]).code(0);
    let doc = run.json();
    let edge = &row(&doc, &app)["edges"][0];
    assert_eq!(edge["to"], "nosuch", "{run}");
    assert_eq!(edge["strength"], "after");
    assert_eq!(edge["missing"], true);
    let table = hal(&rig).args(["module", "list"]).code(0);
    assert!(
        table
            .stdout
            .contains("nosuch (after: config line 5; no such module)"),
        "{table}"
    );
    let run = hal(&rig).args(["--json", "doctor"]).run();
    let doc = run.json();
    let check = doc["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "dependencies")
        .unwrap_or_else(|| panic!("no dependencies check: {run}"));
    assert_eq!(check["ok"], true, "{run}");
    let detail = check["detail"].as_str().unwrap();
    assert!(
        detail.contains(&format!(
            "{app}: config line 5: after names \"nosuch\", which is no module"
        )),
        "{run}"
    );
    assert!(run.stderr.contains("warning:"), "{run}");
}

/// `--all` and a pattern follow the same layers as named modules: with
/// jobs to spare, a module is created only once what it requires is active.
#[test]
fn start_all_and_patterns_follow_the_layers() {
    let Some(rig) = rig::engine() else { return };
    let app = rig.stack("app", stack().service("app").keeps_running());
    let db = rig.stack("db", stack().service("db").healthy_after(3).keeps_running());
    rig.set_config(&format!(
        "[defaults]\npull = \"never\"\n\n[module.{app}]\nrequires = [\"{db}\"]\n"
    ));
    let pattern = format!("{}-*", rig.prefix);
    for what in [vec!["--all"], vec![pattern.as_str()]] {
        let mut start = hal(&rig).args(["--yes", "module", "start", "--jobs", "4"]);
        for w in &what {
            start = start.arg(w);
        }
        let run = start.code(0);
        let gap = rig::created(&app).since(rig::created(&db));
        assert!(
            gap >= std::time::Duration::from_secs(3),
            "{what:?}: app was created {gap:?} after db: {run}"
        );
        hal(&rig).args(["--yes", "module", "stop", "--all"]).code(0);
    }
}

/// `db` joins the network `gw` creates (an inferred `requires`), both
/// started; their container ids, to show nothing was touched.
fn network_pair(rig: &Rig) -> (String, String, String) {
    let db = rig.db_on_gw_net();
    let gw = rig.network_gw();
    rig.set_config("[defaults]\npull = \"never\"\n");
    hal(rig).args(["module", "start", &db]).code(0);
    let ids = format!("{}\n{}", rig::ids(&gw).trim(), rig::ids(&db).trim());
    assert_eq!(ids.lines().count(), 2, "{ids}");
    (gw, db, ids)
}

/// Every verb that acts refuses a graph that cannot be built, before it
/// touches anything: exit 2, naming why (`words`); `status` still reads.
fn refused_by_every_verb(rig: &Rig, gw: &str, db: &str, ids: &str, words: &str) {
    for verb in [
        vec!["module", "restart", db],
        vec!["--yes", "module", "rescue", db],
        vec!["update", db],
    ] {
        let mut call = hal(rig);
        for a in &verb {
            call = call.arg(a);
        }
        let run = call.code(2);
        assert!(run.stderr.contains(words), "{verb:?}: {run}");
        let now = format!("{}\n{}", rig::ids(gw).trim(), rig::ids(db).trim());
        assert_eq!(now, ids, "{verb:?} touched a container: {run}");
    }
    assert_eq!(rig.status(db).code(0).state(), "active");
}

/// Issue 52: a cycle through an inferred edge stops restart, rescue and
/// update as it stops start and stop.
#[test]
fn a_cycle_through_an_inferred_edge_stops_restart_rescue_and_update() {
    let Some(rig) = rig::engine() else { return };
    let (gw, db, ids) = network_pair(&rig);
    // gw requires db (declared), db requires gw (its external network).
    rig.set_config(&format!(
        "[defaults]\npull = \"never\"\n\n[module.{gw}]\nrequires = [\"{db}\"]\n"
    ));
    let cycle = format!("a cycle: {db} → {gw} → {db}");
    refused_by_every_verb(&rig, &gw, &db, &ids, &cycle);
}

/// Issue 52: a `requires` naming no module stops restart, rescue and update.
#[test]
fn a_requires_naming_no_module_stops_restart_rescue_and_update() {
    let Some(rig) = rig::engine() else { return };
    let (gw, db, ids) = network_pair(&rig);
    rig.set_config(&format!(
        "[defaults]\npull = \"never\"\n\n[module.{db}]\nrequires = [\"nosuch\"]\n"
    ));
    refused_by_every_verb(&rig, &gw, &db, &ids, "\"nosuch\" is no module");
}
