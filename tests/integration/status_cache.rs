//! What compose reads in each module, kept between calls (issue 51): a
//! status of an unchanged node opens no compose file and stats each module's
//! directory and files only; every kind of change to what compose reads is
//! seen on the next call; a cache that does not read, or is not this hal's,
//! is rebuilt, never trusted.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::rig::strace::has_strace;
use crate::rig::{self, Rig, hal};

const MODULES: usize = 30;
const CACHE: &str = "compose-models.json";

/// A state directory as hal's runs leave it (the cache is never what makes one).
fn with_state(rig: &Rig) {
    std::fs::create_dir_all(&rig.state).unwrap();
    std::fs::set_permissions(&rig.state, std::fs::Permissions::from_mode(0o700)).unwrap();
}

fn cache(rig: &Rig) -> Value {
    std::fs::read_to_string(rig.state.join(CACHE))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(Value::Null)
}

/// The model kept for module `m`'s directory, if any.
fn model(rig: &Rig, m: &str) -> Value {
    let dir = rig.root.join(m);
    cache(rig)["modules"][dir.to_string_lossy().as_ref()]["model"].clone()
}

/// `hal --json list` run until the cache keeps a model of each of
/// `modules` (a stamp is kept only once it is a second old), then once more.
fn settled(rig: &Rig, modules: &[&str]) {
    let end = Instant::now() + Duration::from_secs(30);
    loop {
        hal(rig).args(["--json", "list"]).code(0);
        if modules.iter().all(|m| model(rig, m).is_object()) {
            return;
        }
        assert!(Instant::now() < end, "never kept: {}", cache(rig));
    }
}

/// Each edge of module `m` in `hal --json list`: (the module it requires, the file that says so).
fn edges(rig: &Rig, m: &str) -> Vec<(String, String)> {
    let list = hal(rig).args(["--json", "list"]).code(0).json();
    let module = list["modules"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["name"] == m)
        .unwrap_or_else(|| panic!("{m} not listed: {list}"))
        .clone();
    module["edges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let file = e["origin"]["file"].as_str().unwrap_or_default();
            let file = Path::new(file).file_name().unwrap_or_default();
            (
                e["to"].as_str().unwrap().to_string(),
                file.to_string_lossy().into_owned(),
            )
        })
        .collect()
}

