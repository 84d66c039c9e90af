//! End to end (issue 39, point 4): an `update` of a namespace provider, and the rollback of a
//! bad image, recreate its container; the dependent in its network namespace is restarted
//! into the new one once the provider is active again, and the update's report says so.

use std::time::Duration;

use crate::needs::{in_current_namespace, inspect};
use crate::rig::registry::{Repo, with_registry};
use crate::rig::{self, Rig, hal, stack};

#[test]
fn an_update_and_a_rollback_of_a_namespace_provider_restart_its_dependents_into_it() {
    let Some(rig) = with_registry() else { return };
    let (repo, gw, tun) = provider_and_tunnel(&rig, "gwimg");
    assert!(in_current_namespace(&gw, &tun));

    // A new image: gw recreated, then tun restarted into its new namespace.
    repo.publish("good");
    let run = hal(&rig)
        .args(["update", &gw])
        .within(Duration::from_secs(90))
        .code(0);
    let why = format!("{tun}: restarted after {gw}: it shares its network namespace or volumes");
    assert!(run.stderr.contains(&why), "no {why:?}: {run}");
    assert!(in_current_namespace(&gw, &tun), "{run}");
    assert_eq!(rig.state_of(&tun), "active", "{run}");

    // A bad image, rolled back: gw recreated twice, tun follows it again.
    repo.publish("exit");
    let run = hal(&rig)
        .args(["update", "--timeout", "30s", &gw])
        .within(Duration::from_secs(90))
        .code(1);
    assert!(run.stderr.contains("rolled back: "), "{run}");
    assert!(run.stderr.contains(&why), "no {why:?}: {run}");
    assert!(in_current_namespace(&gw, &tun), "{run}");
    assert_eq!(rig.state_of(&tun), "active", "{run}");
}

/// Under `--json`, a rolled-back update of a namespace provider lists the
/// dependent it restarted in its document's `warnings`, where an update that
/// went through says it: one place for a script to read.
#[test]
fn a_rolled_back_update_of_a_namespace_provider_lists_its_restarted_dependent_in_json() {
    let Some(rig) = with_registry() else { return };
    let (repo, gw, tun) = provider_and_tunnel(&rig, "gwjson");

    repo.publish("exit");
    let run = hal(&rig)
        .args(["--json", "update", "--timeout", "30s", &gw])
        .within(Duration::from_secs(90))
        .code(1);
    let doc = run.json();
    let rows = doc["modules"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "{run}");
    let row = &rows[0];
    assert_eq!(row["name"], gw.as_str(), "{run}");
    assert_eq!(row["rolled_back"], true, "{run}");
    assert_eq!(row["ok"], false, "{run}");
    let said = format!("restarted {tun} with it: active");
    let warnings = row["warnings"].as_array().unwrap();
    assert!(
        warnings.iter().any(|w| w == said.as_str()),
        "no {said:?}: {run}"
    );
    assert!(in_current_namespace(&gw, &tun), "{run}");
    assert_eq!(rig.state_of(&tun), "active", "{run}");
}

/// `volumes_from` and `external_links` naming another module's container by
/// compose's default name (`PROJECT-SERVICE-N`) are `requires` edges, listed
/// with their keys; a restart of that module restarts the `volumes_from` user
/// once it is active again, saying why.
#[test]
fn volumes_from_and_external_links_are_edges_and_a_volumes_from_user_follows_a_restart() {
    let Some(rig) = rig::engine() else { return };
    let data = rig.name("data");
    let store = format!("{data}-store-1");
    // Dependents first: the rig removes projects in the order it made them.
    let user = rig.stack(
        "user",
        stack()
            .service("app")
            .keeps_running()
            .line(&format!("volumes_from: [\"container:{store}\"]")),
    );
    let linked = rig.stack(
        "linked",
        stack()
            .service("app")
            .keeps_running()
            .line(&format!("external_links: [\"{store}:store\"]")),
    );
    let made = rig.stack(
        "data",
        stack()
            .service("store")
            .keeps_running()
            .line("volumes: [\"/data\"]"),
    );
    assert_eq!(made, data);
    rig.set_config("[defaults]\npull = \"never\"\n");
    let run = hal(&rig).args(["--json", "module", "list"]).code(0);
    let doc = run.json();
    let edge = |m: &str| {
        let rows = doc["modules"].as_array().unwrap();
        let row = rows.iter().find(|r| r["name"] == m).unwrap();
        row["edges"][0].clone()
    };
    for (m, tie, key) in [
        (&user, "namespace", "services.app.volumes_from"),
        (&linked, "link", "services.app.external_links"),
    ] {
        let e = edge(m);
        assert_eq!(e["to"], data.as_str(), "{m}: {run}");
        assert_eq!(e["strength"], "requires", "{m}: {run}");
        assert_eq!(e["tie"], tie, "{m}: {run}");
        assert_eq!(e["origin"]["key"], key, "{m}: {run}");
    }

    let run = hal(&rig).args(["start", &user]).code(0);
    let first = format!("{data}: starting first ({user} requires it)");
    assert!(run.stderr.contains(&first), "no {first:?}: {run}");
    let run = hal(&rig).args(["restart", &data]).code(0);
    let why = format!("{user}: restarted after {data}: it shares its network namespace or volumes");
    assert!(run.stderr.contains(&why), "no {why:?}: {run}");
    let started = |c: &str| inspect(c, "{{.State.StartedAt}}");
    let app = format!("{user}-app-1");
    assert!(started(&app) > started(&store), "{run}");
    assert_eq!(inspect(&app, "{{.State.Running}}"), "true", "{run}");
    assert_eq!(rig.state_of(&user), "active", "{run}");
}

/// `gw`, a module of one image from the local registry (repository `repo`)
/// whose container is `GW-main`, and `tun`, a module in its network namespace;
/// both started.
fn provider_and_tunnel(rig: &Rig, repo: &str) -> (Repo, String, String) {
    let mut repo = Repo::new(rig, repo);
    repo.publish("good");
    let gw = rig.name("gw");
    // tun first: the rig removes projects in the order it made them.
    let tun = rig.stack(
        "tun",
        stack()
            .service("vpn")
            .keeps_running()
            .network_mode(&format!("container:{gw}-main")),
    );
    let made = rig.stack(
        "gw",
        repo.compose().line(&format!("container_name: {gw}-main")),
    );
    assert_eq!(made, gw);
    repo.modules.push(gw.clone());
    hal(rig).args(["start", "--pull", "always", &gw]).code(0);
    hal(rig).args(["start", &tun]).code(0);
    (repo, gw, tun)
}
