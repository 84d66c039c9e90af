//! The local registry on 127.0.0.1:5000 for tests that pull, update and roll back: a rig that needs it, one repository per test, and what hal leaves behind (its `hal-previous` tags).

use std::cell::RefCell;
use std::io::Write;
use std::time::Duration;

use crate::rig::{self, FIXTURE, Rig, docker, stack};

/// A rig on the engine with the registry on 127.0.0.1:5000, or `None` after `SKIP …`.
#[track_caller]
pub(crate) fn with_registry() -> Option<Rig> {
    let rig = rig::engine()?;
    registry_up()?;
    Some(rig)
}

/// `Some(())` when the registry on 127.0.0.1:5000 answers, else `None` after `SKIP …`.
#[track_caller]
pub(crate) fn registry_up() -> Option<()> {
    let up = std::process::Command::new("curl")
        .args(["-fsS", "-o", "/dev/null", "http://127.0.0.1:5000/v2/"])
        .status()
        .is_ok_and(|s| s.success());
    rig::need_that(
        up,
        "no registry on 127.0.0.1:5000",
        "scripts/provision.sh starts it",
    )
}

/// What a fixture service does, by the `BEHAVE` its image sets: `good` turns
/// healthy at once, `exit` says so and exits 1, `unhealthy` runs and never turns healthy.
pub(crate) const BEHAVES: &str = "if [ \"$BEHAVE\" = exit ]; then echo bad image; exit 1; fi; \
if [ \"$BEHAVE\" = good ]; then touch /tmp/ok; fi; sleep 100000";

/// One image repository in the local registry for one test: `publish` pushes
/// a new `latest` the node has not pulled. What it made locally (its tag, the
/// images built) and the `hal-previous` tags of `modules` are removed on drop.
pub(crate) struct Repo {
    pub image: String,
    made: RefCell<Vec<String>>,
    /// Modules whose `hal-previous` tags go with it.
    pub modules: Vec<String>,
}

impl Repo {
    pub(crate) fn new(rig: &Rig, short: &str) -> Repo {
        Repo {
            image: format!("127.0.0.1:5000/hal/{}-{short}:latest", rig.prefix),
            made: RefCell::default(),
            modules: Vec::new(),
        }
    }

    /// A repository on a registry that is not there (127.0.0.1:5999, where
    /// nothing listens): its `latest` is the fixture, tagged here alone.
    pub(crate) fn nowhere(rig: &Rig, short: &str) -> Repo {
        let repo = Repo {
            image: format!("127.0.0.1:5999/hal/{}-{short}:latest", rig.prefix),
            made: RefCell::default(),
            modules: Vec::new(),
        };
        docker(&["tag", FIXTURE, &repo.image]);
        repo
    }

    /// Builds an image of the fixture that behaves as `behave` and pushes it
    /// as the repository's `latest`; the node's own tag stays where it was and
    /// the new image is removed here: only a pull brings it. Returns its id.
    pub(crate) fn publish(&self, behave: &str) -> String {
        let before = local_id(&self.image);
        let n = self.made.borrow().len();
        let dockerfile = format!(
            "FROM {FIXTURE}\nENV BEHAVE={behave}\nLABEL hal.test.image=\"{} {n}\"\n",
            self.image
        );
        // No cache: a cached layer is another test's image, which its `rmi`
        // can take away in the middle of this build ("failed to get digest").
        let mut build = std::process::Command::new("docker")
            .args(["build", "-q", "--no-cache", "-t", &self.image, "-"])
            .env("DOCKER_BUILDKIT", "0")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        build
            .stdin
            .take()
            .unwrap()
            .write_all(dockerfile.as_bytes())
            .unwrap();
        let out = build.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "build: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let id = local_id(&self.image).expect("the image just built");
        self.made.borrow_mut().push(id.clone());
        let push = std::process::Command::new("docker")
            .args(["push", &self.image])
            .output()
            .unwrap();
        assert!(
            push.status.success(),
            "push: {}",
            String::from_utf8_lossy(&push.stderr)
        );
        match &before {
            Some(old) => docker(&["tag", old, &self.image]),
            None => docker(&["rmi", &self.image]),
        };
        docker(&["rmi", &id]);
        assert!(local_id(&id).is_none(), "{id} is still here");
        id
    }

    /// A stack whose `app` runs this repository's image behind a healthcheck.
    pub(crate) fn compose(&self) -> crate::rig::compose::Stack {
        stack()
            .service("app")
            .image(&self.image)
            .runs(BEHAVES)
            .healthcheck("/tmp/ok", "interval: 1s\ntimeout: 2s\nretries: 2")
    }

