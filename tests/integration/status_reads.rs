//! `status` reads what it must (issue 40): on a node whose containers did not
//! change, it opens the same few state files whatever the number of modules
//! (one ledgers' index, no ledger) and writes none; a new container
//! generation is still recorded, in its module's ledger alone.

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::process::Command;

use crate::rig::strace::has_strace;
use crate::rig::{self, Rig, hal, stack};

const MODULES: usize = 20;

/// Each file of `<state>/ledger`: (inode, mtime in ns, size).
fn ledger_files(rig: &Rig) -> BTreeMap<String, (u64, i64, u64)> {
    std::fs::read_dir(rig.state.join("ledger"))
        .expect("a ledger folder")
        .map(|e| {
            let e = e.unwrap();
            let m = e.metadata().unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                (
                    m.ino(),
                    m.mtime() * 1_000_000_000 + m.mtime_nsec(),
                    m.size(),
                ),
            )
        })
        .collect()
}

/// The files under `dir` that `hal ARGS` opened (successfully), by strace.
fn opened_under(rig: &Rig, dir: &Path, args: &[&str]) -> Vec<String> {
    let (out, text) = rig.strace("openat", args);
    assert!(out.status.success(), "hal {args:?} under strace: {out:?}");
    let dir = dir.to_string_lossy();
    text.lines()
        .filter(|l| !l.contains("= -1"))
        .filter_map(|l| l.split('"').nth(1))
        .filter(|p| p.starts_with(&*dir))
        .map(str::to_string)
        .collect()
}

#[test]
fn an_unchanged_node_status_opens_the_same_few_state_files_and_writes_no_ledger() {
    let Some(rig) = rig::engine() else { return };
    let modules: Vec<String> = (0..MODULES)
        .map(|i| rig.stack(&format!("r{i:02}"), stack().service("idle").keeps_running()))
        .collect();
    hal(&rig).args(["start", "--all"]).code(0);
    hal(&rig).arg("status").code(0);
    let before = ledger_files(&rig);
    assert!(
        modules
            .iter()
            .all(|m| before.contains_key(&format!("{m}.json"))),
        "every module has its ledger: {before:?}"
    );
    hal(&rig).arg("status").code(0);
    rig.status_of(&[]).code(0);
    assert_eq!(
        ledger_files(&rig),
        before,
        "an unchanged status wrote in the ledger folder"
    );

    if has_strace() {
        let all = opened_under(&rig, &rig.state, &["status"]);
        let two = opened_under(&rig, &rig.state, &["status", &modules[0], &modules[1]]);
        assert_eq!(
            all.len(),
            two.len(),
            "status of {MODULES} modules opened {all:?}, of 2 {two:?}"
        );
        let ledgers: Vec<&String> = all.iter().filter(|p| p.contains("/ledger/")).collect();
        assert_eq!(
            ledgers,
            [&rig
                .state
                .join("ledger/.index.json")
                .to_string_lossy()
                .into_owned()],
            "status opened ledgers"
        );
    } else {
        eprintln!("strace is missing (scripts/provision.sh): the file count is not checked");
    }
    assert_eq!(ledger_files(&rig), before);

    // A generation hal did not make: status records it, in that ledger alone.
    let m = &modules[5];
    let old = rig::ids(m);
    let up = Command::new("docker")
        .args(["compose", "-p", m, "up", "-d", "--force-recreate"])
        .current_dir(rig.root.join(m))
        .output()
        .unwrap();
    assert!(up.status.success(), "{up:?}");
    let new = rig::ids(m);
    assert_ne!(old, new);
    hal(&rig).arg("status").run();
    let after = ledger_files(&rig);
    let ledger =
        std::fs::read_to_string(rig.state.join("ledger").join(format!("{m}.json"))).unwrap();
    for id in [&old, &new] {
        assert!(ledger.contains(id.trim()), "{id} not in {ledger}");
    }
    for (name, was) in &before {
        let here = &after[name];
        if *name == format!("{m}.json") || name == ".index.json" {
            assert_ne!(here, was, "{name} was not rewritten");
        } else {
            assert_eq!(here, was, "{name} was rewritten");
        }
    }
}

/// A one-shot job that exited 0 is described from what an inspect said after
/// it exited (no inspect at each status); run again and failing, it is read anew.
#[test]
fn a_done_job_is_remembered_until_it_runs_again() {
    let Some(rig) = rig::engine() else { return };
    let m = rig.stack(
        "job",
        stack()
            .service("up")
            .keeps_running()
            .service("job")
            .runs("test ! -e /m/fail")
            .restart("no")
            .volume("./:/m"),
    );
    hal(&rig).args(["start", &m]).code(0);
    // --json inspects every container and remembers the job's exit.
    rig.status(&m).code(0);
    let remembered = std::fs::read_to_string(rig.state.join("containers.json")).unwrap();
    let job = rig::docker(&[
        "ps",
        "-aq",
        "--no-trunc",
        "--filter",
        &format!("name={m}-job-1"),
    ]);
    assert!(remembered.contains(job.trim()), "{remembered}");
    hal(&rig).args(["status", &m]).code(0);
    rig.write(&m, "fail", "");
    rig::docker(&["start", "-a", &format!("{m}-job-1")]);
    let st = hal(&rig).args(["status", &m]).code(3);
    assert!(st.stdout.contains("exited with code 1"), "{st}");
}
