//! End to end: `hal update` against the registry on 127.0.0.1:5000: only what changed is recreated, and an image that is not active in time is rolled back.

use std::time::Duration;

use crate::rig::registry::{BEHAVES, Previous, Repo, local_id, running, with_registry};
use crate::rig::{self, FIXTURE, Rig, docker, hal, stack};

/// A stack whose `app` runs `repo`'s image behind a healthcheck.
fn gated(rig: &Rig, short: &str, repo: &Repo) -> String {
    let s = stack()
        .service("app")
        .image(&repo.image)
        .runs(BEHAVES)
        .healthcheck("/tmp/ok", "interval: 1s\ntimeout: 2s\nretries: 2");
    rig.stack(short, s)
}

#[test]
fn an_image_that_exits_is_rolled_back() {
    let Some(rig) = with_registry() else { return };
    let (repo, m, v1) = Repo::serving(&rig, "exits");
    assert_eq!(running(&m, "app").0, v1);
    repo.publish("exit");
    let run = hal(&rig)
        .args(["update", "--timeout", "30s", &m])
        .within(Duration::from_secs(90))
        .code(1);
    assert!(
        run.stderr
            .contains(&format!("rolled back: {m}/app (new image did not start")),
        "{run}"
    );
    assert_eq!(running(&m, "app").0, v1, "not back on v1: {run}");
    assert_eq!(local_id(&repo.image).as_deref(), Some(v1.as_str()));
    assert_eq!(
        local_id(&format!("hal-previous/{m}:app")).as_deref(),
        Some(v1.as_str())
    );
    let st = rig.status(&m).code(0);
    assert_eq!(st.state(), "active", "{st}");
    let why = rig.status(&m).reason().to_string();
    assert!(why.contains("rolled back app at "), "{why}");
    assert!(why.contains("new image did not start"), "{why}");
    // The failed container's last words are kept, as for a failed start.
    let st = hal(&rig).args(["status", &m]).code(0);
    assert!(st.stdout.contains("bad image"), "{st}");
    // reset-failed forgets the rollback, and keeps the digest's quarantine
    // (docs/decisions.md): the status still says it will not apply it again.
    hal(&rig).args(["reset-failed", &m]).code(0);
    let why = rig.status(&m).reason().to_string();
    assert!(!why.contains("rolled back app at "), "{why}");
    assert!(why.contains("quarantined: app "), "{why}");
}

#[test]
fn an_unhealthy_image_is_rolled_back_then_a_good_one_applied() {
    let Some(rig) = with_registry() else { return };
    let (repo, m, v1) = Repo::serving(&rig, "sick");
    let v2 = repo.publish("unhealthy");
    let run = hal(&rig)
        .args(["--json", "update", "--timeout", "15s", &m])
        .within(Duration::from_secs(90))
        .code(1);
    let doc = &run.json()["modules"][0];
    assert_eq!(doc["rolled_back"], true, "{run}");
    assert_eq!(doc["state"], "active", "{run}");
    assert!(
        doc["reason"]
            .as_str()
            .unwrap()
            .contains("new image not active after 15s"),
        "{run}"
    );
    assert!(
        doc["to"]["app"].is_string() && doc["from"]["app"] != doc["to"]["app"],
        "{run}"
    );
    assert_eq!(running(&m, "app").0, v1);
    // A good image is applied, and the rollback is over.
    let v3 = repo.publish("good");
    let run = hal(&rig).args(["--json", "update", &m]).code(0);
    let doc = &run.json()["modules"][0];
    assert_eq!(doc["changed"], true, "{run}");
    assert_eq!(doc["rolled_back"], false, "{run}");
    assert_eq!(running(&m, "app").0, v3);
    assert!(!rig.status(&m).reason().contains("rolled back"));
    assert_eq!(
        local_id(&format!("hal-previous/{m}:app")).as_deref(),
        Some(v1.as_str()),
        "the tag keeps what ran before the update"
    );
    // The next update moves the tag onto v3; v2 was never kept.
    let v4 = repo.publish("good");
    hal(&rig).args(["update", &m]).code(0);
    assert_eq!(running(&m, "app").0, v4);
    assert_eq!(
        local_id(&format!("hal-previous/{m}:app")).as_deref(),
        Some(v3.as_str())
    );
    assert_ne!(v2, v3);
}

