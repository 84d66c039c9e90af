//! The compose CLI, used only to create, recreate and remove containers from a compose file.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use anyhow::{Context, bail};

pub(crate) mod config_hash;
mod detect;
mod service_order;
mod service_refs;
use tokio::process::Command;

use crate::docker::endpoint::Endpoint;
use crate::module::ServiceImage;

/// Which generation of compose answers.
#[derive(Copy, Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub(crate) enum Flavor {
    V1,
    V2,
}

/// A compose command line prefix, e.g. `docker compose` or `docker-compose`.
#[derive(Clone, Debug)]
pub(crate) struct Compose {
    pub program: PathBuf,
    pub prefix: Vec<String>,
    pub flavor: Flavor,
    pub version: String,
    /// How messages name it: `docker compose` (the plugin too), `docker-compose`, or `HAL_COMPOSE`.
    pub label: String,
}

/// Whether `up` of one service makes new containers when nothing changed.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Fresh {
    /// Compose's own rule: recreate what changed, start the rest as it is.
    IfChanged,
    /// `--force-recreate`: the containers there cannot be started as they are.
    Always,
}

/// One compose project: its name and directory (compose finds the files).
#[derive(Clone, Debug)]
pub(crate) struct Project<'a> {
    pub name: &'a str,
    pub dir: &'a Path,
}

impl Compose {
    /// `docker compose -p NAME` plus `args`, run in the project's directory
    /// with no `-f`: compose finds the files there by its own rules (the
    /// default file and its override, or `COMPOSE_FILE`; `.env`;
    /// `COMPOSE_PROFILES`), exactly as a person running it there would.
    pub(crate) fn command(
        &self,
        project: &Project<'_>,
        endpoint: &Endpoint,
        args: &[&str],
    ) -> Command {
        let mut cmd = Command::new(&self.program);
        cmd.args(&self.prefix)
            .arg("-p")
            .arg(project.name)
            .args(args)
            .current_dir(project.dir)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .env("COMPOSE_ANSI", "never")
            .env("NO_COLOR", "1");
        // Exactly hal's engine, whatever this process's variables or the CLI's context say.
        for (key, value) in endpoint.child_env() {
            match value {
                Some(v) => cmd.env(key, v),
                None => cmd.env_remove(key),
            };
        }
        cmd
    }

    /// `up -d --remove-orphans`, with `--pull never` where the compose generation has it (hal pulls itself).
    pub(crate) async fn up(
        &self,
        project: &Project<'_>,
        endpoint: &Endpoint,
    ) -> anyhow::Result<()> {
        let mut args = vec!["up", "-d", "--remove-orphans"];
        if self.flavor == Flavor::V2 {
            args.extend(["--pull", "never"]);
        }
        self.run(project, endpoint, &args)
            .await
            .map(drop)
            .context("compose up")
    }

    /// `down --remove-orphans`: containers and the project network go, named
    /// volumes stay. `grace` is `-t`: how long a container may take to stop
    /// before SIGKILL (compose's default is the service's `stop_grace_period`, else 10 s).
    pub(crate) async fn down(
        &self,
        project: &Project<'_>,
        endpoint: &Endpoint,
        grace: Option<Duration>,
    ) -> anyhow::Result<()> {
        let t = grace.map(seconds);
        let mut args = vec!["down", "--remove-orphans"];
        if let Some(t) = &t {
            args.extend(["-t", t]);
        }
        self.run(project, endpoint, &args)
            .await
            .map(drop)
            .context("compose down")
    }

    /// `up -d --no-deps SERVICE`: creates or starts one service's containers
    /// (recreating them when their configuration changed), nothing else.
    /// With [`Fresh::Always`], `--force-recreate`: new containers even when
    /// nothing changed, for a container the engine refuses to start as it is.
    pub(crate) async fn up_service(
        &self,
        project: &Project<'_>,
        endpoint: &Endpoint,
        service: &str,
        fresh: Fresh,
    ) -> anyhow::Result<()> {
        self.up_services(project, endpoint, &[service], fresh).await
    }

    /// `up -d --no-deps SERVICE...`: [`Compose::up_service`] for several
    /// services in one compose run (compose orders them by their dependencies).
    pub(crate) async fn up_services(
        &self,
        project: &Project<'_>,
        endpoint: &Endpoint,
        services: &[&str],
        fresh: Fresh,
    ) -> anyhow::Result<()> {
        let mut args = vec!["up", "-d", "--no-deps"];
        if self.flavor == Flavor::V2 {
            args.extend(["--pull", "never"]);
        }
        if fresh == Fresh::Always {
            args.push("--force-recreate");
        }
        // v1's parser takes no `--`: a name that reads as a flag is refused.
        if let Some(s) = services.iter().find(|s| s.starts_with('-')) {
            anyhow::bail!("compose up {s}: a service name starting with `-` reads as a flag");
        }
        args.extend(services);
        self.run(project, endpoint, &args)
            .await
            .map(drop)
            .with_context(|| format!("compose up {}", services.join(" ")))
    }

