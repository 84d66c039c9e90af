//! End to end against the registry on 127.0.0.1:5000 (issue 48): a digest hal rolled back is quarantined (`update`, a restart under pull `always` and `--check` keep the running image and say so, exit 0; status, its JSON and the metrics name it; `--force` tries it once more; a new digest lifts it), `pin = true` (`update --all` leaves the module, naming it is refused without `--force`), and the gate that holds what requires the module.

use std::time::Duration;

use crate::needs::in_current_namespace;
use crate::rig::registry::{Repo, RolledBack, running, with_registry};
use crate::rig::watch::Watch;
use crate::rig::{Rig, hal, stack};

#[test]
fn a_rolled_back_digest_is_quarantined_until_a_new_one_or_force() {
    let Some(rig) = with_registry() else { return };
    let RolledBack {
        repo,
        m,
        v1,
        before,
        bad,
    } = Repo::rolled_back(&rig, "quar");

    // update: the same digest is not applied again; said in one line, exit 0.
    let run = hal(&rig).args(["update", &m]).code(0);
    let said = run
        .stderr
        .lines()
        .find(|l| l.contains("quarantined"))
        .unwrap_or_else(|| panic!("no quarantine line: {run}"));
    assert!(said.contains(&bad), "{run}");
    assert!(said.contains("new image did not start"), "{run}");
    assert!(said.contains("rolled back at 20"), "{run}");
    assert!(run.stdout.contains("quarantined"), "{run}");
    assert_eq!(running(&m, "app"), before, "recreated: {run}");

    // --check: the only newer digest is quarantined: no update, exit 0, said.
    let run = hal(&rig).args(["update", "--check", &m]).code(0);
    assert!(
        run.stderr.contains(&bad) && run.stdout.contains("quarantined"),
        "{run}"
    );
    let run = hal(&rig).args(["--json", "update", "--check", &m]).code(0);
    assert_eq!(run.json()["modules"][0]["update_available"], false, "{run}");

    // A restart under pull `always` keeps the running image, says so, exit 0.
    let run = hal(&rig)
        .args(["restart", "--pull", "always", &m])
        .within(Duration::from_secs(90))
        .code(0);
    assert!(run.stderr.contains(&bad), "{run}");
    assert_eq!(running(&m, "app").0, v1, "{run}");
    assert_eq!(rig.state_of(&m), "active");

    // Status: the detail, the JSON and the metrics name it.
    let st = hal(&rig).args(["status", &m]).code(0);
    assert!(st.stdout.contains("quarantined: app sha256:"), "{st}");
    let doc = rig.status(&m).code(0);
    let q = &doc["quarantined"][0];
    assert_eq!(q["service"], "app", "{doc}");
    assert_eq!(q["digest"], bad.as_str(), "{doc}");
    assert!(
        q["since"].as_str().is_some_and(|s| s.ends_with('Z')),
        "{doc}"
    );
    assert!(
        q["reason"].as_str().unwrap().contains("did not start"),
        "{doc}"
    );
    let prom = hal(&rig)
        .args(["status", "--format", "prometheus", &m])
        .code(0)
        .stdout;
    let series =
        format!("hal_module_quarantined{{module=\"{m}\",kind=\"stack\",service=\"app\"}} 1\n");
    assert!(prom.contains(&series), "{prom}");

    // --force tries it once more: it fails again, and is rolled back again.
    let run = hal(&rig)
        .args(["update", "--force", "--timeout", "30s", &m])
        .within(Duration::from_secs(90))
        .code(1);
    assert!(run.stderr.contains("rolled back: "), "{run}");
    assert_eq!(running(&m, "app").0, v1, "{run}");

    // A new digest lifts it: applied, and the quarantine is gone.
    let v3 = repo.publish("good");
    let run = hal(&rig)
        .args(["update", "--timeout", "30s", &m])
        .within(Duration::from_secs(90))
        .code(0);
    assert_eq!(running(&m, "app").0, v3, "{run}");
    let doc = rig.status(&m).code(0);
    assert_eq!(doc["quarantined"], serde_json::json!([]), "{doc}");
    let prom = hal(&rig)
        .args(["status", "--format", "prometheus", &m])
        .code(0)
        .stdout;
    assert!(!prom.contains("hal_module_quarantined{"), "{prom}");
}

