//! End to end: `after = [...]`, order only, orders starts, restarts, updates and rescues (and reverses stops) and pulls nothing in; a cycle is refused, naming it.

use std::time::Duration;

use crate::lib_paths::timefmt::{self, Stamp};
use crate::rig::registry::{Previous, Repo, with_registry};
use crate::rig::{self, hal, stack};

#[test]
fn after_orders_starts_and_cycles_are_refused() {
    let Some(rig) = rig::engine() else { return };
    let base = rig.stack(
        "meshware",
        stack().service("mesh").healthy_after(3).keeps_running(),
    );
    let app = rig.stack("app", stack().service("app").keeps_running());
    rig.set_config(&format!(
        "[defaults]\npull = \"never\"\n[module.{app}]\nafter = [\"{base}\"]\n"
    ));
    // Named app first: it still starts only once meshware is active.
    let run = hal(&rig)
        .args(["--json", "module", "start", &app, &base])
        .code(0);
    let doc = run.json();
    assert_eq!(
        doc["modules"][0]["name"],
        app.as_str(),
        "reports keep the order given"
    );
    let gap = rig::created(&app).since(rig::created(&base));
    assert!(
        gap >= std::time::Duration::from_secs(3),
        "app was created {gap:?} after meshware"
    );

    rig.set_config(&format!(
        "[module.{app}]\nafter = [\"{base}\"]\n[module.{base}]\nafter = [\"{app}\"]\n"
    ));
    let run = hal(&rig).args(["status"]).code(2);
    assert!(
        run.stderr
            .contains(&format!("a cycle: {app} → {base} → {app}")),
        "{run}"
    );
}

/// `after` reverses a stop of several modules: `app`, which takes 3 s to stop,
/// is gone before the module it comes after is stopped. Without the order,
/// with jobs to spare, `base` would be gone first.
#[test]
fn after_reverses_stops() {
    let Some(rig) = rig::engine() else { return };
    let base = rig.stack("base", stack().service("base").keeps_running());
    let app = rig.stack(
        "app",
        stack()
            .service("app")
            .runs("trap 'sleep 3; exit 0' TERM; while true; do sleep 1000 & wait; done")
            .keeps_running(),
    );
    rig.set_config(&format!(
        "[defaults]\npull = \"never\"\n[module.{app}]\nafter = [\"{base}\"]\n"
    ));
    hal(&rig).args(["module", "start", &app, &base]).code(0);
    let now = || {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs()
            .to_string()
    };
    let since = now();
    let run = hal(&rig)
        .args(["--yes", "module", "stop", "--jobs", "4", "--all"])
        .code(0);
    let until = (now().parse::<u64>().unwrap() + 1).to_string();
    let died = rig::docker(&[
        "events",
        "--since",
        &since,
        "--until",
        &until,
        "--filter",
        "type=container",
        "--filter",
        "event=die",
        "--format",
        "{{.Actor.Attributes.name}}",
    ]);
    let at = |c: String| died.lines().position(|l| l == c);
    let (app_at, base_at) = (at(format!("{app}-app-1")), at(format!("{base}-base-1")));
    assert!(
        app_at.is_some() && base_at.is_some() && app_at < base_at,
        "{died}\n{run}"
    );
}

/// Turns healthy 3 s after each start of its container, a restarted one too
/// (a restart keeps the container's files: the old mark goes first).
const SLOW: &str = "rm -f /tmp/ready; sleep 3; touch /tmp/ready; sleep 100000";

/// `app` comes after `base`, order only (no `requires`).
fn app_after(base: &str, app: &str) -> String {
    format!("[module.{app}]\nafter = [\"{base}\"]\n")
}

/// When the engine last started the project's running container.
fn started(project: &str) -> Stamp {
    let label = format!("label=com.docker.compose.project={project}");
    let id = rig::docker(&["ps", "-q", "--filter", &label]);
    let id = id.split_whitespace().next().expect("a running container");
    let t = rig::docker(&["inspect", "--format", "{{.State.StartedAt}}", id]);
    timefmt::parse(t.trim()).unwrap()
}

/// `base`'s container was started before `app`'s, by at least the 3 s
/// `base` takes to turn healthy: `app` waited for `base` to be active.
#[track_caller]
fn app_waited(app: &str, base: &str, run: &rig::Run) {
    let gap = started(app).since(started(base));
    assert!(
        gap >= Duration::from_secs(3),
        "{app} started {gap:?} after {base}\n{run}"
    );
}

