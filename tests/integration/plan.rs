//! End to end: `hal plan` says what the next start does to each service, checked against what the start then did (the oracle), and touches nothing.

mod bad_input;
mod dry_runs;
mod fails;
mod fixture_stack;
mod kept;
mod model;
mod on_fixtures;
mod reasons;
mod waits;

use std::collections::BTreeMap;

use crate::rig::{self, FIXTURE, Rig, docker, hal};
use model::{Edit, Model, Svc};

/// Each service's containers, as the engine says: id, state, when it last started.
fn snapshot(project: &str) -> BTreeMap<String, Vec<(String, String, String)>> {
    let label = format!("label=com.docker.compose.project={project}");
    let ids = docker(&["ps", "-aq", "--filter", &label]);
    let mut out: BTreeMap<String, Vec<(String, String, String)>> = BTreeMap::new();
    if ids.trim().is_empty() {
        return out;
    }
    let format = "{{index .Config.Labels \"com.docker.compose.service\"}} {{.Id}} {{.State.Status}} {{.State.StartedAt}}";
    let mut args = vec!["inspect", "--format", format];
    args.extend(ids.split_whitespace());
    for line in docker(&args).lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if let [service, id, state, started] = f[..] {
            let c = (id.to_string(), state.to_string(), started.to_string());
            out.entry(service.to_string()).or_default().push(c);
        }
    }
    out
}

/// What happened to each service between two snapshots, in the plan's words.
fn happened(
    before: &BTreeMap<String, Vec<(String, String, String)>>,
    after: &BTreeMap<String, Vec<(String, String, String)>>,
) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let none = Vec::new();
    for service in before.keys().chain(after.keys()) {
        let (b, a) = (
            before.get(service).unwrap_or(&none),
            after.get(service).unwrap_or(&none),
        );
        let gone = b.iter().filter(|c| !a.iter().any(|x| x.0 == c.0)).count();
        let new = a.iter().filter(|c| !b.iter().any(|x| x.0 == c.0)).count();
        let started = b
            .iter()
            .any(|c| a.iter().any(|x| x.0 == c.0 && (x.2 != c.2 || x.1 != c.1)));
        let action = match (gone > 0, new > 0) {
            (true, true) => "recreate",
            (false, true) => "create",
            (true, false) => "remove",
            (false, false) if started => "start",
            (false, false) => "keep",
        };
        out.insert(service.clone(), action.to_string());
    }
    out
}

/// Each service's predicted action in a plan document.
fn predicted(doc: &serde_json::Value) -> BTreeMap<String, String> {
    actions(&doc["modules"][0]["services"])
}

/// Each service's action in one module's plan entry (`services` of
/// `hal plan --json`, `plan.services` of a dry run's entry).
fn actions(services: &serde_json::Value) -> BTreeMap<String, String> {
    services
        .as_array()
        .into_iter()
        .flatten()
        .map(|s| {
            let action = s["action"].as_str().unwrap_or("?").to_string();
            (s["service"].as_str().unwrap_or("?").to_string(), action)
        })
        .collect()
}

/// The engine's clock now, for `docker events --since/--until`.
fn engine_now() -> String {
    docker(&["system", "info", "--format", "{{.SystemTime}}"])
        .trim()
        .to_string()
}

/// The project's engine events between two instants, healthcheck execs aside.
fn events(m: &str, since: &str, until: &str) -> Vec<String> {
    let label = format!("label=com.docker.compose.project={m}");
    let events = docker(&[
        "events",
        "--since",
        since,
        "--until",
        until,
        "--filter",
        &label,
        "--format",
        "{{.Type}} {{.Action}} {{.Actor.Attributes.name}}",
    ]);
    events
        .lines()
        .filter(|l| !l.contains("exec_"))
        .map(str::to_string)
        .collect()
}

/// A second image for the fixture's tag edits: the fixture with a label (no network needed).
fn alt_image(rig: &Rig) -> String {
    let tag = format!("hal-plan-alt:{}", rig.name("alt").to_lowercase());
    let dir = std::env::temp_dir().join(rig.name("alt-build"));
    std::fs::create_dir_all(&dir).unwrap();
    let file = format!("FROM {FIXTURE}\nLABEL hal.plan.alt=\"{tag}\"\n");
    std::fs::write(dir.join("Dockerfile"), file).unwrap();
    let out = rig::docker::cli()
        .args(["build", "-q", "-t", &tag])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "docker build: {out:?}");
    let _ = std::fs::remove_dir_all(&dir);
    tag
}

