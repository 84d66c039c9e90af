//! What compose reads is what hal reads (issue 15): override files,
//! `COMPOSE_FILE`, every input in the change check, a job Docker gave up on,
//! and the engine compose and hal share.

use std::time::Duration;

use crate::rig::{self, docker, eventually, hal, stack};

/// A job under `restart: on-failure:3` that always fails: once Docker has
/// given up (exited 1, RestartCount 3) it is `failed`, not `degraded`.
#[test]
fn on_failure_retries_exhausted_is_failed() {
    let Some(rig) = rig::engine() else { return };
    let m = rig.stack(
        "gaveup",
        stack()
            .service("web")
            .keeps_running()
            .service("migrate")
            .runs("exit 1")
            .restart("on-failure:3"),
    );
    hal(&rig).args(["module", "start", "--no-wait", &m]).run();
    let job = format!("{m}-migrate-1");
    let gave_up = eventually(Duration::from_secs(60), || {
        docker(&["inspect", "-f", "{{.State.Status}} {{.RestartCount}}", &job]).trim() == "exited 3"
    });
    assert!(gave_up, "docker did not give up on {job}");
    let st = rig.status(&m);
    assert_eq!(st.state(), "failed", "{st}");
    assert!(st.reason().contains("migrate exited with code 1"), "{st}");
}

/// Every start may count against the limit; these tests start often.
fn roomy(rig: &rig::Rig) {
    rig.set_config("[defaults]\npull = \"never\"\nrestart = { burst = 50, interval = \"1m\" }\n");
}

/// `docker inspect -f FORMAT` of a module's container.
fn inspect(container: &str, format: &str) -> String {
    docker(&["inspect", "-f", format, container])
        .trim()
        .to_string()
}

/// A port that only `compose.override.yaml` publishes reaches the container.
#[test]
fn override_file_is_read() {
    let Some(rig) = rig::engine() else { return };
    let m = rig.stack("ovr", stack().service("web").keeps_running());
    rig.write(
        &m,
        "compose.override.yaml",
        "services:\n  web:\n    ports:\n      - \"127.0.0.1::8080\"\n    environment:\n      FROM_OVERRIDE: \"yes\"\n",
    );
    hal(&rig).args(["module", "start", &m]).code(0);
    let web = format!("{m}-web-1");
    let ports = inspect(&web, "{{json .HostConfig.PortBindings}}");
    assert!(
        ports.contains("8080/tcp"),
        "override port not published: {ports}"
    );
    assert!(inspect(&web, "{{json .Config.Env}}").contains("FROM_OVERRIDE=yes"));
    // Stop takes the same project down (and a second start the fast path).
    hal(&rig).args(["module", "stop", &m]).code(0);
    assert!(rig::containers(&m).is_empty());
}

/// `COMPOSE_FILE` and `COMPOSE_PROFILES` in the directory's `.env` pick the files and profiles.
#[test]
fn compose_file_and_profiles_in_dotenv_are_honoured() {
    let Some(rig) = rig::engine() else { return };
    let m = rig.stack("cfile", stack().service("web").keeps_running());
    rig.write(
        &m,
        "extra.yaml",
        &stack()
            .service("worker")
            .keeps_running()
            .service("tool")
            .keeps_running()
            .profile("tools")
            .service("debug")
            .keeps_running()
            .profile("debug")
            .to_string(),
    );
    rig.write(
        &m,
        ".env",
        "COMPOSE_FILE=compose.yaml:extra.yaml\nCOMPOSE_PROFILES=tools\n",
    );
    hal(&rig).args(["module", "start", &m]).code(0);
    let st = rig.status(&m).code(0);
    let mut names: Vec<String> = st
        .services()
        .iter()
        .map(|s| s["name"].as_str().unwrap().to_string())
        .collect();
    names.sort();
    assert_eq!(names, ["tool", "web", "worker"], "{st}");
    // A COMPOSE_FILE naming a missing file: a clear error naming it, nothing started.
    hal(&rig).args(["module", "stop", &m]).code(0);
    rig.write(&m, ".env", "COMPOSE_FILE=compose.yaml:gone.yaml\n");
    let bad = hal(&rig).args(["module", "start", &m]).code(1);
    assert!(
        bad.stderr.contains("gone.yaml") && bad.stderr.contains(".env:1"),
        "{bad}"
    );
    assert!(rig::containers(&m).is_empty(), "started half-way");
}