/// The `source` of each listed module (its compose file), by name.
fn sources(rig: &Rig) -> Vec<(String, String)> {
    let list = hal(rig).args(["--json", "list"]).code(0).json();
    list["modules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| {
            (
                x["name"].as_str().unwrap().to_string(),
                x["source"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

/// A compose file whose one service shares `peer`'s first container's network namespace.
fn tied_to(peer: &str) -> String {
    format!(
        "services:\n  b:\n    image: {}\n    network_mode: \"container:{peer}-a-1\"\n",
        rig::FIXTURE
    )
}

fn plain() -> String {
    format!("services:\n  a:\n    image: {}\n", rig::FIXTURE)
}

/// Two providers (`p1`, `p2`, names of the same length) and `b`, tied to `p1`.
fn three(rig: &Rig) -> (String, String, String) {
    with_state(rig);
    let p1 = rig.stack("p1", plain());
    let p2 = rig.stack("p2", plain());
    let b = rig.stack("b", tied_to(&p1));
    settled(rig, &[&p1, &p2, &b]);
    assert_eq!(edges(rig, &b), [(p1.clone(), "compose.yaml".into())]);
    (p1, p2, b)
}

fn to(m: &str, file: &str) -> Vec<(String, String)> {
    vec![(m.to_string(), file.to_string())]
}

/// What strace saw `hal ARGS` do: (files opened, stat calls) whose path is under `dir`,
/// and every file opened.
fn traced(rig: &Rig, dir: &Path, args: &[&str]) -> (Vec<String>, Vec<String>, Vec<String>) {
    let calls = "openat,open,statx,newfstatat,stat,lstat";
    let (out, text) = rig.strace(calls, args);
    assert!(
        out.status.code().is_some_and(|c| c < 4),
        "hal {args:?} under strace: {out:?}"
    );
    let dir = dir.to_string_lossy();
    let path = |l: &str| l.split('"').nth(1).map(str::to_string);
    let opens = |l: &&str| l.contains("open");
    let mut under = Vec::new();
    let mut stats = Vec::new();
    let mut all = Vec::new();
    for l in text.lines() {
        let Some(p) = path(l) else { continue };
        if opens(&l) {
            if !l.contains("= -1") {
                all.push(p.clone());
            }
            if p.starts_with(&*dir) {
                under.push(p);
            }
        } else if p.starts_with(&*dir) {
            stats.push(p);
        }
    }
    (under, stats, all)
}

#[test]
fn a_status_of_an_unchanged_node_opens_no_compose_file_and_stats_each_module_at_most_3_times() {
    let Some(rig) = rig::engine() else { return };
    if !has_strace() {
        panic!("strace is missing: run scripts/provision.sh");
    }
    with_state(&rig);
    let modules: Vec<String> = (0..MODULES)
        .map(|i| rig.stack(&format!("c{i:02}"), plain()))
        .collect();
    // Some with a `.env`, one with an `env_file` in a sub-folder, one tied to another.
    for m in modules.iter().take(5) {
        rig.write(m, ".env", "A=1\n");
    }
    std::fs::create_dir_all(rig.root.join(&modules[5]).join("env")).unwrap();
    rig.write(&modules[5], "env/app.env", "B=1\n");
    rig.write(
        &modules[5],
        "compose.yaml",
        &format!(
            "services:\n  a:\n    image: {}\n    env_file: env/app.env\n",
            rig::FIXTURE
        ),
    );
    rig.write(&modules[6], "compose.yaml", &tied_to(&modules[7]));
    let names: Vec<&str> = modules.iter().map(String::as_str).collect();
    settled(&rig, &names);
    // Exit 3: none of them is started; what is read is the same.
    hal(&rig).arg("status").code(3);
    let kept = std::fs::metadata(rig.state.join(CACHE)).unwrap();

    let (under, stats, all) = traced(&rig, &rig.root, &["status"]);
    let root = rig.root.to_string_lossy().into_owned();
    let files: Vec<&String> = under.iter().filter(|p| **p != root).collect();
    assert!(
        files.is_empty(),
        "status opened in the services root: {files:?}"
    );
    assert!(
        stats.len() <= 3 * MODULES,
        "{} stat calls for {MODULES} modules: {stats:#?}",
        stats.len()
    );
    let most = names
        .iter()
        .map(|m| {
            let dir = rig.root.join(m).to_string_lossy().into_owned();
            stats
                .iter()
                .filter(|p| **p == dir || p.starts_with(&format!("{dir}/")))
                .count()
        })
        .max()
        .unwrap();
    assert!(most <= 3, "a module was stat'ed {most} times: {stats:#?}");
    assert!(
        all.len() <= 20,
        "status opened {} files: {all:#?}",
        all.len()
    );

    // Nothing changed: the cache is not written again.
    let now = std::fs::metadata(rig.state.join(CACHE)).unwrap();
    assert_eq!(
        (now.ino(), now.mtime(), now.mtime_nsec()),
        (kept.ino(), kept.mtime(), kept.mtime_nsec()),
        "an unchanged status wrote the cache"
    );
    // And the graph read from it is the one the files say.
    assert_eq!(edges(&rig, &modules[6]), to(&modules[7], "compose.yaml"));
}

#[test]
fn a_compose_file_edited_is_seen_on_the_next_call() {
    let rig = Rig::new();
    let (_, p2, b) = three(&rig);
    rig.write(&b, "compose.yaml", &tied_to(&p2));
    assert_eq!(edges(&rig, &b), to(&p2, "compose.yaml"));
}

#[test]
fn an_edit_at_the_same_size_with_its_mtime_put_back_is_seen_by_its_ctime() {
    let rig = Rig::new();
    let (p1, p2, b) = three(&rig);
    let file = rig.root.join(&b).join("compose.yaml");
    let was = std::fs::metadata(&file).unwrap();
    // In place, the same size, the mtime put back (`touch -d`): only ctime moves.
    rig.write(&b, "compose.yaml", &tied_to(&p2));
    let touch = Command::new("touch")
        .arg("-d")
        .arg(format!("@{}.{:09}", was.mtime(), was.mtime_nsec()))
        .arg(&file)
        .status()
        .unwrap();
    assert!(touch.success());
    let now = std::fs::metadata(&file).unwrap();
    assert_eq!(
        (now.len(), now.ino(), now.mtime(), now.mtime_nsec()),
        (was.len(), was.ino(), was.mtime(), was.mtime_nsec())
    );
    assert_eq!(edges(&rig, &b), to(&p2, "compose.yaml"));

    // A new file of the same size renamed over it, its mtime put back: the inode moves.
    settled(&rig, &[&b]);
    let was = std::fs::metadata(&file).unwrap();
    let new = rig.root.join(&b).join("new.tmp");
    std::fs::write(&new, tied_to(&p1)).unwrap();
    std::fs::File::options()
        .write(true)
        .open(&new)
        .unwrap()
        .set_modified(was.modified().unwrap())
        .unwrap();
    std::fs::rename(&new, &file).unwrap();
    assert_eq!(std::fs::metadata(&file).unwrap().len(), was.len());
    assert_eq!(edges(&rig, &b), to(&p1, "compose.yaml"));
}

#[test]
fn a_dotenv_edited_is_seen_on_the_next_call() {
    let rig = Rig::new();
    with_state(&rig);
    let p1 = rig.stack("p1", plain());
    let p2 = rig.stack("p2", plain());
    let b = rig.stack("b", tied_to("${PEER}"));
    rig.write(&b, ".env", &format!("PEER={p1}\n"));
    settled(&rig, &[&p1, &p2, &b]);
    assert_eq!(edges(&rig, &b), to(&p1, "compose.yaml"));
    rig.write(&b, ".env", &format!("PEER={p2}\n"));
    assert_eq!(edges(&rig, &b), to(&p2, "compose.yaml"));
}

#[test]
fn an_env_file_edited_or_removed_is_seen_on_the_next_call() {
    let rig = Rig::new();
    let (p1, _, b) = three(&rig);
    std::fs::create_dir_all(rig.root.join(&b).join("env")).unwrap();
    rig.write(&b, "env/app.env", "A=1\n");
    rig.write(
        &b,
        "compose.yaml",
        &format!("{}    env_file: env/app.env\n", tied_to(&p1)),
    );
    settled(&rig, &[&b]);
    let env_file = rig.root.join(&b).join("env/app.env");
    let stamp_of = |rig: &Rig| {
        model(rig, &b)["files"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f[0] == env_file.to_string_lossy().as_ref())
            .map(|f| f[1]["size"].clone())
            .unwrap_or(Value::Null)
    };
    assert_eq!(stamp_of(&rig), 4);
    rig.write(&b, "env/app.env", "A=12\n");
    settled(&rig, &[&b]);
    assert_eq!(stamp_of(&rig), 5, "the env_file's edit was not seen");
    // A required env_file gone: compose refuses the project, so it ties to nothing.
    std::fs::remove_file(&env_file).unwrap();
    assert_eq!(edges(&rig, &b), []);
}

#[test]
fn an_override_file_added_then_removed_is_seen_on_the_next_call() {
    let rig = Rig::new();
    let (p1, p2, b) = three(&rig);
    let over = format!(
        "services:\n  c:\n    image: {}\n    network_mode: \"container:{p2}-a-1\"\n",
        rig::FIXTURE
    );
    rig.write(&b, "compose.override.yaml", &over);
    let mut both = edges(&rig, &b);
    both.sort();
    let mut want = vec![
        (p1.clone(), "compose.yaml".to_string()),
        (p2.clone(), "compose.override.yaml".to_string()),
    ];
    want.sort();
    assert_eq!(both, want);
    settled(&rig, &[&b]);
    std::fs::remove_file(rig.root.join(&b).join("compose.override.yaml")).unwrap();
    assert_eq!(edges(&rig, &b), to(&p1, "compose.yaml"));
}

#[test]
fn a_compose_file_renamed_between_candidate_names_is_seen_on_the_next_call() {
    let rig = Rig::new();
    let (p1, _, b) = three(&rig);
    let dir = rig.root.join(&b);
    std::fs::rename(dir.join("compose.yaml"), dir.join("docker-compose.yml")).unwrap();
    assert_eq!(edges(&rig, &b), to(&p1, "docker-compose.yml"));
    let source = |rig: &Rig| {
        sources(rig)
            .into_iter()
            .find(|(n, _)| *n == b)
            .map(|(_, s)| PathBuf::from(s))
    };
    assert_eq!(source(&rig), Some(dir.join("docker-compose.yml")));
    settled(&rig, &[&b]);
    // To a name compose does not look for: no longer a module.
    std::fs::rename(dir.join("docker-compose.yml"), dir.join("compose.yaml.bak")).unwrap();
    assert_eq!(source(&rig), None);
}

#[test]
fn a_module_directory_added_or_removed_is_seen_on_the_next_call() {
    let rig = Rig::new();
    let (p1, _, b) = three(&rig);
    let c = rig.stack("c", tied_to(&p1));
    assert_eq!(edges(&rig, &c), to(&p1, "compose.yaml"));
    settled(&rig, &[&c]);
    std::fs::remove_dir_all(rig.root.join(&c)).unwrap();
    let names: Vec<String> = sources(&rig).into_iter().map(|(n, _)| n).collect();
    assert!(!names.contains(&c) && names.contains(&b), "{names:?}");
    // Its entry is dropped from the cache.
    let kept = cache(&rig);
    let gone = rig.root.join(&c);
    assert!(
        kept["modules"][gone.to_string_lossy().as_ref()].is_null(),
        "{kept}"
    );
}

#[test]
fn a_corrupt_or_foreign_cache_is_ignored_and_rebuilt() {
    let rig = Rig::new();
    let (p1, p2, b) = three(&rig);
    let path = rig.state.join(CACHE);
    let good = cache(&rig);
    // Poisoned: b's kept model says it ties to p2; only a cache that is not ours says so.
    let poisoned = |doc: &Value| -> String {
        let text = doc.to_string();
        assert!(text.contains(&format!("{p1}-a-1")));
        text.replace(&format!("{p1}-a-1"), &format!("{p2}-a-1"))
    };
    let mut foreign = Vec::new();
    for (key, value) in [
        ("hal", Value::from("0.0.0-other")),
        ("schema", Value::from(99)),
        ("uid", Value::from(good["uid"].as_u64().unwrap() + 1)),
    ] {
        let mut doc = good.clone();
        doc[key] = value;
        foreign.push(poisoned(&doc));
    }
    let truncated = good.to_string()[..good.to_string().len() / 2].to_string();
    for text in foreign
        .into_iter()
        .chain([truncated, "not json".to_string(), String::new()])
    {
        std::fs::write(&path, &text).unwrap();
        assert_eq!(edges(&rig, &b), to(&p1, "compose.yaml"), "trusted: {text}");
        assert_eq!(cache(&rig)["schema"], 1, "not rebuilt from {text}");
        assert!(model(&rig, &b).is_object(), "not rebuilt from {text}");
    }
    // This hal's own cache, poisoned the same way, is trusted: the test can fail.
    std::fs::write(&path, poisoned(&good)).unwrap();
    assert_eq!(edges(&rig, &b), to(&p2, "compose.yaml"));
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn a_group_shared_state_directory_of_ours_keeps_the_cache_writable_by_us_alone() {
    let Some(rig) = rig::engine() else { return };
    // As the node's /var/lib/hal: setgid, group-writable, ours.
    std::fs::create_dir_all(&rig.state).unwrap();
    std::fs::set_permissions(&rig.state, std::fs::Permissions::from_mode(0o2775)).unwrap();
    let m = rig.stack("g", plain());
    settled(&rig, &[&m]);
    let meta = std::fs::metadata(rig.state.join(CACHE)).unwrap();
    assert_eq!(meta.mode() & 0o022, 0, "{:o}", meta.mode());
    if !has_strace() {
        panic!("strace is missing: run scripts/provision.sh");
    }
    let (under, _, _) = traced(&rig, &rig.root, &["status"]);
    let root = rig.root.to_string_lossy().into_owned();
    let files: Vec<&String> = under.iter().filter(|p| **p != root).collect();
    assert!(files.is_empty(), "status opened: {files:?}");
}
