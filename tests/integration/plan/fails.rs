//! What would fail, said before anything starts: `hal plan` lists an unset variable with no default, a `container_name` another module's container has, a host port another module publishes and an external network no module makes; `start` refuses the last three before it makes anything.

use crate::rig::{self, FIXTURE, Rig, docker, hal, stack};

/// The module's `fails` in the plan's document: `(what, detail)`.
fn fails_of(doc: &serde_json::Value) -> Vec<(String, String)> {
    doc["modules"][0]["fails"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["what"].as_str().unwrap().to_string(),
                f["detail"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// `hal --json plan M`, which has something to do (exit 3): its document and
/// the module's `fails`.
#[track_caller]
fn plan_fails(rig: &Rig, m: &str) -> (serde_json::Value, Vec<(String, String)>) {
    let out = hal(rig).args(["--json", "plan", m]).run();
    assert_eq!(out.code, Some(3), "{out}");
    let doc = out.json();
    let fails = fails_of(&doc);
    (doc, fails)
}

/// `hal module start M` refuses what the plan said would fail, in the plan's
/// words (`detail`), before it makes anything.
#[track_caller]
fn refused_before_anything(rig: &Rig, m: &str, detail: &str) {
    let start = hal(rig).args(["module", "start", m]).run();
    assert_eq!(start.code, Some(1), "{start}");
    assert!(start.stderr.contains(detail), "{start}");
    assert!(made_nothing(m), "{start}");
}

/// No container of project `m` exists: the start made nothing.
fn made_nothing(m: &str) -> bool {
    let label = format!("label=com.docker.compose.project={m}");
    docker(&["ps", "-aq", "--filter", &label]).trim().is_empty()
}

/// A host port no one holds now (the kernel's pick, let go at once).
fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("0.0.0.0:0").unwrap();
    l.local_addr().unwrap().port()
}

#[test]
fn the_plan_lists_what_would_fail_and_start_refuses_a_taken_container_name() {
    let Some(rig) = rig::engine() else { return };
    super::config(&rig);
    let holder_name = rig.name("taken");
    let first = rig.stack(
        "first",
        format!(
            "services:\n  one:\n    image: {FIXTURE}\n    command: [\"sleep\", \"100000\"]\n    container_name: {holder_name}\n"
        ),
    );
    hal(&rig).args(["module", "start", &first]).code(0);
    let second = rig.stack(
        "second",
        format!(
            "services:\n  a:\n    image: {FIXTURE}\n    command: [\"sleep\", \"100000\"]\n    labels:\n      note: \"${{HAL_PLAN_NOT_SET}}\"\n  b:\n    image: {FIXTURE}\n    command: [\"sleep\", \"100000\"]\n    container_name: {holder_name}\n"
        ),
    );
    let (doc, fails) = plan_fails(&rig, &second);
    assert_eq!(fails.len(), 2, "{doc}");
    assert_eq!(fails[0].0, "unset");
    assert!(fails[0].1.contains("${HAL_PLAN_NOT_SET}"), "{fails:?}");
    assert_eq!(fails[1].0, "container_name");
    assert!(
        fails[1].1.contains(&holder_name) && fails[1].1.contains(&first),
        "{fails:?}"
    );
    // Refused before anything: compose made none of its containers.
    refused_before_anything(&rig, &second, &holder_name);
}

#[test]
fn a_host_port_a_running_module_publishes_is_listed_and_refused_before_anything() {
    let Some(rig) = rig::engine() else { return };
    super::config(&rig);
    let port = free_port();
    let holder = rig.stack(
        "holder",
        stack()
            .service("web")
            .keeps_running()
            .line(&format!("ports: [\"127.0.0.1:{port}:80\"]")),
    );
    // `b` publishes the port on every address (it overlaps 127.0.0.1), after `a`.
    let second = rig.stack(
        "second",
        stack()
            .service("a")
            .keeps_running()
            .service("b")
            .keeps_running()
            .line("depends_on: [a]")
            .line(&format!("ports: [\"{port}:80\"]")),
    );
    hal(&rig).args(["plan", &second]).code(3);
    assert!(plan_fails(&rig, &second).1.is_empty());
    hal(&rig).args(["module", "start", &holder]).code(0);
    let (_, fails) = plan_fails(&rig, &second);
    assert_eq!(fails.len(), 1, "{fails:?}");
    let (what, detail) = &fails[0];
    assert_eq!(what, "port");
    assert!(
        detail.starts_with(&format!("port 0.0.0.0:{port}/tcp (service b) is already published by module {holder}'s service web")),
        "{detail}"
    );
    // The start refuses it in the plan's words, before `a` is made (compose
    // would start `a`, then fail on `b`'s port).
    refused_before_anything(&rig, &second, detail);
    // A module stopped holds no port: nothing would fail, and the start works.
    hal(&rig).args(["module", "stop", &holder]).code(0);
    let (doc, fails) = plan_fails(&rig, &second);
    assert!(fails.is_empty(), "{doc}");
    hal(&rig).args(["module", "start", &second]).code(0);
}

#[test]
fn an_external_network_no_module_makes_is_refused_and_one_a_required_module_makes_is_a_wait() {
    let Some(rig) = rig::engine() else { return };
    super::config(&rig);
    // `db` joins the network `gw` makes: hal infers that `db` requires `gw`.
    let db = rig.db_on_gw_net();
    let gw = rig.network_gw();
    let (doc, fails) = plan_fails(&rig, &db);
    assert!(fails.is_empty(), "{doc}");
    let waits = doc["modules"][0]["waits"].as_array().unwrap();
    let net = rig.gw_net();
    assert!(
        waits.iter().any(|w| w["what"] == "network"
            && w["detail"]
                == format!(
                    "network {net} (service db) is made by {gw}, which the start starts first"
                )),
        "{doc}"
    );
    lone_network(&rig);
}

/// A network declared external that no module makes: a fail in the plan,
/// and the start refuses it in the same words, making nothing.
fn lone_network(rig: &Rig) {
    let missing = rig.name("nonet");
    let lone = rig.stack(
        "lone",
        stack()
            .top(&format!(
                "networks:\n  ext:\n    external: true\n    name: {missing}"
            ))
            .service("a")
            .keeps_running()
            .service("b")
            .keeps_running()
            .line("networks: [ext]"),
    );
    let (_, fails) = plan_fails(rig, &lone);
    assert_eq!(fails.len(), 1, "{fails:?}");
    assert_eq!(fails[0].0, "network");
    let detail = &fails[0].1;
    assert_eq!(
        *detail,
        format!(
            "network {missing} (service b) is declared external but does not exist, and no module makes it; create it (docker network create {missing})"
        )
    );
    refused_before_anything(rig, &lone, detail);
}