/// Edits to an included file and to an env file in a sub-folder are applied by the next start.
#[test]
fn included_file_and_subfolder_env_file_edits_are_applied() {
    let Some(rig) = rig::engine() else { return };
    roomy(&rig);
    let m = rig.stack(
        "incl",
        stack()
            .top("include:\n  - parts/worker.yaml")
            .service("web")
            .keeps_running()
            .env_file("env/app.env"),
    );
    std::fs::create_dir_all(rig.root.join(&m).join("env")).unwrap();
    std::fs::create_dir_all(rig.root.join(&m).join("parts")).unwrap();
    let worker = |v: &str| {
        stack()
            .service("worker")
            .keeps_running()
            .environment("LEVEL", v)
            .to_string()
    };
    rig.write(&m, "env/app.env", "NAME=one\n");
    rig.write(&m, "parts/worker.yaml", &worker("1"));
    hal(&rig).args(["module", "start", &m]).code(0);
    let (web, wk) = (format!("{m}-web-1"), format!("{m}-worker-1"));
    assert!(inspect(&web, "{{json .Config.Env}}").contains("NAME=one"));
    // Settled for the fast path: only the change check can send the next start
    // through compose.
    rig::past_first_second(&m);

    rig.write(&m, "env/app.env", "NAME=two\n");
    hal(&rig).args(["module", "start", &m]).code(0);
    let env = inspect(&web, "{{json .Config.Env}}");
    assert!(
        env.contains("NAME=two"),
        "sub-folder env file edit not applied: {env}"
    );

    rig::past_first_second(&m);
    rig.write(&m, "parts/worker.yaml", &worker("2"));
    hal(&rig).args(["module", "start", &m]).code(0);
    let env = inspect(&wk, "{{json .Config.Env}}");
    assert!(
        env.contains("LEVEL=2"),
        "included file edit not applied: {env}"
    );

    // A missing env file: refused up front, naming the file and the line.
    hal(&rig).args(["module", "stop", &m]).code(0);
    std::fs::remove_file(rig.root.join(&m).join("env/app.env")).unwrap();
    let bad = hal(&rig).args(["module", "start", &m]).code(1);
    assert!(
        bad.stderr.contains("compose.yaml:9") && bad.stderr.contains("env/app.env"),
        "{bad}"
    );
    assert!(rig::containers(&m).is_empty(), "started half-way");
}

/// A compose file compose rejects: exit 1 with compose's own words, nothing started.
#[test]
fn a_compose_file_compose_rejects_is_reported_in_its_words() {
    let Some(rig) = rig::engine() else { return };
    let m = rig.stack(
        "rej",
        stack()
            .service("web")
            .keeps_running()
            .line("no_such_key: 1"),
    );
    let bad = hal(&rig).args(["module", "start", &m]).code(1);
    assert!(bad.stderr.contains("no_such_key"), "{bad}");
    assert!(rig::containers(&m).is_empty(), "started half-way");
}

/// A socat proxy of the engine's socket on a socket of the test's own; killed on drop.
struct Proxy {
    child: std::process::Child,
    socket: std::path::PathBuf,
}

impl Proxy {
    fn start(dir: &std::path::Path) -> Proxy {
        let socket = dir.join("p.sock");
        let child = std::process::Command::new("socat")
            .arg(format!("UNIX-LISTEN:{},fork", socket.display()))
            .arg("UNIX-CONNECT:/var/run/docker.sock")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("socat (scripts/provision.sh installs it)");
        assert!(eventually(Duration::from_secs(5), || socket.exists()));
        Proxy { child, socket }
    }

    fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.socket);
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.stop();
    }
}

/// With a docker context current in the CLI config, hal and its compose child
/// both use that context's engine; an unknown context and ssh:// are refused (exit 2).
#[test]
fn hal_and_compose_use_the_current_context() {
    let Some(mut rig) = rig::engine() else { return };
    let Some(()) = rig::need("socat", "-V") else {
        return;
    };
    let mut proxy = Proxy::start(&rig.dir);
    let cfg = rig.dir.join("dockercfg");
    std::fs::create_dir_all(&cfg).unwrap();
    let host = format!("unix://{}", proxy.socket.display());
    let cfg_s = cfg.display().to_string();
    let made = docker(&[
        "--config",
        &cfg_s,
        "context",
        "create",
        "halproxy",
        "--docker",
        &format!("host={host}"),
    ]);
    assert!(made.contains("halproxy"), "docker context create: {made}");
    docker(&["--config", &cfg_s, "context", "use", "halproxy"]);
    // A compose spy that records which engine each compose child was told to use.
    let log = rig.dir.join("compose-env.log");
    let spy = rig::script(
        &rig.dir,
        "compose-spy",
        &format!(
            "#!/bin/sh\necho \"DOCKER_HOST=$DOCKER_HOST DOCKER_CONTEXT=$DOCKER_CONTEXT: $*\" >> '{}'\nexec docker compose \"$@\"\n",
            log.display()
        ),
    );
    rig.env
        .push(("HAL_COMPOSE".into(), spy.display().to_string()));
    rig.env.push(("DOCKER_CONFIG".into(), cfg_s.clone()));
    let m = rig.stack("ctx", stack().service("web").keeps_running());
    let ctx_env = |h: rig::run::Hal| h.env_remove("DOCKER_HOST").env_remove("DOCKER_CONTEXT");

    let doc = ctx_env(hal(&rig).args(["doctor"])).run();
    assert!(
        doc.stdout.contains(&host) && doc.stdout.contains("context halproxy"),
        "doctor does not name the context's endpoint: {doc}"
    );
    ctx_env(hal(&rig).args(["module", "start", &m])).code(0);
    let calls = std::fs::read_to_string(&log).unwrap_or_default();
    // Every call but the version probe (which reaches no engine) is told the context's endpoint.
    let engine_calls: Vec<&str> = calls
        .lines()
        .filter(|l| !l.ends_with(": version --short"))
        .collect();
    assert!(engine_calls.iter().any(|l| l.contains(" up -d")), "{calls}");
    assert!(
        engine_calls
            .iter()
            .all(|l| l.starts_with(&format!("DOCKER_HOST={host} DOCKER_CONTEXT=:"))),
        "{calls}"
    );
    assert_eq!(ctx_env(hal(&rig)).status(&[&m]).state(), "active");

    // Without the proxy the context's engine is gone: hal says so, naming it.
    proxy.stop();
    let gone = ctx_env(hal(&rig).args(["module", "status", &m])).code(6);
    assert!(gone.stderr.contains(&host), "{gone}");
    let _proxy = Proxy::start(&rig.dir);
    ctx_env(hal(&rig).args(["module", "stop", &m])).code(0);

    let bad = ctx_env(hal(&rig).args(["module", "start", &m]))
        .env("DOCKER_CONTEXT", "no-such-context")
        .code(2);
    assert!(bad.stderr.contains("no-such-context"), "{bad}");
    let ssh = hal(&rig)
        .args(["module", "start", &m])
        .env("DOCKER_HOST", "ssh://me@far")
        .code(2);
    assert!(ssh.stderr.contains("ssh://"), "{ssh}");
    assert!(rig::containers(&m).is_empty(), "started half-way");
}

