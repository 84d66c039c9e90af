//! End to end: `hal watch`'s scheduled updates (`auto_update`) against the registry on 127.0.0.1:5000, and the update metrics (`hal_module_update_available`, `hal_module_rollbacks_total`) in `status --format prometheus` and `watch --metrics`.
//!
//! The schedule under test is `every 5s` (a form operators may use too): the
//! slot comes within the test without a clock of hal's own to fake.

use std::time::Duration;

use crate::rig::registry::{Repo, with_registry};
use crate::rig::watch::{Watch, lines_about};
use crate::rig::{Rig, docker, eventually, hal, need};

/// The image id and container id of the module's `app`.
pub(crate) fn running(module: &str) -> (String, String) {
    let project = format!("label=com.docker.compose.project={module}");
    let ids = docker(&["ps", "-aq", "--filter", &project]);
    let Some(id) = ids.lines().next() else {
        return Default::default();
    };
    let out = docker(&["inspect", "-f", "{{.Image}} {{.Id}}", id]);
    let (image, id) = out.trim().split_once(' ').unwrap_or_default();
    (image.to_string(), id.to_string())
}

#[test]
fn the_watch_updates_on_its_schedule_and_leaves_an_opted_out_module() {
    let Some(rig) = with_registry() else { return };
    let (mut ra, mut rb) = (Repo::new(&rig, "auto"), Repo::new(&rig, "kept"));
    let (a1, b1) = (ra.publish("good"), rb.publish("good"));
    let a = ra.module(&rig, "auto");
    let b = rb.module(&rig, "kept");
    rig.set_config(&format!(
        "auto_update = \"every 5s\"\n\n[module.{b}]\nauto_update = false\n"
    ));
    hal(&rig)
        .args(["start", "--pull", "always", &a, &b])
        .code(0);
    let before_b = running(&b);
    assert_eq!((running(&a).0, before_b.0.clone()), (a1, b1.clone()));
    let a2 = ra.publish("good");
    rb.publish("good");

    let mut w = Watch::spawn(&rig, &[]);
    w.expect(Duration::from_secs(10), |l| {
        l.starts_with("watch: scheduled updates every 5s; next at ")
    });
    let due = w.expect(Duration::from_secs(20), |l| {
        l.starts_with("watch: scheduled update: ")
    });
    assert!(due.contains(&a) && !due.contains(&b), "{due}");
    let done = w.expect(Duration::from_secs(90), |l| {
        l.starts_with(&format!("{a}: updated, active ("))
    });
    assert!(done.contains("app "), "{done}");
    w.expect(Duration::from_secs(10), |l| {
        l.starts_with("watch: scheduled update done: 1 updated, 0 up to date, 0 failed")
    });
    assert_eq!(running(&a).0, a2, "{}", w.dump());
    assert_eq!(rig.state_of(&a), "active");
    // The update is over (its line said so): the opted-out module was never touched.
    assert_eq!(running(&b), before_b, "{b} was recreated");
    assert!(lines_about(&w.seen, &b, "").is_empty(), "{}", w.dump());
    // The next slot finds nothing new.
    w.expect(Duration::from_secs(20), |l| {
        l.starts_with(&format!("{a}: up to date ("))
    });
    let (code, _) = w.signal("TERM");
    assert_eq!(code, Some(0), "{}", w.dump());
}

/// `promtool check metrics` on a text: its complaints, or `None`.
fn promtool(rig: &Rig, text: &str) -> Option<String> {
    let path = rig.dir.join("update.prom");
    std::fs::write(&path, text).unwrap();
    crate::fleet::promtool_metrics(&path)
}

#[test]
fn the_metrics_say_an_available_update_and_each_rollback() {
    let Some(rig) = with_registry() else { return };
    let Some(()) = need("promtool", "--version") else {
        return;
    };
    let mut repo = Repo::new(&rig, "metric");
    repo.publish("good");
    let m = repo.module(&rig, "metric");
    hal(&rig).args(["start", "--pull", "always", &m]).code(0);
    let metrics = || {
        hal(&rig)
            .args(["status", "--format", "prometheus", &m])
            .code(0)
            .stdout
    };
    let available =
        |v: u8| format!("hal_module_update_available{{module=\"{m}\",kind=\"stack\"}} {v}\n");
    let rollbacks =
        |v: u8| format!("hal_module_rollbacks_total{{module=\"{m}\",kind=\"stack\"}} {v}\n");
    // Never checked: no sample; no rollback yet: 0.
    let text = metrics();
    assert!(!text.contains("hal_module_update_available{"), "{text}");
    assert!(text.contains(&rollbacks(0)), "{text}");
    hal(&rig).args(["update", "--check", &m]).code(0);
    assert!(metrics().contains(&available(0)), "{}", metrics());
    repo.publish("good");
    hal(&rig).args(["update", "--check", &m]).code(3);
    let text = metrics();
    assert!(text.contains(&available(1)), "{text}");
    assert_eq!(promtool(&rig, &text), None, "{text}");

    // A bad image: rolled back, counted.
    repo.publish("exit");
    hal(&rig)
        .args(["update", "--timeout", "30s", &m])
        .within(Duration::from_secs(90))
        .code(1);
    let text = metrics();
    assert!(text.contains(&rollbacks(1)), "{text}");

    // A good image applied: the module runs what its registry serves, so no
    // update is available any more (the last check's 1 no longer holds).
    repo.publish("good");
    hal(&rig)
        .args(["update", "--timeout", "30s", &m])
        .within(Duration::from_secs(90))
        .code(0);
    let text = metrics();
    assert!(text.contains(&available(0)), "{text}");
    assert!(text.contains(&rollbacks(1)), "{text}");

    // The watch's metrics file says the same.
    let (_w, path) = Watch::with_metrics(&rig);
    let read = || std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        eventually(Duration::from_secs(10), || read().contains(&rollbacks(1))
            && read().contains("hal_module_state{")),
        "{}",
        read()
    );
    assert_eq!(promtool(&rig, &read()), None, "{}", read());
}