/// `hal watch`'s scheduled rounds (`auto_update = "every 5s"`) do not apply
/// a quarantined digest again: the round says so in one line naming it, and
/// keeps the running image; a new digest pushed afterwards is applied.
#[test]
fn the_watch_s_rounds_skip_a_quarantined_digest_and_apply_a_new_one() {
    let Some(rig) = with_registry() else { return };
    let RolledBack {
        repo,
        m,
        before,
        bad,
        ..
    } = Repo::rolled_back(&rig, "quarwatch");

    rig.set_config("auto_update = \"every 5s\"\n");
    let mut w = Watch::spawn(&rig, &[]);
    // The round's one line about the module: not updated, naming the digest.
    let ended = |l: &str| {
        l.starts_with(&format!("{m}: not updated: "))
            || l.starts_with(&format!("{m}: updated"))
            || l.starts_with(&format!("{m}: up to date"))
            || l.starts_with(&format!("{m}: rolled back"))
    };
    let said = w.expect(Duration::from_secs(120), ended);
    assert!(
        said.starts_with(&format!("{m}: not updated: ")) && said.contains("quarantined"),
        "{said}\n{}",
        w.dump()
    );
    assert!(said.contains(&bad), "{said}");
    assert!(said.contains("rolled back at 20"), "{said}");
    w.expect(Duration::from_secs(20), |l| {
        l.starts_with("watch: scheduled update done: ")
    });
    assert_eq!(running(&m, "app"), before, "recreated: {}", w.dump());

    // A new digest pushed afterwards: the next round applies it.
    let v3 = repo.publish("good");
    w.expect(Duration::from_secs(120), |l| {
        l.starts_with(&format!("{m}: updated, active ("))
    });
    assert_eq!(running(&m, "app").0, v3, "{}", w.dump());
    assert_eq!(rig.state_of(&m), "active");
    let (code, _) = w.signal("TERM");
    assert_eq!(code, Some(0), "{}", w.dump());
}