/// A stack the oracle plays its edits on.
trait Scripted {
    /// Plays `edit` on module `m`'s files or on the engine.
    fn apply(&mut self, edit: &Edit, rig: &Rig, m: &str);
}

impl Scripted for Model {
    fn apply(&mut self, edit: &Edit, rig: &Rig, m: &str) {
        Model::apply(self, edit, rig, m);
    }
}

/// Plays `edits` on a stack of `model`'s shape, each planned then started,
/// and returns the cases where the plan and the start disagreed, and how many were checked.
fn oracle(rig: &Rig, short: &str, mut model: Model, edits: &[Edit]) -> (Vec<String>, usize) {
    let m = rig.stack(short, model.yaml());
    model.files(rig, &m);
    play(rig, short, &m, &mut model, edits)
}

/// Starts module `m` (written), then plays each edit, plans, starts, and
/// compares the plan with what the engine shows happened.
fn play(
    rig: &Rig,
    short: &str,
    m: &str,
    stack: &mut dyn Scripted,
    edits: &[Edit],
) -> (Vec<String>, usize) {
    let first = hal(rig).args(["module", "start", m]).run();
    if first.code != Some(0) {
        return (vec![format!("{short}: the first start failed\n{first}")], 1);
    }
    let (mut wrong, mut cases) = (Vec::new(), 0);
    for edit in edits {
        stack.apply(edit, rig, m);
        let plan = hal(rig).args(["--json", "plan", m]).run();
        let doc = serde_json::from_str(&plan.stdout).unwrap_or_default();
        let want = predicted(&doc);
        let before = snapshot(m);
        let start = hal(rig).args(["module", "start", m]).run();
        let did = happened(&before, &snapshot(m));
        cases += 1;
        let changes = want.values().any(|a| a != "keep");
        let code_ok = plan.code == Some(if changes { 3 } else { 0 });
        if want != did || !code_ok || start.code != Some(0) {
            wrong.push(format!(
                "{short} {edit:?}: plan {want:?} (exit {:?}), start did {did:?} (exit {:?})\n{plan}\n{start}",
                plan.code, start.code
            ));
        }
    }
    (wrong, cases)
}

fn config(rig: &Rig) {
    rig.set_config("[defaults]\npull = \"never\"\nrestart = { burst = 200, interval = \"1m\" }\n");
}

#[test]
fn plan_predicts_what_the_start_does() {
    let Some(rig) = rig::engine() else { return };
    config(&rig);
    let mut wrong = Vec::new();
    let mut cases = 0;
    let mut tags = Vec::new();
    let mut built_ids = Vec::new();
    for (short, shape) in model::shapes() {
        // Built again (from the cache) for each shape: a `Retag` edit moved it.
        let alt = alt_image(&rig);
        let built = docker(&["image", "inspect", "--format", "{{.Id}}", &alt]);
        built_ids.push(built.trim().to_string());
        let edits = model::edits(&shape, &alt);
        tags.push(alt);
        let (w, n) = oracle(&rig, short, shape, &edits);
        wrong.extend(w);
        cases += n;
    }
    for tag in &tags {
        docker(&["rmi", "-f", tag]);
    }
    // The image a `Retag` left without its tag.
    for id in &built_ids {
        docker(&["rmi", "-f", id]);
    }
    assert!(
        wrong.is_empty(),
        "{} of {cases} cases disagree:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
    assert!(cases >= 50, "only {cases} cases");
}

#[test]
fn a_plan_touches_nothing() {
    let Some(rig) = rig::engine() else { return };
    config(&rig);
    let mut model = Model::new(vec![
        Svc::long("a"),
        Svc::long("b").after("a"),
        Svc::job("job"),
    ]);
    let m = rig.stack("quiet", model.yaml());
    model.files(&rig, &m);
    hal(&rig).args(["module", "start", &m]).code(0);
    let since = engine_now();
    // A change to plan, a container stopped and one removed by hand.
    model.apply(&Edit::Env("a".into()), &rig, &m);
    model.apply(&Edit::Stop("b".into()), &rig, &m);
    let until_stop = engine_now();
    for _ in 0..3 {
        hal(&rig).args(["--json", "plan", &m]).code(3);
        hal(&rig).args(["plan", "-v", &m]).code(3);
    }
    let touched = events(&m, &until_stop, &engine_now());
    assert!(
        touched.is_empty(),
        "events during plans: {touched:?} (since {since})"
    );
}
