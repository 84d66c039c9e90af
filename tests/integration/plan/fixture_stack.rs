//! A stack copied from `plan/fixtures/`, its compose file edited as YAML: the oracle's scripted edits on any compose file.

use std::path::Path;

use yaml_serde::{Mapping, Value};

use super::model::Edit;
use crate::rig::{FIXTURE, Rig, docker};

/// The fixtures' directory in the source tree.
pub(super) fn fixtures_dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/integration/plan/fixtures")
}

/// A fixture as played: its compose document, its `.env` as written, and the edit counters.
pub(super) struct FixtureStack {
    name: String,
    doc: Value,
    dotenv: String,
    /// Bumped by a `.env` edit (`ORACLE_DOTENV`).
    dotenv_n: u32,
    /// Bumped by an `env_file` edit (`oracle.env`).
    env_file_n: u32,
    /// Bumped by an environment edit (`ORACLE_ENV`).
    env_n: u32,
    /// Bumped by a command edit (the command's `$0`).
    cmd_n: u32,
}

fn key(k: &str) -> Value {
    Value::String(k.to_string())
}

impl FixtureStack {
    /// Reads fixture `name`; `target` is the service the edits aim at: it gets
    /// `ORACLE_DOTENV` from `.env` in its environment and `oracle.env` among its `env_file`s.
    pub(super) fn load(name: &str, target: &str) -> FixtureStack {
        let dir = fixtures_dir().join(name);
        let text = std::fs::read_to_string(dir.join("compose.yaml")).unwrap();
        let doc: Value = yaml_serde::from_str(&text).unwrap();
        let dotenv = std::fs::read_to_string(dir.join(".env")).unwrap_or_default();
        let mut s = FixtureStack {
            name: name.to_string(),
            doc,
            dotenv,
            dotenv_n: 0,
            env_file_n: 0,
            env_n: 0,
            cmd_n: 0,
        };
        s.set_env(target, "ORACLE_DOTENV", "${ORACLE_DOTENV:-none}");
        let svc = s.svc(target);
        let files = match svc.remove("env_file") {
            None => Vec::new(),
            Some(Value::Sequence(v)) => v,
            Some(one) => vec![one],
        };
        let mut files = files;
        files.push(key("oracle.env"));
        svc.insert(key("env_file"), Value::Sequence(files));
        s
    }

    fn svc(&mut self, service: &str) -> &mut Mapping {
        let services = self.doc.get_mut("services").unwrap();
        match services.get_mut(service) {
            Some(Value::Mapping(m)) => m,
            _ => panic!("{}: no service {service}", self.name),
        }
    }

    /// Sets `k` in `service`'s environment, in the form the file uses (map or list).
    fn set_env(&mut self, service: &str, k: &str, v: &str) {
        let svc = self.svc(service);
        let env = svc
            .entry(key("environment"))
            .or_insert_with(|| Value::Mapping(Mapping::new()));
        match env {
            Value::Mapping(m) => {
                m.insert(key(k), key(v));
            }
            Value::Sequence(list) => {
                let prefix = format!("{k}=");
                list.retain(|e| !e.as_str().is_some_and(|e| e.starts_with(&prefix)));
                list.push(key(&format!("{k}={v}")));
            }
            other => panic!("environment of {service}: {other:?}"),
        }
    }

    /// Changes `service`'s command and nothing it does: `sh -c SCRIPT oracleN`.
    fn bump_command(&mut self, service: &str) {
        self.cmd_n += 1;
        let dollar0 = key(&format!("oracle{}", self.cmd_n));
        let svc = self.svc(service);
        let script = match svc.get("command").cloned() {
            Some(Value::Sequence(mut v))
                if v.len() >= 3 && v[0] == key("sh") && v[1] == key("-c") =>
            {
                v.truncate(3);
                v.push(dollar0);
                svc.insert(key("command"), Value::Sequence(v));
                return;
            }
            Some(Value::Sequence(v)) => v
                .iter()
                .map(|w| format!("'{}'", w.as_str().unwrap().replace('\'', "'\\''")))
                .collect::<Vec<_>>()
                .join(" "),
            Some(Value::String(s)) => s,
            _ => "sleep infinity".to_string(),
        };
        let command = vec![key("sh"), key("-c"), key(&script), dollar0];
        svc.insert(key("command"), Value::Sequence(command));
    }