    /// The setup of most update tests: a repository `short` whose `latest`
    /// is `good` (v1), a module of [`Repo::compose`] on it, started with pull
    /// `always`. The repository, the module and v1's id.
    pub(crate) fn serving(rig: &Rig, short: &str) -> (Repo, String, String) {
        let mut repo = Repo::new(rig, short);
        let v1 = repo.publish("good");
        let m = repo.module(rig, short);
        rig::hal(rig)
            .args(["start", "--pull", "always", &m])
            .code(0);
        assert_eq!(running(&m, "app").0, v1, "{m} does not run v1");
        (repo, m, v1)
    }

    /// The setup of the quarantine tests: [`Repo::serving`], then a v2 that
    /// exits at once, which `hal update` rolls back (exit 1): its digest is
    /// quarantined and v1 runs again.
    pub(crate) fn rolled_back(rig: &Rig, short: &str) -> RolledBack {
        let (repo, m, v1) = Repo::serving(rig, short);
        let v2 = repo.publish("exit");
        let run = rig::hal(rig)
            .args(["update", "--timeout", "30s", &m])
            .within(Duration::from_secs(90))
            .code(1);
        assert!(run.stderr.contains("rolled back: "), "{run}");
        let before = running(&m, "app");
        assert_eq!(before.0, v1, "{run}");
        let bad = digest_of(&v2);
        assert!(bad.starts_with("sha256:"), "{bad}");
        RolledBack {
            repo,
            m,
            v1,
            before,
            bad,
        }
    }

    /// A module of `rig` made of [`Repo::compose`], whose `hal-previous` tags go with the repository.
    pub(crate) fn module(&mut self, rig: &Rig, short: &str) -> String {
        let m = rig.stack(short, self.compose());
        self.modules.push(m.clone());
        m
    }
}

/// What [`Repo::rolled_back`] leaves: a module that runs v1 again after its
/// v2 was rolled back.
pub(crate) struct RolledBack {
    pub repo: Repo,
    /// The module.
    pub m: String,
    /// v1's image id, the one that runs.
    pub v1: String,
    /// What runs after the roll back: [`running`]'s image and container.
    pub before: (String, String),
    /// v2's registry digest, the one quarantined.
    pub bad: String,
}

impl Drop for Repo {
    fn drop(&mut self) {
        docker(&["rmi", "-f", &self.image]);
        for id in self.made.borrow().iter() {
            docker(&["rmi", "-f", id]);
        }
        drop_previous(&self.modules);
    }
}

/// Removes modules' `hal-previous` tags when the test ends.
pub(crate) struct Previous(pub Vec<String>);

impl Drop for Previous {
    fn drop(&mut self) {
        drop_previous(&self.0);
    }
}

fn drop_previous(modules: &[String]) {
    for m in modules {
        let repo = format!("hal-previous/{m}");
        for r in docker(&["image", "ls", "--format", "{{.Repository}}:{{.Tag}}", &repo]).lines() {
            docker(&["rmi", r]);
        }
    }
}

/// The local image id a reference (or id) names, if any.
pub(crate) fn local_id(image: &str) -> Option<String> {
    let id = docker(&["image", "inspect", "-f", "{{.Id}}", image]);
    let id = id.trim();
    (!id.is_empty()).then(|| id.to_string())
}

/// The image id the module's `service` runs, and its container's id (found
/// by compose's labels: v1 and v2 name containers differently); empty when
/// it has none.
pub(crate) fn running(module: &str, service: &str) -> (String, String) {
    let project = format!("label=com.docker.compose.project={module}");
    let svc = format!("label=com.docker.compose.service={service}");
    let ids = docker(&["ps", "-aq", "--filter", &project, "--filter", &svc]);
    let Some(id) = ids.lines().next() else {
        return Default::default();
    };
    let out = docker(&["inspect", "-f", "{{.Image}} {{.Id}}", id]);
    let (image, id) = out.trim().split_once(' ').unwrap_or_default();
    (image.to_string(), id.to_string())
}

/// The registry digest (`sha256:…`) of the local image `id`, or its first
/// repository digest as it is when that has no `@`.
pub(crate) fn digest_of(id: &str) -> String {
    let out = docker(&["image", "inspect", "-f", "{{join .RepoDigests \" \"}}", id]);
    let first = out
        .split_whitespace()
        .next()
        .unwrap_or_default()
        .to_string();
    first
        .split_once('@')
        .map(|(_, d)| d.to_string())
        .unwrap_or(first)
}
