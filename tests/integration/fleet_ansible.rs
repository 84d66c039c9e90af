//! The hal.node collection: on three nodes (three systemd machines with hal from the `.deb`, each with its own services root and modules, one playbook run through Ansible, `tests/integration/ansible/`), `changed` and check mode as hal says them; and on this machine, `--diff`, a failed start reported with hal's message, and `hal_status`'s facts.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use crate::auto_update::running;
use crate::install;
use crate::rig::machine::{Machine, Spec};
use crate::rig::registry::Repo;
use crate::rig::{self, Rig, need, need_that, stack};

const SRC: &str = env!("CARGO_MANIFEST_DIR");

/// The Python that runs Ansible here, mounted at the same path in each machine
/// (the machines have none of their own).
fn python_prefix() -> String {
    let out = Command::new("python3")
        .args(["-c", "import sys; print(sys.base_prefix)"])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// A node: a clean machine with hal installed from the `.deb`, its config and
/// two stacks of its own (`<run>-a`, `<run>-b`).
fn node(i: usize, python: &str) -> (Machine, Vec<String>) {
    // Two fleet tests boot their nodes at once: each node's name is its own.
    let run = format!("{}n{i}", crate::rig::unique("hf"));
    let m = Machine::boot(Spec {
        name: &run,
        run: &run,
        label: "fleet",
        image: install::IMAGE,
        mounts: vec![format!("{python}:{python}:ro")],
        env: vec!["NO_COLOR=1".into()],
    });
    let cp = Command::new("docker")
        .arg("cp")
        .arg(install::deb())
        .arg(format!("{run}:/srv/"))
        .output()
        .unwrap();
    assert!(cp.status.success(), "{cp:?}");
    m.sh_ok("cd /srv && DEBIAN_FRONTEND=noninteractive apt-get install -y ./hal_*.deb 2>&1");
    let services = format!("/srv/{run}/services");
    let mods: Vec<String> = ["a", "b"].iter().map(|s| format!("{run}-{s}")).collect();
    for name in &mods {
        let compose = stack().service("app").runs("sleep 100000").keeps_running();
        m.write(
            &format!("{services}/{name}/compose.yaml"),
            &compose.to_string(),
        );
    }
    m.write(
        "/etc/hal/hal.toml",
        &format!("services_dir = \"{services}\"\n\n[defaults]\npull = \"never\"\n"),
    );
    (m, mods)
}

/// Builds the collection with ansible-galaxy and installs it under the rig.
fn install_collection(rig: &Rig) -> std::path::PathBuf {
    let ok = |args: &[&str]| {
        let out = Command::new("ansible-galaxy").args(args).output().unwrap();
        assert!(out.status.success(), "ansible-galaxy {args:?}: {out:?}");
        String::from_utf8_lossy(&out.stdout).to_string()
    };
    let dir = rig.dir.to_str().unwrap();
    let said = ok(&[
        "collection",
        "build",
        &format!("{SRC}/ansible/hal/node"),
        "--output-path",
        dir,
        "--force",
    ]);
    let tarball = said.split_whitespace().last().unwrap().to_string();
    let into = rig.dir.join("collections");
    ok(&[
        "collection",
        "install",
        &tarball,
        "-p",
        into.to_str().unwrap(),
        "--force",
    ]);
    into
}

/// Each node's `changed=N` from a playbook run's recap.
fn changed(recap: &str) -> BTreeMap<String, u32> {
    counted(recap, "changed=")
}

/// Each node's `WHAT=N` (`changed=`, `failed=`) from a playbook run's recap.
fn counted(recap: &str, what: &str) -> BTreeMap<String, u32> {
    recap
        .lines()
        .filter_map(|l| {
            let (host, rest) = l.split_once(" : ")?;
            let n = rest.split_whitespace().find_map(|w| w.strip_prefix(what))?;
            Some((host.trim().to_string(), n.parse().ok()?))
        })
        .collect()
}

struct Fleet {
    /// The nodes' names, in the inventory's order.
    names: Vec<String>,
    inventory: std::path::PathBuf,
    collections: std::path::PathBuf,
    tmp: std::path::PathBuf,
}

impl Fleet {
    /// The nodes in an inventory (each with the host vars `vars` gives), and the collection installed.
    fn new(
        rig: &Rig,
        python: &str,
        nodes: &[(Machine, Vec<String>)],
        vars: impl Fn(&Machine, &[String]) -> String,
    ) -> Fleet {
        let mut inventory = String::from("[nodes]\n");
        for (m, mods) in nodes {
            inventory.push_str(&format!(
                "{} ansible_connection=hal_machine ansible_python_interpreter={python}/bin/python3 {}\n",
                m.name,
                vars(m, mods)
            ));
        }
        let path = rig.dir.join("inventory.ini");
        std::fs::write(&path, inventory).unwrap();
        let tmp = rig.dir.join("ansible-tmp");
        std::fs::create_dir_all(&tmp).unwrap();
        Fleet {
            names: nodes.iter().map(|(m, _)| m.name.clone()).collect(),
            inventory: path,
            collections: install_collection(rig),
            tmp,
        }
    }

    /// `n` for each node, as [`changed`] counts them.
    fn each(&self, n: u32) -> BTreeMap<String, u32> {
        self.names.iter().map(|h| (h.clone(), n)).collect()
    }

    /// `ansible-playbook site.yml ARGS`: each node's changed count; the run must succeed.
    fn play(&self, args: &[&str]) -> BTreeMap<String, u32> {
        let (ok, said) = self.run("site.yml", args);
        assert!(ok, "ansible-playbook {args:?}:\n{said}");
        changed(&said)
    }

    /// `ansible-playbook BOOK ARGS`: whether it succeeded, and what it said.
    fn run(&self, book: &str, args: &[&str]) -> (bool, String) {
        let out = Command::new("ansible-playbook")
            .arg("-i")
            .arg(&self.inventory)
            .arg(format!("{SRC}/tests/integration/ansible/{book}"))
            .args(args)
            .env("ANSIBLE_COLLECTIONS_PATH", &self.collections)
            .env(
                "ANSIBLE_CONNECTION_PLUGINS",
                format!("{SRC}/tests/integration/ansible/connection_plugins"),
            )
            .env("ANSIBLE_PIPELINING", "true")
            .env("ANSIBLE_NOCOLOR", "1")
            .env("ANSIBLE_LOCAL_TEMP", &self.tmp)
            .env("ANSIBLE_HOME", &self.tmp)
            .output()
            .unwrap();
        let said = format!(
            "{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        (out.status.success(), said)
    }
}

fn states(m: &Machine, mods: &[String]) -> Vec<String> {
    mods.iter()
        .map(|n| {
            let r = m.sh(&format!("hal status {n} --json"));
            let doc: serde_json::Value = serde_json::from_str(&r.stdout).unwrap_or_default();
            doc["modules"][0]["state"]
                .as_str()
                .unwrap_or("?")
                .to_string()
        })
        .collect()
}

/// A rig when Ansible and the machines' image and package can be had here.
#[track_caller]
fn fleet_rig() -> Option<Rig> {
    let rig = rig::engine()?;
    need("ansible-playbook", "--version")?;
    let why = install::missing();
    need_that(
        why.is_none(),
        why.as_deref().unwrap_or_default(),
        "run scripts/provision.sh",
    )?;
    Some(rig)
}

#[test]
fn a_playbook_on_three_nodes_changes_what_hal_changed() {
    let Some(rig) = fleet_rig() else { return };
    let python = python_prefix();
    let nodes: Vec<(Machine, Vec<String>)> = (0..3).map(|i| node(i, &python)).collect();
    let fleet = Fleet::new(&rig, &python, &nodes, |_, mods| {
        format!("mods='{}'", serde_json::to_string(mods).unwrap())
    });
    let (names, each) = (&fleet.names, |n| fleet.each(n));

    // Check mode says a start would change every node, and starts nothing.
    assert_eq!(fleet.play(&["--check"]), each(1));
    for (m, mods) in &nodes {
        assert_eq!(
            states(m, mods),
            ["inactive", "inactive"],
            "check mode started something"
        );
    }
    assert_eq!(fleet.play(&[]), each(1), "the first run changes every node");
    for (m, mods) in &nodes {
        assert_eq!(states(m, mods), ["active", "active"]);
    }
    assert_eq!(fleet.play(&[]), each(0), "the second run changes nothing");

    // A stop on one node changes that node alone.
    let first = &names[0];
    let stopped = fleet.play(&["-e", "want=stopped", "--limit", first]);
    assert_eq!(stopped, BTreeMap::from([(first.clone(), 1)]));
    assert_eq!(states(&nodes[0].0, &nodes[0].1), ["inactive", "inactive"]);
    for (m, mods) in &nodes[1..] {
        assert_eq!(states(m, mods), ["active", "active"]);
    }
    assert_eq!(
        fleet.play(&[]),
        BTreeMap::from([
            (names[0].clone(), 1),
            (names[1].clone(), 0),
            (names[2].clone(), 0)
        ])
    );
}

/// A rig for a play on this machine, when Ansible is here; modules are not pulled.
#[track_caller]
fn local_rig() -> Option<Rig> {
    let rig = rig::engine()?;
    need("ansible-playbook", "--version")?;
    rig.set_config("[defaults]\npull = \"never\"\n");
    Some(rig)
}

/// `ansible-playbook FLAGS PLAY` on this machine (a local connection, the
/// collection installed under the rig, hal from the build on the rig's
/// services root, config and state), the play's variables `hal`, `root` and
/// `conf` and `vars`' own: asserts it succeeds, and returns what it said.
fn play_here(rig: &Rig, flags: &[&str], play: &Path, vars: serde_json::Value) -> String {
    let tmp = rig.dir.join("ansible-tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let mut all = serde_json::json!({
        "hal": env!("CARGO_BIN_EXE_hal"),
        "root": rig.root,
        "conf": rig.config,
        "ansible_python_interpreter": format!("{}/bin/python3", python_prefix()),
    });
    let serde_json::Value::Object(vars) = vars else {
        panic!("the play's variables are an object: {vars}")
    };
    all.as_object_mut().unwrap().extend(vars);
    let mut cmd = Command::new("ansible-playbook");
    cmd.args(flags)
        .args(["-i", "localhost,", "-c", "local"])
        .arg("-e")
        .arg(all.to_string())
        .arg(play)
        .env("ANSIBLE_COLLECTIONS_PATH", install_collection(rig))
        .env("ANSIBLE_NOCOLOR", "1")
        .env("ANSIBLE_LOCAL_TEMP", &tmp)
        .env("ANSIBLE_HOME", &tmp)
        .env("HAL_STATE_DIR", &rig.state)
        .env_remove("HAL_YES");
    for (k, v) in &rig.env {
        cmd.env(k, v);
    }
    let run = cmd.output().unwrap();
    let said = String::from_utf8_lossy(&run.stdout).to_string();
    assert!(
        run.status.success(),
        "ansible-playbook:\n{said}\n{}",
        String::from_utf8_lossy(&run.stderr)
    );
    said
}

/// The play of `local_play`: a check-mode start and a start with `--diff`, a
/// start that fails, then `hal_status`; every result written to `out`.
const LOCAL_PLAY: &str = r#"- hosts: localhost
  gather_facts: false
  vars:
    node_args: &on
      hal_path: "{{ hal }}"
      services_dir: "{{ root }}"
      config: "{{ conf }}"
  tasks:
    - name: A check-mode start, with its diff
      hal.node.hal_module: { <<: *on, name: ["{{ good }}"], pull: never, timeout: 60s }
      check_mode: true
      diff: true
      register: planned
    - name: A start, with its diff
      hal.node.hal_module: { <<: *on, name: ["{{ good }}"], pull: never, timeout: 60s }
      diff: true
      register: started
    - name: A start that fails
      hal.node.hal_module: { <<: *on, name: ["{{ bad }}"], pull: never, timeout: 60s }
      register: failed
      ignore_errors: true
    - name: The node's modules as facts
      hal.node.hal_status: { <<: *on, name: ["{{ good }}", "{{ bad }}"] }
      register: status
    - name: What each said
      ansible.builtin.copy:
        dest: "{{ out }}"
        content: "{{ {'planned': planned, 'started': started, 'failed': failed, 'status': status, 'hal_modules': hal_modules, 'hal_status': hal_status} | to_json }}"
"#;

/// The collection on this machine (a local connection, hal from the build):
/// `--diff` gives each module's state before and after, a failed start is a
/// failed task with hal's own message, and `hal_status` sets `hal_modules`
/// and `hal_status`.
#[test]
fn the_collection_diffs_reports_failures_and_reads_status() {
    let Some(rig) = local_rig() else { return };
    let good = rig.stack(
        "ansgood",
        stack().service("app").runs("sleep 100000").keeps_running(),
    );
    let bad = rig.stack("ansbad", stack().service("app").runs("echo broken; exit 3"));
    let play = rig.dir.join("local.yml");
    std::fs::write(&play, LOCAL_PLAY).unwrap();
    let out = rig.dir.join("said.json");
    let vars = serde_json::json!({ "good": good, "bad": bad, "out": out });
    play_here(&rig, &[], &play, vars);
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();

    let diff = |r: &serde_json::Value| {
        (
            r["diff"]["before"].as_str().unwrap_or("?").to_string(),
            r["diff"]["after"].as_str().unwrap_or("?").to_string(),
        )
    };
    let (before, after) = (format!("{good}: inactive\n"), format!("{good}: active\n"));
    let planned = &doc["planned"];
    let (was, will) = diff(planned);
    assert_eq!(was, before, "{planned:#}");
    // Check mode's after has each service's action too, from the plan.
    assert!(
        will.starts_with(&after) && will.contains(&format!("{good}/app: create")),
        "{planned:#}"
    );
    assert_eq!(planned["changed"], true, "{planned:#}");
    let started = &doc["started"];
    assert_eq!(
        diff(started),
        (before, after),
        "check mode started it: {started:#}"
    );
    assert_eq!(started["changed"], true, "{started:#}");

    let failed = &doc["failed"];
    assert_eq!(failed["failed"], true, "{failed:#}");
    assert_eq!(failed["rc"], 1, "{failed:#}");
    let error = failed["modules"][0]["error"].as_str().unwrap_or_default();
    assert!(!error.is_empty(), "hal said nothing: {failed:#}");
    assert_eq!(
        failed["msg"].as_str().unwrap_or_default(),
        format!("{bad}: {error}"),
        "{failed:#}"
    );

    let status = &doc["status"];
    assert_eq!(status["changed"], false, "{status:#}");
    assert_eq!(status["exit_code"], 3, "{status:#}");
    let states: Vec<(String, String)> = doc["hal_modules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["name"].as_str().unwrap().into(),
                m["state"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert_eq!(
        states,
        [
            (good.clone(), "active".into()),
            (bad.clone(), "failed".into())
        ],
        "{doc:#}"
    );
    assert_eq!(doc["hal_status"]["schema"], 1, "{doc:#}");
    assert_eq!(doc["hal_status"]["modules"], doc["hal_modules"], "{doc:#}");
}

/// `serial: 1` and `state: updated` (tests/integration/ansible/update.yml) on
/// three nodes whose module runs one image of the local registry: a good image
/// rolls across the fleet (`changed`, then nothing on a second run); a bad one
/// is rolled back on the first node, which fails, and the play stops there.
#[test]
fn a_serial_play_rolls_an_update_and_stops_at_a_bad_image() {
    let Some(rig) = fleet_rig() else { return };
    let Some(()) = crate::rig::registry::registry_up() else {
        return;
    };
    let mut repo = Repo::new(&rig, "fleet");
    let v1 = repo.publish("good");
    let python = python_prefix();
    let nodes: Vec<(Machine, Vec<String>)> = (0..3).map(|i| node(i, &python)).collect();
    let mut upd = Vec::new();
    for (m, _) in &nodes {
        let name = format!("{}-u", m.run);
        let services = format!("/srv/{}/services", m.run);
        m.write(
            &format!("{services}/{name}/compose.yaml"),
            &repo.compose().to_string(),
        );
        m.sh_ok(&format!("hal start --pull always {name} 2>&1"));
        assert_eq!(running(&name).0, v1);
        repo.modules.push(name.clone());
        upd.push(name);
    }
    let fleet = Fleet::new(&rig, &python, &nodes, |m, _| format!("upd={}-u", m.run));
    let (names, each) = (&fleet.names, |n| fleet.each(n));

    let v2 = repo.publish("good");
    let (ok, said) = fleet.run("update.yml", &["--check"]);
    assert!(ok, "{said}");
    assert_eq!(
        changed(&said),
        each(1),
        "check mode: an update is available\n{said}"
    );
    assert_eq!(running(&upd[0]).0, v1, "check mode updated");
    let (ok, said) = fleet.run("update.yml", &[]);
    assert!(ok, "{said}");
    assert_eq!(changed(&said), each(1), "{said}");
    for u in &upd {
        assert_eq!(running(u).0, v2, "{u}: {said}");
    }
    let (ok, said) = fleet.run("update.yml", &[]);
    assert!(ok, "{said}");
    assert_eq!(
        changed(&said),
        each(0),
        "the second run changes nothing\n{said}"
    );

    let before: Vec<(String, String)> = upd.iter().map(|u| running(u)).collect();
    repo.publish("exit");
    let (ok, said) = fleet.run("update.yml", &[]);
    assert!(!ok, "a bad image passed: {said}");
    assert_eq!(counted(&said, "failed=").get(&names[0]), Some(&1), "{said}");
    assert!(
        said.contains("rolled back"),
        "hal's message is missing: {said}"
    );
    // Rolled back on the first node: active again on v2.
    assert_eq!(running(&upd[0]).0, v2, "{said}");
    assert_eq!(states(&nodes[0].0, &upd[..1]), ["active"]);
    // The play stopped there: the others were not touched.
    for (i, u) in upd.iter().enumerate().skip(1) {
        assert_eq!(running(u), before[i], "{u} was touched: {said}");
        assert_eq!(
            changed(&said).get(&names[i]).copied().unwrap_or(0),
            0,
            "{said}"
        );
    }
}

/// `ansible-playbook --check --diff` (tests/integration/ansible/check.yml) on
/// a running module whose compose file changed an environment variable: the
/// diff names the service, its action and why, as `hal plan` says them, and
/// nothing is touched.
#[test]
fn check_mode_diff_names_each_service_and_its_action() {
    let Some(rig) = local_rig() else { return };
    let compose = |greeting: &str| {
        format!(
            "services:\n  app:\n    image: {}\n    command: [\"sh\", \"-c\", \"sleep 100000\"]\n    restart: unless-stopped\n    environment:\n      GREETING: \"{greeting}\"\n",
            crate::rig::FIXTURE
        )
    };
    let m = rig.stack("anscheck", compose("hello"));
    crate::rig::hal(&rig).args(["module", "start", &m]).code(0);
    rig.write(&m, "compose.yaml", &compose("bye"));
    let before = crate::rig::ids(&m);
    let play = Path::new(SRC).join("tests/integration/ansible/check.yml");
    let said = play_here(
        &rig,
        &["--check", "--diff"],
        &play,
        serde_json::json!({ "mod": m }),
    );
    let line =
        format!("+{m}/app: recreate (config: compose.yaml: environment.GREETING: hello -> bye)");
    assert!(said.contains(&line), "no {line:?} in:\n{said}");
    assert!(said.contains("changed=1"), "{said}");
    assert_eq!(
        crate::rig::ids(&m),
        before,
        "check mode touched the containers"
    );
}