#[test]
fn a_pinned_module_is_left_by_update_all_and_named_only_with_force() {
    let Some(rig) = with_registry() else { return };
    let (mut ra, mut rb) = (Repo::new(&rig, "pinned"), Repo::new(&rig, "free"));
    let (a1, _) = (ra.publish("good"), rb.publish("good"));
    let a = ra.module(&rig, "pinned");
    let b = rb.module(&rig, "free");
    rig.set_config(&format!("[module.{a}]\npin = true\n"));
    hal(&rig)
        .args(["start", "--pull", "always", &a, &b])
        .code(0);
    let a2 = ra.publish("good");
    let b2 = rb.publish("good");

    let run = hal(&rig)
        .args(["--json", "update", "--all", "--timeout", "30s"])
        .within(Duration::from_secs(120))
        .code(0);
    let doc = run.json();
    let of = |name: &str| {
        doc["modules"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["name"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("{name} not in {doc}"))
    };
    assert_eq!(of(&a)["changed"], false, "{run}");
    assert!(of(&a)["warnings"].to_string().contains("pinned"), "{run}");
    assert_eq!(of(&b)["changed"], true, "{run}");
    assert_eq!(running(&a, "app").0, a1, "{run}");
    assert_eq!(running(&b, "app").0, b2, "{run}");

    // Naming it is refused without --force: exit 2, naming both.
    let run = hal(&rig).args(["update", &a]).code(2);
    assert!(
        run.stderr.contains("pin") && run.stderr.contains("--force"),
        "{run}"
    );
    assert_eq!(running(&a, "app").0, a1, "{run}");
    let run = hal(&rig)
        .args(["update", "--force", "--timeout", "30s", &a])
        .within(Duration::from_secs(90))
        .code(0);
    assert_eq!(running(&a, "app").0, a2, "{run}");
}

/// `db` runs `repo`'s image; its v2 removes the file `app`'s healthcheck
/// reads through the directory they share (what another port or protocol
/// does to a client), and stays healthy itself.
fn db_and_app(rig: &Rig, repo: &Repo) -> (String, String) {
    let shared = rig.dir.join("shared");
    std::fs::create_dir_all(&shared).unwrap();
    let mount = format!("{}:/shared", shared.display());
    let db = rig.stack(
        "db",
        stack()
            .service("app")
            .image(&repo.image)
            .runs("if [ \"$BEHAVE\" = good ]; then touch /shared/proto-1; else rm -f /shared/proto-1; fi; touch /tmp/ok; sleep 100000")
            .volume(&mount)
            .healthcheck("/tmp/ok", "interval: 1s\ntimeout: 2s\nretries: 2"),
    );
    let app = rig.stack(
        "app",
        stack()
            .service("app")
            .image(crate::rig::FIXTURE)
            .runs("sleep 100000")
            .volume(&mount)
            .healthcheck("/shared/proto-1", "interval: 1s\ntimeout: 2s\nretries: 2"),
    );
    (db, app)
}

#[test]
fn a_dependent_broken_by_the_new_image_rolls_its_requirement_back() {
    let Some(rig) = with_registry() else { return };
    let mut repo = Repo::new(&rig, "req");
    let v1 = repo.publish("good");
    let (db, app) = db_and_app(&rig, &repo);
    repo.modules.push(db.clone());
    rig.set_config(&format!("[module.{app}]\nrequires = [\"{db}\"]\n"));
    hal(&rig)
        .args(["start", "--pull", "always", &db, &app])
        .within(Duration::from_secs(90))
        .code(0);
    assert_eq!(rig.state_of(&app), "active");
    // v2 is healthy itself, and breaks what requires it.
    let v2 = repo.publish("healthy-but-breaks");
    let run = hal(&rig)
        .args(["update", "--timeout", "20s", &db])
        .within(Duration::from_secs(120))
        .code(1);
    assert!(run.stderr.contains("rolled back: "), "{run}");
    assert!(
        run.stderr.contains(&app),
        "the dependent is not named: {run}"
    );
    assert_eq!(running(&db, "app").0, v1, "{run}");
    assert_ne!(running(&db, "app").0, v2);
    // The dependent is active again.
    let st = rig.status(&app).code(0);
    assert_eq!(st.state(), "active", "{st}");
    // And the digest is quarantined.
    let doc = rig.status(&db).code(0);
    assert_eq!(doc["quarantined"][0]["service"], "app", "{doc}");
}

/// What `gw`'s image does by its `BEHAVE`: `good` listens on port 7000 and
/// turns healthy once it answers there; another (v2) turns healthy without
/// listening: healthy itself, and no longer where its followers look.
const LISTENS: &str = "if [ \"$BEHAVE\" = good ]; then nc -ll -p 7000 -e true & \
while ! nc -w 1 127.0.0.1 7000 </dev/null; do sleep 0.1; done; fi; touch /tmp/ok; sleep 100000";

/// What `tun` does in `gw`'s network namespace: it reaches `gw` on
/// localhost:7000 when it starts, or says so and exits 1.
const PROBES: &str = "nc -w 2 127.0.0.1 7000 </dev/null || { echo cannot reach 127.0.0.1:7000; exit 1; }; \
touch /tmp/ok; sleep 100000";

#[test]
fn a_namespace_follower_broken_by_the_new_image_rolls_its_provider_back() {
    let Some(rig) = with_registry() else { return };
    let mut repo = Repo::new(&rig, "nsgate");
    let v1 = repo.publish("good");
    let gw = rig.name("gw");
    // tun first: the rig removes projects in the order it made them.
    let tun = rig.stack(
        "tun",
        stack()
            .service("vpn")
            .runs(PROBES)
            .network_mode(&format!("container:{gw}-main"))
            .healthcheck("/tmp/ok", "interval: 1s\ntimeout: 2s\nretries: 2"),
    );
    let made = rig.stack(
        "gw",
        stack()
            .service("app")
            .image(&repo.image)
            .runs(LISTENS)
            .line(&format!("container_name: {gw}-main"))
            .healthcheck("/tmp/ok", "interval: 1s\ntimeout: 2s\nretries: 2"),
    );
    assert_eq!(made, gw);
    repo.modules.push(gw.clone());
    hal(&rig).args(["start", "--pull", "always", &gw]).code(0);
    hal(&rig).args(["start", &tun]).code(0);
    assert!(in_current_namespace(&gw, &tun));

    // v2 is healthy itself, and no longer listens where tun looks.
    let v2 = repo.publish("healthy-but-breaks");
    let run = hal(&rig)
        .args(["update", "--timeout", "30s", &gw])
        .within(Duration::from_secs(150))
        .code(1);
    assert!(run.stderr.contains("rolled back: "), "{run}");
    let reason = run
        .stderr
        .lines()
        .find(|l| l.contains("rolled back: "))
        .unwrap_or_default();
    assert!(reason.contains(&tun), "the follower is not named: {run}");
    assert_eq!(running(&gw, "app").0, v1, "{run}");
    assert_ne!(running(&gw, "app").0, v2);
    // The follower is active again, in the namespace of the previous image.
    assert!(in_current_namespace(&gw, &tun), "{run}");
    assert_eq!(rig.state_of(&tun), "active", "{run}");
    let doc = rig.status(&gw).code(0);
    assert_eq!(doc["quarantined"][0]["service"], "app", "{doc}");
}