/// `name:` or `COMPOSE_PROJECT_NAME` asking for another project name: `list` warns, `doctor` fails it.
#[test]
fn a_project_name_other_than_the_directory_is_shown() {
    let Some(rig) = rig::engine() else { return };
    let m = rig.stack("named", stack().top("name: elsewhere").service("web"));
    let list = hal(&rig).args(["module", "list"]).code(0);
    assert!(
        list.stderr
            .contains("name: says the project is \"elsewhere\"")
            && list.stderr.contains(&m),
        "{list}"
    );
    rig.write(&m, ".env", "COMPOSE_PROJECT_NAME=other\n");
    let doc = hal(&rig).args(["doctor"]).run();
    assert!(
        doc.stdout
            .contains("COMPOSE_PROJECT_NAME says the project is \"other\""),
        "{doc}"
    );
    assert_ne!(doc.code, Some(0), "{doc}");
}

/// `COMPOSE_FILE=${COMPOSE_FILE:-…}` in `.env` (issue 33) reads as compose reads
/// it: the module is a stack, both files start, an edit to the second goes through
/// compose, and `COMPOSE_FILE` in hal's environment wins, as in compose.
#[test]
fn compose_file_in_dotenv_is_interpolated_as_compose_does() {
    let Some(rig) = rig::engine() else { return };
    roomy(&rig);
    let m = rig.stack_file("cfdef", "app.yaml", stack().service("web").keeps_running());
    let worker = |v: &str| {
        stack()
            .service("worker")
            .keeps_running()
            .environment("LEVEL", v)
            .to_string()
    };
    rig.write(&m, "extra.yaml", &worker("1"));
    rig.write(
        &m,
        ".env",
        "# the files, unless the caller names them\nCOMPOSE_FILE=${COMPOSE_FILE:-app.yaml:extra.yaml}\n",
    );
    let list = hal(&rig).args(["--json", "module", "list"]).code(0);
    let entry = list.json()["modules"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == m.as_str())
        .cloned()
        .unwrap_or_default();
    assert_eq!(
        (entry["kind"].as_str(), entry["valid"].as_bool()),
        (Some("stack"), Some(true)),
        "{list}"
    );
    hal(&rig).args(["module", "start", &m]).code(0);
    let wk = format!("{m}-worker-1");
    assert!(inspect(&wk, "{{json .Config.Env}}").contains("LEVEL=1"));
    rig::past_first_second(&m);
    let same = hal(&rig).args(["--json", "module", "start", &m]).code(0);
    assert_eq!(same.json()["modules"][0]["changed"], false, "{same}");

    rig.write(&m, "extra.yaml", &worker("2"));
    let edited = hal(&rig).args(["--json", "module", "start", &m]).code(0);
    assert_eq!(edited.json()["modules"][0]["changed"], true, "{edited}");
    let env = inspect(&wk, "{{json .Config.Env}}");
    assert!(
        env.contains("LEVEL=2"),
        "extra.yaml edit not applied: {env}"
    );

    // Named by hal's environment, the files are those, for hal and compose alike.
    hal(&rig).args(["module", "stop", &m]).code(0);
    hal(&rig)
        .env("COMPOSE_FILE", "app.yaml")
        .args(["module", "start", &m])
        .code(0);
    assert_eq!(rig::containers(&m), [format!("{m}-web-1")]);
    let st = hal(&rig)
        .env("COMPOSE_FILE", "app.yaml")
        .status(&[&m])
        .code(0);
    assert_eq!(st.state(), "active", "{st}");
}
