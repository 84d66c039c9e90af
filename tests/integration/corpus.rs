//! The corpus (`tests/corpus/`): stacks shaped after real self-hosted
//! projects' compose files (each file says which), run only on the fixture
//! image. For each: start, status with the right container count (replicas,
//! profiles, one-shot jobs), logs, stop, a second start and a no-op start.

use std::path::Path;
use std::time::Duration;

use crate::rig::{self, Rig, containers, docker, eventually, hal};

/// What `tests/corpus/NAME/expect` says: `containers N`, `log TEXT`, `port SERVICE PORT`.
struct Expect {
    containers: usize,
    logs: Vec<String>,
    ports: Vec<(String, String)>,
}

fn expect(dir: &Path) -> Expect {
    let text = std::fs::read_to_string(dir.join("expect")).unwrap();
    let mut e = Expect {
        containers: 0,
        logs: Vec::new(),
        ports: Vec::new(),
    };
    for line in text.lines() {
        match line.split_once(' ') {
            Some(("containers", n)) => e.containers = n.parse().unwrap(),
            Some(("log", t)) => e.logs.push(t.to_string()),
            Some(("port", p)) => {
                let (s, port) = p.split_once(' ').unwrap();
                e.ports.push((s.to_string(), port.to_string()));
            }
            _ => panic!("bad expect line {line:?}"),
        }
    }
    e
}

fn copy(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy(&entry.path(), &target);
        } else if entry.file_name() != "expect" {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

fn container_count(rig: &Rig, m: &str) -> usize {
    let st = rig.status(m);
    assert_eq!(st.state(), "active", "{st}");
    st.services().len()
}

fn run(short: &str) {
    let Some(rig) = rig::engine() else { return };
    rig.set_config("[defaults]\npull = \"never\"\nrestart = { burst = 50, interval = \"1m\" }\n");
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/corpus")
        .join(short);
    let want = expect(&src);
    let m = rig.stack_dir(short);
    copy(&src, &rig.root.join(&m));

    hal(&rig).args(["module", "start", &m]).code(0);
    assert_eq!(
        container_count(&rig, &m),
        want.containers,
        "{short}: containers"
    );
    assert_eq!(
        containers(&m).len(),
        want.containers,
        "{short}: containers on the engine"
    );
    for text in &want.logs {
        let seen = eventually(Duration::from_secs(10), || {
            hal(&rig)
                .args(["module", "logs", &m])
                .run()
                .stdout
                .contains(text.as_str())
        });
        assert!(seen, "{short}: logs lack {text:?}");
    }
    for (service, port) in &want.ports {
        let c = format!("{m}-{service}-1");
        let bound = docker(&["inspect", "-f", "{{json .HostConfig.PortBindings}}", &c]);
        assert!(
            bound.contains(&format!("{port}/tcp")),
            "{short}: {c} ports {bound}"
        );
    }

    hal(&rig).args(["module", "stop", &m]).code(0);
    assert!(
        containers(&m).is_empty(),
        "{short}: containers left after stop"
    );
    hal(&rig).args(["module", "start", &m]).code(0);
    assert_eq!(
        container_count(&rig, &m),
        want.containers,
        "{short}: second start"
    );
    // Unchanged and active: a no-op start (the fast path) changes nothing.
    let before = rig::ids(&m);
    hal(&rig).args(["module", "start", &m]).code(0);
    assert_eq!(
        rig::ids(&m),
        before,
        "{short}: a no-op start recreated containers"
    );
    hal(&rig).args(["module", "stop", &m]).code(0);
    let label = format!("label=com.docker.compose.project={m}");
    for v in docker(&["volume", "ls", "-q", "--filter", &label]).split_whitespace() {
        docker(&["volume", "rm", v]);
    }
}

macro_rules! corpus {
    ($($name:ident),* $(,)?) => {
        $(#[test] fn $name() { run(stringify!($name)) })*
    };
}

corpus!(
    authentik,
    gitea,
    gluetun,
    homeassistant,
    immich,
    mastodon,
    netbox,
    nextcloud,
    paperless,
    plausible,
    sentry,
    traefik,
    vaultwarden,
);