/// One rule with `hal update --max-failures`: a module refused at its start
/// limit is "not updated", not a failure, and the round goes on to the next
/// module even with `auto_update_max_failures = 1`.
#[test]
fn a_module_refused_at_its_limit_is_not_updated_and_the_round_goes_on() {
    let Some(rig) = with_registry() else { return };
    let (mut ra, mut rb) = (Repo::new(&rig, "held"), Repo::new(&rig, "next"));
    ra.publish("good");
    rb.publish("good");
    let a = ra.module(&rig, "a");
    let b = rb.module(&rig, "b");
    rig.set_config(&format!(
        "auto_update = \"every 5s\"\nauto_update_max_failures = 1\n\n[defaults]\npull = \"never\"\n\n\
         [module.{a}]\nrestart = {{ burst = 1, interval = \"10m\" }}\n"
    ));
    hal(&rig)
        .args(["start", "--pull", "always", &a, &b])
        .code(0);
    let before_a = running(&a);
    ra.publish("good");
    let b2 = rb.publish("good");

    let mut w = Watch::spawn(&rig, &[]);
    let due = w.expect(Duration::from_secs(20), |l| {
        l.starts_with("watch: scheduled update: ")
    });
    let (at_a, at_b) = (due.find(&a), due.find(&b));
    assert!(at_a.is_some() && at_a < at_b, "{a} is not first: {due}");
    let refused = w.expect(Duration::from_secs(60), |l| {
        l.starts_with(&format!("{a}: ")) && !l.ends_with(": updating (scheduled)")
    });
    assert!(
        refused.starts_with(&format!("{a}: not updated: ")) && refused.contains("start limit"),
        "{refused}\n{}",
        w.dump()
    );
    w.expect(Duration::from_secs(90), |l| {
        l.starts_with(&format!("{b}: updated, active ("))
    });
    w.expect(Duration::from_secs(10), |l| {
        l.starts_with(
            "watch: scheduled update done: 1 updated, 0 up to date, 0 failed, 1 not updated",
        )
    });
    assert_eq!(running(&a), before_a, "{a} recreated at its limit");
    assert_eq!(running(&b).0, b2, "{}", w.dump());
    let (code, _) = w.signal("TERM");
    assert_eq!(code, Some(0), "{}", w.dump());
}

/// A module the watch holds (its repair refused at the start limit) is
/// skipped by the scheduled update: nothing is pulled or recreated for it.
#[test]
fn a_held_module_is_skipped_by_the_scheduled_update() {
    let Some(rig) = with_registry() else { return };
    let mut ra = Repo::new(&rig, "held");
    let a1 = ra.publish("good");
    let a = ra.module(&rig, "a");
    rig.set_config(&format!(
        "auto_update = \"every 5s\"\n\n[defaults]\npull = \"never\"\n\n\
         [module.{a}]\nrestart = {{ burst = 1, interval = \"10m\" }}\n"
    ));
    hal(&rig).args(["start", "--pull", "always", &a]).code(0);
    // It dies, at its limit: the watch's repair is refused and it is held.
    docker(&["kill", &running(&a).1]);
    ra.publish("good");

    let mut w = Watch::spawn(&rig, &[]);
    w.expect(Duration::from_secs(30), |l| {
        l.starts_with(&format!("{a}: held: "))
    });
    w.expect(Duration::from_secs(30), |l| {
        l == format!("{a}: not updated: it is held (its start limit is hit)")
    });
    assert_eq!(
        running(&a).0,
        a1,
        "{a} was updated while held: {}",
        w.dump()
    );
    let (code, _) = w.signal("TERM");
    assert_eq!(code, Some(0), "{}", w.dump());
}