/// `after` alone orders a restart of several modules, named dependent
/// first: `base` is restarted and active again before `app` is. Without
/// the order, with jobs to spare, both would be restarted at once and `app`
/// started well within the 3 s `base` takes to turn healthy.
///
/// hal restarts module by module in that order, each stopped and started in
/// its own turn, so `app` runs on while `base` restarts; `systemctl restart`
/// of two units ordered so would stop `app` before `base`. That stop side is
/// not asserted here.
#[test]
fn after_alone_orders_a_restart() {
    let Some(rig) = rig::engine() else { return };
    let base = rig.stack(
        "base",
        stack()
            .service("base")
            .runs(SLOW)
            .healthy_while("/tmp/ready")
            .keeps_running(),
    );
    let app = rig.stack("app", stack().service("app").keeps_running());
    rig.set_config(&format!(
        "[defaults]\npull = \"never\"\n{}",
        app_after(&base, &app)
    ));
    hal(&rig).args(["module", "start", &app, &base]).code(0);
    let before = (started(&app), started(&base));
    let run = hal(&rig)
        .args(["module", "restart", "--jobs", "4", &app, &base])
        .code(0);
    assert!(
        started(&app) > before.0 && started(&base) > before.1,
        "not both restarted\n{run}"
    );
    app_waited(&app, &base, &run);
}

/// `after` alone orders an update of several modules, named dependent
/// first: `base`'s new container is active before `app`'s is created.
/// Without the order, with `--jobs 2`, both would be recreated at once.
#[test]
fn after_alone_orders_an_update() {
    let Some(rig) = with_registry() else { return };
    let (app_repo, base_repo) = (Repo::new(&rig, "app"), Repo::new(&rig, "base"));
    app_repo.publish("good");
    base_repo.publish("good");
    let base = rig.stack(
        "base",
        stack()
            .service("app")
            .image(&base_repo.image)
            .runs(SLOW)
            .healthy_while("/tmp/ready"),
    );
    let app = rig.stack("app", app_repo.compose());
    let _previous = Previous(vec![app.clone(), base.clone()]);
    rig.set_config(&app_after(&base, &app));
    hal(&rig)
        .args(["module", "start", "--pull", "always", &app, &base])
        .code(0);
    app_repo.publish("good");
    base_repo.publish("good");
    let run = hal(&rig)
        .args(["--json", "module", "update", "--jobs", "2", &app, &base])
        .within(Duration::from_secs(90))
        .code(0);
    let doc = run.json();
    for row in doc["modules"].as_array().unwrap() {
        assert_eq!(row["changed"], true, "{run}");
    }
    app_waited(&app, &base, &run);
}

/// `after` alone orders a rescue of several modules, named dependent first:
/// `base` is recreated and active before `app` is. Without the order, with
/// the default jobs, both would be recreated at once.
#[test]
fn after_alone_orders_a_rescue() {
    let Some(rig) = rig::engine() else { return };
    let base = rig.stack(
        "base",
        stack()
            .service("base")
            .runs(SLOW)
            .healthy_while("/tmp/ready"),
    );
    let app = rig.stack("app", stack().service("app"));
    rig.set_config(&format!(
        "[defaults]\npull = \"never\"\n{}",
        app_after(&base, &app)
    ));
    hal(&rig).args(["module", "start", &app, &base]).code(0);
    let before = (rig::ids(&app), rig::ids(&base));
    let run = hal(&rig)
        .args(["--yes", "module", "rescue", &app, &base])
        .code(0);
    assert!(
        rig::ids(&app) != before.0 && rig::ids(&base) != before.1,
        "not both recreated\n{run}"
    );
    app_waited(&app, &base, &run);
}

/// `after` alone never pulls a module in (systemd's `After=` does not
/// either): a start of `app` alone starts `app`, and leaves `base`, which
/// it comes after, stopped. With a `requires`, `base` would be started first;
/// named in the same call, it is waited for (`after_orders_starts_and_cycles_are_refused`).
#[test]
fn after_alone_pulls_nothing_in() {
    let Some(rig) = rig::engine() else { return };
    let base = rig.stack("base", stack().service("base"));
    let app = rig.stack("app", stack().service("app"));
    rig.set_config(&format!(
        "[defaults]\npull = \"never\"\n{}",
        app_after(&base, &app)
    ));
    let run = hal(&rig).args(["--json", "module", "start", &app]).code(0);
    let doc = run.json();
    let rows = doc["modules"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "{run}");
    assert_eq!(rows[0]["name"], app.as_str(), "{run}");
    assert_eq!(rows[0]["state"], "active", "{run}");
    assert!(!run.stderr.contains("starting first"), "{run}");
    assert!(rig::containers(&base).is_empty(), "{run}");
    assert_eq!(rig.status(&base).state(), "inactive");
}