#[test]
fn an_unreachable_registry_recreates_nothing() {
    let Some(rig) = with_registry() else { return };
    // Nothing listens on port 5999: every pull fails at once.
    let image = format!("127.0.0.1:5999/hal/{}-gone:latest", rig.prefix);
    docker(&["tag", FIXTURE, &image]);
    let m = rig.stack("gone", stack().service("app").image(&image));
    hal(&rig).args(["start", &m]).code(0);
    let before = running(&m, "app");
    let run = hal(&rig).args(["update", &m]).code(0);
    assert!(
        run.stderr.contains("hal: warning:")
            && run.stderr.contains("pull failed, running cached image"),
        "{run}"
    );
    // Nothing was asked of the registry: never "up to date" (issue 52).
    assert!(
        run.stdout.contains(&format!(
            "{m}: not updated: the pull failed, the cached image runs"
        )),
        "{run}"
    );
    assert!(!run.stdout.contains("up to date"), "{run}");
    assert_eq!(running(&m, "app"), before, "recreated: {run}");
    let st = rig.status(&m).code(0);
    assert_eq!(st.state(), "active");
    docker(&["rmi", &image]);
}

#[test]
fn check_lists_a_newer_digest_and_pulls_nothing() {
    let Some(rig) = with_registry() else { return };
    let (repo, m, v1) = Repo::serving(&rig, "check");
    let run = hal(&rig).args(["update", "--check", &m]).code(0);
    assert!(run.stdout.contains(&format!("{m}: up to date")), "{run}");
    let v2 = repo.publish("good");
    let run = hal(&rig).args(["--json", "update", "--check", &m]).code(3);
    let doc = &run.json()["modules"][0];
    assert_eq!(doc["update_available"], true, "{run}");
    assert_eq!(doc["services"][0]["changed"], true, "{run}");
    assert_eq!(doc["changed"], false, "{run}");
    let human = hal(&rig).args(["update", "--dry-run", &m]).code(3);
    assert!(
        human
            .stdout
            .contains(&format!("{m}: update available: app")),
        "{human}"
    );
    // Nothing was pulled or recreated.
    assert!(local_id(&v2).is_none(), "--check pulled {v2}");
    assert_eq!(local_id(&repo.image).as_deref(), Some(v1.as_str()));
    assert_eq!(running(&m, "app").0, v1);
}

/// A registry hal cannot ask is no "up to date": `--check` says it cannot
/// check (the image, so its registry, and why), `update_available` and the
/// service's `to` are null, and it exits 1.
#[test]
fn check_with_a_registry_it_cannot_ask_says_it_cannot_check() {
    let Some(rig) = rig::engine() else { return };
    let repo = Repo::nowhere(&rig, "nowhere");
    let m = rig.stack(
        "nowhere",
        stack().service("app").image(&repo.image).keeps_running(),
    );
    hal(&rig).args(["start", &m]).code(0);
    let run = hal(&rig).args(["update", "--check", &m]).code(1);
    assert!(!run.stdout.contains("up to date"), "{run}");
    let said = format!(
        "hal: update {m}: cannot check: could not ask the registry about {}: ",
        repo.image
    );
    assert!(run.stderr.contains(&said), "{run}");
    assert!(run.stderr.contains("127.0.0.1:5999/v2/"), "{run}");
    let run = hal(&rig).args(["--json", "update", "--check", &m]).code(1);
    let doc = &run.json()["modules"][0];
    assert!(doc["update_available"].is_null(), "{run}");
    assert!(doc.get("update_available").is_some(), "{run}");
    assert_eq!(doc["ok"], false, "{run}");
    assert_eq!(doc["exit_code"], 1, "{run}");
    let reason = doc["reason"].as_str().unwrap_or_default();
    assert!(
        reason.starts_with("cannot check: could not ask the registry about 127.0.0.1:5999/"),
        "{run}"
    );
    assert_eq!(doc["services"][0]["service"], "app", "{run}");
    assert!(doc["services"][0]["to"].is_null(), "{run}");
    assert_eq!(doc["services"][0]["changed"], false, "{run}");
}

