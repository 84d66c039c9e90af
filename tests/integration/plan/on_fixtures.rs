//! The oracle on compose's own e2e fixtures and on real-world stacks (`plan/fixtures/`): each scripted edit planned, then started.

use std::sync::Mutex;

use super::fixture_stack::{FixtureStack, purge_volumes};
use super::model::Edit;
use super::{alt_image, config, play};
use crate::rig::{self, docker};

/// Each fixture under `plan/fixtures/` and the service its edits aim at:
/// one with dependents, a replicated one, a job, one that shares its network namespace.
const STACKS: &[(&str, &str)] = &[
    ("attach-restart", "failing"),
    ("cascade", "running"),
    ("config-hash", "with-env-file"),
    ("dotenv", "backend"),
    ("env-file", "serviceA"),
    ("logs-test", "hello"),
    ("nested", "echo"),
    ("network-recreate", "web"),
    ("network-test", "db"),
    ("ps-test", "busybox"),
    ("restart-depends-on", "nginx"),
    ("restart-lock", "restart"),
    ("sentences", "web"),
    ("simple-composefile", "simple"),
    ("ups-deps-stop", "dependency"),
    ("volume-test", "nginx2"),
    // Real-world shapes.
    ("web-db-cache", "db"),
    ("migrate-job", "migrate"),
    ("netns-gateway", "gateway"),
    ("env-per-service", "worker"),
];

/// Services with more than one replica, where a replica removed by hand is an edit too.
const REPLICATED: &[&str] = &["hello", "worker"];

/// The edits played on each fixture, aimed at `target`, in order (each planned, then started).
fn edits(target: &str, alt: &str) -> Vec<Edit> {
    let t = target.to_string();
    let mut out = vec![
        Edit::Nothing,
        Edit::Env(t.clone()),
        Edit::DotEnv,
        Edit::EnvFile,
        Edit::Command(t.clone()),
        Edit::Image(t.clone(), alt.to_string()),
        Edit::Retag(alt.to_string()),
        Edit::Add,
        Edit::Stop(t.clone()),
        Edit::Rm(t.clone()),
        Edit::Remove,
    ];
    if REPLICATED.contains(&target) {
        out.push(Edit::RmReplica(t));
    }
    out
}

/// How many fixtures are played at once (each on its own rig and thread).
const WORKERS: usize = 4;

#[test]
fn plan_predicts_the_start_on_compose_fixtures() {
    // `HAL_ORACLE_ONLY=a,b` plays those fixtures alone (while fixing one).
    let only = std::env::var("HAL_ORACLE_ONLY").unwrap_or_default();
    let chosen: Vec<_> = STACKS
        .iter()
        .filter(|(n, _)| only.is_empty() || only.split(',').any(|o| o == *n))
        .copied()
        .collect();
    let queue = Mutex::new(chosen);
    let results = Mutex::new((Vec::new(), 0usize));
    std::thread::scope(|scope| {
        for w in 0..WORKERS {
            let (queue, results) = (&queue, &results);
            std::thread::Builder::new()
                .name(format!("plan::on_fixtures_{w}"))
                .spawn_scoped(scope, move || {
                    let Some(rig) = rig::engine() else { return };
                    config(&rig);
                    let mut images = Vec::new();
                    loop {
                        let next = queue.lock().unwrap().pop();
                        let Some((name, target)) = next else { break };
                        let alt = alt_image(&rig);
                        images.push(docker(&["image", "inspect", "--format", "{{.Id}}", &alt]));
                        let mut stack = FixtureStack::load(name, target);
                        let m = stack.write(&rig, name);
                        let (w, n) = play(&rig, name, &m, &mut stack, &edits(target, &alt));
                        rig::docker::purge_project(&m);
                        purge_volumes(&m);
                        let mut r = results.lock().unwrap();
                        r.0.extend(w);
                        r.1 += n;
                        images.push(alt);
                    }
                    for i in &images {
                        docker(&["rmi", "-f", i.trim()]);
                    }
                })
                .unwrap();
        }
    });
    let (wrong, cases) = results.into_inner().unwrap();
    assert!(
        wrong.is_empty(),
        "{} of {cases} cases disagree:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
    assert!(!only.is_empty() || cases >= 200, "only {cases} cases");
}
