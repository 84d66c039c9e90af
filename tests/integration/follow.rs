//! End to end (issue 39, point 4): an `update` of a namespace provider, and the rollback of a
//! bad image, recreate its container; the dependent in its network namespace is restarted
//! into the new one once the provider is active again, and the update's report says so.

use std::time::Duration;

use crate::needs::in_current_namespace;
use crate::rig::registry::{Repo, with_registry};
use crate::rig::{hal, stack};

#[test]
fn an_update_and_a_rollback_of_a_namespace_provider_restart_its_dependents_into_it() {
    let Some(rig) = with_registry() else { return };
    let mut repo = Repo::new(&rig, "gwimg");
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
    hal(&rig).args(["start", "--pull", "always", &gw]).code(0);
    hal(&rig).args(["start", &tun]).code(0);
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