#[test]
fn all_stops_after_the_first_rollback() {
    let Some(rig) = with_registry() else { return };
    let repos: Vec<Repo> = ["a", "b", "c"].iter().map(|s| Repo::new(&rig, s)).collect();
    let mut modules = Vec::new();
    let mut first = Vec::new();
    for (short, repo) in ["a", "b", "c"].iter().zip(&repos) {
        first.push(repo.publish("good"));
        modules.push(gated(&rig, short, repo));
    }
    let _previous = Previous(modules.clone());
    hal(&rig)
        .args(["start", "--pull", "always", "--all"])
        .code(0);
    let before: Vec<_> = modules.iter().map(|m| running(m, "app")).collect();
    repos[0].publish("exit");
    repos[1].publish("good");
    repos[2].publish("good");
    let run = hal(&rig)
        .args(["--json", "update", "--all", "--timeout", "30s"])
        .within(Duration::from_secs(90))
        .code(1);
    let doc = run.json();
    let rows = doc["modules"].as_array().unwrap();
    assert_eq!(rows.len(), 3, "{run}");
    assert_eq!(rows[0]["name"], modules[0].as_str(), "{run}");
    assert_eq!(rows[0]["rolled_back"], true, "{run}");
    for (row, m) in rows[1..].iter().zip(&modules[1..]) {
        assert_eq!(row["name"], m.as_str(), "{run}");
        assert_eq!(row["skipped"], true, "{run}");
        assert_eq!(row["changed"], false, "{run}");
    }
    assert_eq!(running(&modules[0], "app").0, first[0]);
    for i in 1..3 {
        assert_eq!(
            running(&modules[i], "app"),
            before[i],
            "{} touched",
            modules[i]
        );
    }
    // For people: a line per module, then the summary table.
    let human = hal(&rig).args(["update", "--all", "--check"]).code(3);
    assert!(
        human.stdout.contains("MODULE") && human.stdout.contains("available"),
        "{human}"
    );
}

/// Run with compose v2 and v1: `up --no-deps SERVICE` recreates the service alone.
fn sibling_kept(compose: Option<&str>) {
    let Some(rig) = with_registry() else { return };
    let repo = Repo::new(&rig, "app");
    let side = Repo::new(&rig, "side");
    repo.publish("good");
    side.publish("good");
    let s = stack()
        .service("app")
        .image(&repo.image)
        .runs(BEHAVES)
        .healthcheck("/tmp/ok", "interval: 1s\ntimeout: 2s\nretries: 2")
        .service("side")
        .image(&side.image)
        .runs(BEHAVES)
        .healthcheck("/tmp/ok", "interval: 1s\ntimeout: 2s\nretries: 2")
        .depends_on_healthy("app");
    let m = rig.stack("pair", s);
    let _previous = Previous(vec![m.clone()]);
    let hal_ = |args: &[&str]| {
        let mut h = hal(&rig);
        if let Some(c) = compose {
            h = h.env("HAL_COMPOSE", c);
        }
        for a in args {
            h = h.arg(a);
        }
        h
    };
    hal_(&["start", "--pull", "always", &m]).code(0);
    let app = running(&m, "app");
    let sibling = running(&m, "side");
    let v2 = repo.publish("good");
    let run = hal_(&["--json", "update", &m]).code(0);
    let doc = &run.json()["modules"][0];
    assert_eq!(doc["changed"], true, "{run}");
    let changed: Vec<&str> = doc["services"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["changed"] == true)
        .map(|s| s["service"].as_str().unwrap())
        .collect();
    assert_eq!(changed, ["app"], "{run}");
    let now = running(&m, "app");
    assert_eq!(now.0, v2);
    assert_ne!(now.1, app.1, "app not recreated");
    assert_eq!(
        running(&m, "side"),
        sibling,
        "the sibling was recreated: {run}"
    );
}