    /// `stop [-t N] SERVICE` then `rm -f SERVICE`: one service's containers
    /// go, as `down` takes a whole project's (compose v1 has no `down
    /// SERVICE`); the network stays for the rest of the project.
    pub(crate) async fn remove_service(
        &self,
        project: &Project<'_>,
        endpoint: &Endpoint,
        service: &str,
        grace: Option<Duration>,
    ) -> anyhow::Result<()> {
        let t = grace.map(seconds);
        let mut stop = vec!["stop"];
        if let Some(t) = &t {
            stop.extend(["-t", t]);
        }
        stop.push(service);
        self.run(project, endpoint, &stop)
            .await
            .with_context(|| format!("compose stop {service}"))?;
        self.run(project, endpoint, &["rm", "-f", service])
            .await
            .map(drop)
            .with_context(|| format!("compose rm {service}"))
    }

    /// The project's service names, as compose resolves the files (`config --services`).
    pub(crate) async fn services(
        &self,
        project: &Project<'_>,
        endpoint: &Endpoint,
    ) -> anyhow::Result<Vec<String>> {
        let out = self
            .run(project, endpoint, &["config", "--services"])
            .await
            .context("compose config")?;
        Ok(out
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(str::to_string)
            .collect())
    }

    /// The services of a project and their images, as compose resolves the file.
    pub(crate) async fn images(
        &self,
        project: &Project<'_>,
        endpoint: &Endpoint,
    ) -> anyhow::Result<Vec<ServiceImage>> {
        let out = self.config(project, endpoint).await?;
        match self.flavor {
            Flavor::V2 => from_v2_json(&out),
            Flavor::V1 => Ok(from_v1_yaml(&out)),
        }
    }

    /// The resolved project as compose prints it (v2: JSON, v1: YAML): the one
    /// reader of it, which `images`, `resolved_doc`, `model` and `resolved` parse.
    pub(crate) async fn config(
        &self,
        project: &Project<'_>,
        endpoint: &Endpoint,
    ) -> anyhow::Result<String> {
        let args: &[&str] = match self.flavor {
            Flavor::V2 => &["config", "--format", "json"],
            Flavor::V1 => &["config"],
        };
        self.run(project, endpoint, args)
            .await
            .context("compose config")
    }

    /// Runs compose and turns a failure into compose's own words.
    pub(crate) async fn run(
        &self,
        project: &Project<'_>,
        endpoint: &Endpoint,
        args: &[&str],
    ) -> anyhow::Result<String> {
        let out = self
            .command(project, endpoint, args)
            .output()
            .await
            .with_context(|| format!("run {}", self.display()))?;
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        if out.status.success() {
            return Ok(stdout);
        }
        let stderr = String::from_utf8_lossy(&out.stderr);
        bail!(
            "{} exited with {}: {}",
            self.display(),
            out.status
                .code()
                .map_or("a signal".to_string(), |c| format!("status {c}")),
            last_words(&stderr, &stdout)
        )
    }

    /// `docker compose` or `docker-compose`, for messages.
    pub(crate) fn display(&self) -> String {
        self.label.clone()
    }
}

/// A grace period as compose's `-t` takes it: whole seconds, rounded up.
fn seconds(d: Duration) -> String {
    let up = u64::from(d.subsec_nanos() > 0);
    (d.as_secs() + up).to_string()
}

/// The most telling lines of compose's output: its last non-empty lines, without progress noise.
pub(crate) fn last_words(stderr: &str, stdout: &str) -> String {
    let text = if stderr.trim().is_empty() {
        stdout
    } else {
        stderr
    };
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .filter(|l| !is_progress(l))
        .collect();
    let keep = &lines[lines.len().saturating_sub(3)..];
    if keep.is_empty() {
        "no output".to_string()
    } else {
        keep.join("; ")
    }
}

fn is_progress(line: &str) -> bool {
    let words = [
        " Creating",
        " Created",
        " Starting",
        " Started",
        " Stopping",
        " Stopped",
        " Removing",
        " Removed",
        " Running",
        " Recreate",
        " Recreated",
        " Waiting",
        " Healthy",
        " Pulling",
        " Pulled",
    ];
    (line.starts_with("Container ") || line.starts_with("Network ") || line.starts_with("Volume "))
        && words.iter().any(|w| line.contains(w))
        && !line.contains("Error")
}

