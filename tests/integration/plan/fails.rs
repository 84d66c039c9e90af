//! What would fail, said before anything starts: `hal plan` lists an unset variable with no default and a `container_name` another module's container has; `start` refuses the taken name before it makes anything.

use crate::rig::{self, FIXTURE, docker, hal};

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
    let out = hal(&rig).args(["--json", "plan", &second]).run();
    assert_eq!(out.code, Some(3), "{out}");
    let doc = out.json();
    let fails: Vec<(String, String)> = doc["modules"][0]["fails"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["what"].as_str().unwrap().to_string(),
                f["detail"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(fails.len(), 2, "{doc}");
    assert_eq!(fails[0].0, "unset");
    assert!(fails[0].1.contains("${HAL_PLAN_NOT_SET}"), "{fails:?}");
    assert_eq!(fails[1].0, "container_name");
    assert!(
        fails[1].1.contains(&holder_name) && fails[1].1.contains(&first),
        "{fails:?}"
    );
    let start = hal(&rig).args(["module", "start", &second]).run();
    assert_ne!(start.code, Some(0), "{start}");
    assert!(start.stderr.contains(&holder_name), "{start}");
    // Refused before anything: compose made none of its containers.
    let label = format!("label=com.docker.compose.project={second}");
    assert_eq!(
        docker(&["ps", "-aq", "--filter", &label]).trim(),
        "",
        "{start}"
    );
}