#[test]
fn a_sibling_whose_image_did_not_change_keeps_its_container() {
    sibling_kept(None);
}

#[test]
fn a_sibling_keeps_its_container_with_compose_v1() {
    if rig::need("docker-compose", "version").is_none() {
        return;
    }
    sibling_kept(Some("docker-compose"));
}

#[test]
fn a_restart_that_pulls_a_broken_image_rolls_back() {
    let Some(rig) = with_registry() else { return };
    rig.set_config("[defaults]\npull = \"always\"\n");
    let repo = Repo::new(&rig, "restart");
    let v1 = repo.publish("good");
    let m = gated(&rig, "restart", &repo);
    let _previous = Previous(vec![m.clone()]);
    hal(&rig).args(["start", &m]).code(0);
    repo.publish("exit");
    let run = hal(&rig)
        .args(["restart", "--timeout", "30s", &m])
        .within(Duration::from_secs(90))
        .code(1);
    assert!(
        run.stderr.contains(&format!(
            "restart {m}: rolled back: {m}/app (new image did not start"
        )),
        "{run}"
    );
    assert_eq!(running(&m, "app").0, v1);
    let st = rig.status(&m).code(0);
    assert_eq!(st.state(), "active", "{st}");
    assert!(rig.status(&m).reason().contains("rolled back app"), "{st}");
}

#[test]
fn an_update_counts_as_a_start_only_when_it_recreates() {
    let Some(rig) = with_registry() else { return };
    rig.set_config("[defaults]\npull = \"never\"\nrestart = { burst = 2, interval = \"10m\" }\n");
    let repo = Repo::new(&rig, "limit");
    let v1 = repo.publish("good");
    let m = gated(&rig, "limit", &repo);
    let _previous = Previous(vec![m.clone()]);
    let used = || {
        let st = rig.status(&m);
        st["limit"]["used"].as_u64().unwrap()
    };
    hal(&rig).args(["start", "--pull", "always", &m]).code(0);
    assert_eq!(used(), 1);
    // An update that changes nothing counts nothing.
    let run = hal(&rig).args(["update", &m]).code(0);
    assert!(run.stdout.contains(&format!("{m}: up to date")), "{run}");
    assert_eq!(used(), 1, "{run}");
    // One that recreates counts one start.
    let v2 = repo.publish("good");
    hal(&rig).args(["update", &m]).code(0);
    assert_eq!(running(&m, "app").0, v2);
    assert_eq!(used(), 2);
    // At the limit it is refused before anything is pulled or recreated.
    let v3 = repo.publish("good");
    let before = running(&m, "app");
    let run = hal(&rig).args(["update", &m]).code(5);
    assert!(run.stderr.contains("start limit hit"), "{run}");
    assert_eq!(running(&m, "app"), before, "recreated at the limit: {run}");
    assert!(local_id(&v3).is_none(), "pulled at the limit: {run}");
    // --force updates, as for start.
    hal(&rig).args(["update", "--force", &m]).code(0);
    assert_eq!(running(&m, "app").0, v3);
    assert_ne!(v1, v3);
}