/// Reads services from `docker compose config --format json` (v2).
pub(crate) fn from_v2_json(text: &str) -> anyhow::Result<Vec<ServiceImage>> {
    let doc: serde_json::Value = serde_json::from_str(text)
        .map_err(|e| anyhow::anyhow!("compose config printed something that is not JSON: {e}"))?;
    let Some(services) = doc.get("services").and_then(|s| s.as_object()) else {
        return Ok(Vec::new());
    };
    Ok(services
        .iter()
        .map(|(name, s)| ServiceImage {
            service: name.clone(),
            image: s.get("image").and_then(|i| i.as_str()).map(str::to_string),
            build: s.get("build").is_some_and(|b| !b.is_null()),
            gated: s
                .get("depends_on")
                .and_then(|d| d.as_object())
                .is_some_and(|deps| {
                    deps.values().any(|d| {
                        d.get("condition")
                            .and_then(|c| c.as_str())
                            .is_some_and(|c| c != "service_started")
                    })
                }),
            after: service_order::of_service(s),
            replicas: replicas_of(s),
        })
        .collect())
}

/// Reads services from `docker-compose config` (v1), whose YAML output is
/// normalised: services at two spaces, their keys at four.
pub(crate) fn from_v1_yaml(text: &str) -> Vec<ServiceImage> {
    let mut deps = service_order::of_v1_yaml(text);
    let mut out: Vec<ServiceImage> = Vec::new();
    let mut in_services = false;
    for line in text.lines() {
        if !line.starts_with(' ') && !line.trim().is_empty() {
            in_services = line.trim_end() == "services:";
            continue;
        }
        if !in_services {
            continue;
        }
        let indent = line.len() - line.trim_start().len();
        let body = line.trim();
        if indent == 2 && body.ends_with(':') {
            let service = unquote(body.trim_end_matches(':')).to_string();
            out.push(ServiceImage {
                after: deps.remove(&service).unwrap_or_default(),
                service,
                image: None,
                build: false,
                gated: false,
                replicas: 1,
            });
        } else if indent >= 8
            && (body == "condition: service_healthy"
                || body == "condition: service_completed_successfully")
            && let Some(last) = out.last_mut()
        {
            last.gated = true;
        } else if indent == 4
            && let Some(last) = out.last_mut()
        {
            if let Some(v) = body.strip_prefix("image:") {
                last.image = Some(unquote(v.trim()).to_string());
            } else if body.starts_with("build:") {
                last.build = true;
            } else if let Some(n) = body.strip_prefix("scale:")
                && let Ok(n) = n.trim().parse()
            {
                last.replicas = n;
            }
        }
    }
    out
}

/// A service's container count in compose's JSON: `scale`, else
/// `deploy.replicas`, else 1.
fn replicas_of(s: &serde_json::Value) -> u32 {
    let n = |v: Option<&serde_json::Value>| v.and_then(serde_json::Value::as_u64);
    n(s.get("scale"))
        .or_else(|| n(s.get("deploy").and_then(|d| d.get("replicas"))))
        .map_or(1, |n| u32::try_from(n).unwrap_or(u32::MAX))
}

fn unquote(s: &str) -> &str {
    s.trim_matches(|c| c == '\'' || c == '"')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grace_is_whole_seconds_rounded_up() {
        assert_eq!(seconds(Duration::from_secs(5)), "5");
        assert_eq!(seconds(Duration::from_millis(1500)), "2");
        assert_eq!(seconds(Duration::ZERO), "0");
    }

    #[test]
    fn last_words_skips_progress() {
        let err = " Container web-1  Creating\n Container web-1  Error\nError response from daemon: boom\n";
        assert_eq!(
            last_words(err, ""),
            "Container web-1  Error; Error response from daemon: boom"
        );
        assert_eq!(last_words("", ""), "no output");
    }

    #[test]
    fn v2_json_and_v1_yaml_agree() {
        let json = r#"{"name":"p","services":{"web":{"image":"hal-fixture:latest"},"app":{"build":{"context":"."},"image":"p-app"}}}"#;
        let mut v2 = from_v2_json(json).unwrap();
        v2.sort_by(|a, b| a.service.cmp(&b.service));
        let yaml = "services:\n  app:\n    build:\n      context: /x\n    image: p-app\n  web:\n    image: hal-fixture:latest\n    restart: always\nversion: '3'\n";
        let v1 = from_v1_yaml(yaml);
        assert_eq!(v1, v2);
        assert!(v1[0].build && !v1[1].build);
    }

    #[test]
    fn replicas_come_from_scale_or_deploy() {
        let json = r#"{"services":{"a":{"scale":2},"b":{"deploy":{"replicas":3}},"c":{}}}"#;
        let mut v = from_v2_json(json).unwrap();
        v.sort_by(|a, b| a.service.cmp(&b.service));
        let n: Vec<u32> = v.iter().map(|s| s.replicas).collect();
        assert_eq!(n, [2, 3, 1]);
        let yaml = "services:\n  a:\n    image: x\n    scale: 4\n";
        assert_eq!(from_v1_yaml(yaml)[0].replicas, 4);
    }
}