    /// Copies the fixture into module `m`'s directory and writes the files as they stand.
    pub(super) fn write(&self, rig: &Rig, short: &str) -> String {
        let m = rig.stack_dir(short);
        copy_dir(&fixtures_dir().join(&self.name), &rig.root.join(&m));
        self.files(rig, &m);
        m
    }

    fn files(&self, rig: &Rig, m: &str) {
        rig.write(
            m,
            "compose.yaml",
            &yaml_serde::to_string(&self.doc).unwrap(),
        );
        let dotenv = format!(
            "{}\nORACLE_PREFIX={m}\nORACLE_DOTENV=d{}\n",
            self.dotenv.trim_end(),
            self.dotenv_n
        );
        rig.write(m, ".env", &dotenv);
        rig.write(
            m,
            "oracle.env",
            &format!("ORACLE_FILE=e{}\n", self.env_file_n),
        );
    }

    /// Plays `edit` on the files or the engine.
    pub(super) fn apply(&mut self, edit: &Edit, rig: &Rig, m: &str) {
        match edit {
            Edit::Nothing => {}
            Edit::Env(s) => {
                self.env_n += 1;
                let v = format!("v{}", self.env_n);
                self.set_env(s, "ORACLE_ENV", &v);
            }
            Edit::Command(s) => self.bump_command(s),
            Edit::Image(s, image) => {
                self.svc(s).insert(key("image"), key(image));
            }
            Edit::DotEnv => self.dotenv_n += 1,
            Edit::EnvFile => self.env_file_n += 1,
            Edit::Add => {
                let extra = format!("image: {FIXTURE}\ncommand: sleep infinity\n");
                let extra: Value = yaml_serde::from_str(&extra).unwrap();
                let services = self.doc.get_mut("services").unwrap();
                services
                    .as_mapping_mut()
                    .unwrap()
                    .insert(key("oracle-extra"), extra);
            }
            Edit::Remove => {
                let services = self.doc.get_mut("services").unwrap();
                services.as_mapping_mut().unwrap().remove("oracle-extra");
            }
            Edit::Stop(s) => drop(docker(&["stop", "-t", "1", &first(m, s)])),
            Edit::Rm(s) => drop(docker(&["rm", "-f", &first(m, s)])),
            Edit::RmReplica(s) => drop(docker(&["rm", "-f", &replica(m, s, 2)])),
            Edit::Retag(tag) => drop(docker(&["tag", FIXTURE, tag])),
        }
        self.files(rig, m);
    }
}

fn first(m: &str, service: &str) -> String {
    replica(m, service, 1)
}

/// The id of `service`'s container number `n` in project `m` (compose's labels, whatever its name).
fn replica(m: &str, service: &str, n: u32) -> String {
    let id = docker(&[
        "ps",
        "-aq",
        "--filter",
        &format!("label=com.docker.compose.project={m}"),
        "--filter",
        &format!("label=com.docker.compose.service={service}"),
        "--filter",
        &format!("label=com.docker.compose.container-number={n}"),
    ]);
    let id = id.trim().to_string();
    assert!(!id.is_empty(), "{m}: no container {n} of {service}");
    id
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).unwrap();
        }
    }
}

/// Removes project `m`'s volumes (the rig removes its containers and networks).
pub(super) fn purge_volumes(m: &str) {
    let label = format!("label=com.docker.compose.project={m}");
    for v in docker(&["volume", "ls", "-q", "--filter", &label]).split_whitespace() {
        docker(&["volume", "rm", "-f", v]);
    }
}

impl super::Scripted for FixtureStack {
    fn apply(&mut self, edit: &Edit, rig: &Rig, m: &str) {
        FixtureStack::apply(self, edit, rig, m);
    }
}