/// `--max-failures` counts what its help says (rolled back, or could not
/// pull): a module refused at its start limit is "not updated", and the next
/// module is still updated.
#[test]
fn a_module_refused_at_its_limit_is_not_a_failure() {
    let Some(rig) = with_registry() else { return };
    let (ra, rb) = (Repo::new(&rig, "held"), Repo::new(&rig, "next"));
    ra.publish("good");
    rb.publish("good");
    let (a, b) = (gated(&rig, "a", &ra), gated(&rig, "b", &rb));
    let _previous = Previous(vec![a.clone(), b.clone()]);
    rig.set_config(&format!(
        "[defaults]\npull = \"never\"\n\n[module.{a}]\nrestart = {{ burst = 1, interval = \"10m\" }}\n"
    ));
    hal(&rig)
        .args(["start", "--pull", "always", &a, &b])
        .code(0);
    let before = running(&a, "app");
    ra.publish("good");
    let b2 = rb.publish("good");
    let run = hal(&rig)
        .args(["--json", "update", "--max-failures", "1", &a, &b])
        .within(Duration::from_secs(90))
        .code(5);
    let doc = run.json();
    let rows = doc["modules"].as_array().unwrap();
    assert_eq!(rows[0]["name"], a.as_str(), "{run}");
    assert_eq!(rows[0]["changed"], false, "{run}");
    assert_eq!(rows[1]["name"], b.as_str(), "{run}");
    assert_eq!(
        rows[1]["skipped"], false,
        "{b} skipped after a refusal: {run}"
    );
    assert_eq!(rows[1]["changed"], true, "{run}");
    assert_eq!(running(&a, "app"), before, "{a} recreated at its limit");
    assert_eq!(running(&b, "app").0, b2, "{run}");
}

/// The previous image's tag keeps it from `docker image prune` (dangling
/// images only), not from `prune -a` while no container runs it: what the
/// update's docs say (`docker system prune [-a]` prunes images the same way).
#[test]
fn the_previous_image_survives_prune_but_not_prune_a() {
    let Some(rig) = with_registry() else { return };
    let (repo, m, v1) = Repo::serving(&rig, "prune");
    let v2 = repo.publish("good");
    hal(&rig).args(["update", &m]).code(0);
    assert_eq!(running(&m, "app").0, v2);
    let previous = format!("hal-previous/{m}:app");
    assert_eq!(local_id(&previous).as_deref(), Some(v1.as_str()));
    // This test's first image alone (its label): other tests' images are not touched.
    let only_v1 = format!("label=hal.test.image={} 0", repo.image);
    docker(&["image", "prune", "-f", "--filter", &only_v1]);
    assert_eq!(
        local_id(&previous).as_deref(),
        Some(v1.as_str()),
        "docker image prune removed the previous image"
    );
    docker(&["image", "prune", "-a", "-f", "--filter", &only_v1]);
    assert_eq!(
        local_id(&previous),
        None,
        "prune -a kept an image no container runs: the docs say it does not"
    );
}

/// A start under `pull = "always"` whose pull brings a new image goes through
/// the update's gate and rolls back; `--no-wait` waits for nothing and is not gated.
#[test]
fn a_start_that_pulls_a_broken_image_rolls_back_but_not_with_no_wait() {
    let Some(rig) = with_registry() else { return };
    rig.set_config("[defaults]\npull = \"always\"\n");
    let repo = Repo::new(&rig, "start");
    let v1 = repo.publish("good");
    let m = gated(&rig, "start", &repo);
    let _previous = Previous(vec![m.clone()]);
    hal(&rig).args(["start", &m]).code(0);
    hal(&rig).args(["stop", &m]).code(0);
    repo.publish("exit");
    let run = hal(&rig)
        .args(["start", "--timeout", "30s", &m])
        .within(Duration::from_secs(90))
        .code(1);
    assert!(
        run.stderr.contains(&format!(
            "start {m}: rolled back: {m}/app (new image did not start"
        )),
        "{run}"
    );
    assert_eq!(running(&m, "app").0, v1, "not back on v1: {run}");
    let st = rig.status(&m).code(0);
    assert_eq!(st.state(), "active", "{st}");
    assert!(rig.status(&m).reason().contains("rolled back app"), "{st}");

    // --no-wait: the new image runs, however it fares; nothing is rolled back.
    hal(&rig).args(["stop", &m]).code(0);
    let v3 = repo.publish("exit");
    let run = hal(&rig).args(["start", "--no-wait", &m]).code(0);
    assert_eq!(running(&m, "app").0, v3, "--no-wait was gated: {run}");
    assert!(!run.stderr.contains("rolled back"), "{run}");
    hal(&rig).args(["stop", &m]).code(0);
}
