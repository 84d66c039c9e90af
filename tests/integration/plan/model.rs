//! The oracle's stacks as data: a few shapes, the edits played on them, and their compose file.

use std::fmt::Write as _;

use crate::rig::{FIXTURE, Rig, docker};

/// One service of a test stack.
#[derive(Clone, Debug)]
pub(super) struct Svc {
    name: String,
    job: bool,
    image: String,
    /// Bumped by a command edit.
    cmd: u32,
    /// Bumped by an environment edit.
    env: u32,
    /// Reads `app.env` and `${VALUE}` from `.env`.
    files: bool,
    after: Vec<String>,
    replicas: u32,
}

impl Svc {
    /// A service that runs until stopped (`restart: unless-stopped`).
    pub(super) fn long(name: &str) -> Svc {
        Svc {
            name: name.to_string(),
            job: false,
            image: FIXTURE.to_string(),
            cmd: 0,
            env: 0,
            files: false,
            after: Vec::new(),
            replicas: 1,
        }
    }

    /// A one-shot job: runs `true` and is done.
    pub(super) fn job(name: &str) -> Svc {
        Svc {
            job: true,
            ..Svc::long(name)
        }
    }

    pub(super) fn after(mut self, other: &str) -> Svc {
        self.after.push(other.to_string());
        self
    }

    fn reading_files(mut self) -> Svc {
        self.files = true;
        self
    }

    fn replicas(mut self, n: u32) -> Svc {
        self.replicas = n;
        self
    }
}

/// A scripted edit, on the files or behind hal's back.
#[derive(Clone, Debug)]
pub(super) enum Edit {
    Nothing,
    Env(String),
    DotEnv,
    EnvFile,
    Command(String),
    Image(String, String),
    /// The tag moved to the fixture by hand, no file changed.
    Retag(String),
    Add,
    Remove,
    Stop(String),
    Rm(String),
    RmReplica(String),
}

/// A stack's services and the contents of its `.env` and `app.env`.
pub(super) struct Model {
    services: Vec<Svc>,
    dotenv: u32,
    env_file: u32,
}

impl Model {
    pub(super) fn new(services: Vec<Svc>) -> Model {
        Model {
            services,
            dotenv: 0,
            env_file: 0,
        }
    }

    pub(super) fn yaml(&self) -> String {
        let mut y = String::from("services:\n");
        for s in &self.services {
            let _ = writeln!(y, "  {}:\n    image: {}", s.name, s.image);
            if s.job {
                let _ = writeln!(y, "    command: [\"sh\", \"-c\", \"true {}\"]", s.cmd);
            } else {
                let _ = writeln!(
                    y,
                    "    command: [\"sh\", \"-c\", \"sleep 100000; echo $$HOME {}\"]\n    restart: unless-stopped",
                    s.cmd
                );
            }
            let _ = writeln!(y, "    environment:\n      GREETING: \"v{}\"", s.env);
            if s.files {
                y.push_str("      FROM_DOTENV: \"${VALUE:-none}\"\n    env_file: [app.env]\n");
            }
            if !s.after.is_empty() {
                let _ = writeln!(y, "    depends_on: [{}]", s.after.join(", "));
            }
            if s.replicas != 1 {
                let _ = writeln!(y, "    deploy:\n      replicas: {}", s.replicas);
            }
        }
        y
    }

    /// Writes `.env` and `app.env` as the model says.
    pub(super) fn files(&self, rig: &Rig, m: &str) {
        rig.write(m, ".env", &format!("VALUE=d{}\n", self.dotenv));
        rig.write(m, "app.env", &format!("NAME=e{}\n", self.env_file));
    }

    fn svc(&mut self, name: &str) -> &mut Svc {
        self.services
            .iter_mut()
            .find(|s| s.name == name)
            .unwrap_or_else(|| panic!("no service {name}"))
    }

    /// Plays `edit` on the files or the engine.
    pub(super) fn apply(&mut self, edit: &Edit, rig: &Rig, m: &str) {
        match edit {
            Edit::Nothing => {}
            Edit::Env(s) => self.svc(s).env += 1,
            Edit::Command(s) => self.svc(s).cmd += 1,
            Edit::Image(s, image) => self.svc(s).image = image.clone(),
            Edit::DotEnv => self.dotenv += 1,
            Edit::EnvFile => self.env_file += 1,
            Edit::Add => self.services.push(Svc::long("extra")),
            Edit::Remove => self.services.retain(|s| s.name != "extra"),
            Edit::Stop(s) => drop(docker(&["stop", "-t", "1", &format!("{m}-{s}-1")])),
            Edit::Rm(s) => drop(docker(&["rm", "-f", &format!("{m}-{s}-1")])),
            Edit::RmReplica(s) => drop(docker(&["rm", "-f", &format!("{m}-{s}-2")])),
            Edit::Retag(tag) => drop(docker(&["tag", FIXTURE, tag])),
        }
        rig.write(m, "compose.yaml", &self.yaml());
        self.files(rig, m);
    }
}

/// The stack shapes the oracle plays its edits on.
pub(super) fn shapes() -> Vec<(&'static str, Model)> {
    vec![
        ("one", Model::new(vec![Svc::long("a").reading_files()])),
        (
            "chain",
            Model::new(vec![
                Svc::long("a").reading_files(),
                Svc::long("b").after("a"),
                Svc::long("c").after("b"),
            ]),
        ),
        (
            "mixed",
            Model::new(vec![
                Svc::long("a").reading_files().replicas(2),
                Svc::job("job").replicas(2),
                Svc::long("w").after("a"),
            ]),
        ),
    ]
}

/// The edits played on `shape`, in order (each planned, then started).
pub(super) fn edits(shape: &Model, alt: &str) -> Vec<Edit> {
    let first = shape.services[0].name.clone();
    let last = shape.services[shape.services.len() - 1].name.clone();
    let mut out = vec![
        Edit::Nothing,
        Edit::Env(first.clone()),
        Edit::DotEnv,
        Edit::EnvFile,
        Edit::Command(first.clone()),
        Edit::Image(first.clone(), alt.to_string()),
        Edit::Retag(alt.to_string()),
        Edit::Image(first.clone(), FIXTURE.to_string()),
        Edit::Add,
        Edit::Stop(first.clone()),
        Edit::Rm(first.clone()),
        Edit::Remove,
        Edit::Env(last.clone()),
        Edit::Stop(last.clone()),
        Edit::Rm(last.clone()),
        Edit::Command(last.clone()),
        Edit::Nothing,
    ];
    for s in shape.services.iter().filter(|s| s.replicas > 1) {
        out.push(Edit::RmReplica(s.name.clone()));
    }
    out
}
