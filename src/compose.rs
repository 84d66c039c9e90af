//! The compose CLI, used only to create, recreate and remove containers from a compose file.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use anyhow::{Context, bail};
use tokio::process::Command;

/// Which generation of compose answers.
#[derive(Copy, Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub enum Flavor {
    V1,
    V2,
}

/// A compose command line prefix, e.g. `docker compose` or `docker-compose`.
#[derive(Clone, Debug)]
pub struct Compose {
    pub program: PathBuf,
    pub prefix: Vec<String>,
    pub flavor: Flavor,
    pub version: String,
}

/// One compose project: its name, directory and file.
#[derive(Clone, Debug)]
pub struct Project<'a> {
    pub name: &'a str,
    pub dir: &'a Path,
    pub file: &'a Path,
}

impl Compose {
    /// Finds compose: `HAL_COMPOSE` if set, else the v2 plugin (`docker compose`),
    /// else a `docker-compose` binary (which may itself be v1 or v2).
    pub async fn detect() -> anyhow::Result<Compose> {
        if let Some(spec) = std::env::var_os("HAL_COMPOSE").filter(|v| !v.is_empty()) {
            let spec = spec.to_string_lossy().into_owned();
            let mut words = spec.split_whitespace().map(str::to_string);
            let program = words.next().unwrap_or_default();
            let prefix: Vec<String> = words.collect();
            return probe(&program, prefix)
                .await
                .with_context(|| format!("HAL_COMPOSE={spec:?} does not answer `version`"));
        }
        if which::which("docker").is_ok()
            && let Ok(c) = probe("docker", vec!["compose".into()]).await
        {
            return Ok(c);
        }
        if which::which("docker-compose").is_ok() {
            return probe("docker-compose", Vec::new()).await;
        }
        bail!(
            "no compose found: install the Docker Compose plugin (v2) or docker-compose (v1), or set HAL_COMPOSE"
        )
    }

    /// `docker compose -f FILE --project-directory DIR -p NAME` plus `args`.
    pub fn command(&self, project: &Project<'_>, host: Option<&str>, args: &[&str]) -> Command {
        let mut cmd = Command::new(&self.program);
        cmd.args(&self.prefix)
            .arg("-f")
            .arg(project.file)
            .arg("--project-directory")
            .arg(project.dir)
            .arg("-p")
            .arg(project.name)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .env("COMPOSE_ANSI", "never")
            .env("NO_COLOR", "1");
        if let Some(h) = host {
            cmd.env("DOCKER_HOST", h);
        }
        cmd
    }

    /// `up -d --remove-orphans`, with `--pull` where the compose generation has it.
    pub async fn up(
        &self,
        project: &Project<'_>,
        host: Option<&str>,
        pull: Option<&str>,
    ) -> anyhow::Result<()> {
        let mut args = vec!["up", "-d", "--remove-orphans"];
        if let (Flavor::V2, Some(p)) = (self.flavor, pull) {
            args.extend(["--pull", p]);
        }
        self.run(project, host, &args)
            .await
            .map(drop)
            .context("compose up")
    }

    /// `down --remove-orphans`: containers and the project network go, named volumes stay.
    pub async fn down(&self, project: &Project<'_>, host: Option<&str>) -> anyhow::Result<()> {
        self.run(project, host, &["down", "--remove-orphans"])
            .await
            .map(drop)
            .context("compose down")
    }

    /// The services of a project and their images, as compose resolves the file.
    pub async fn images(
        &self,
        project: &Project<'_>,
        host: Option<&str>,
    ) -> anyhow::Result<Vec<crate::pull::ServiceImage>> {
        match self.flavor {
            Flavor::V2 => {
                let out = self
                    .run(project, host, &["config", "--format", "json"])
                    .await
                    .context("compose config")?;
                crate::pull::from_v2_json(&out)
            }
            Flavor::V1 => {
                let out = self
                    .run(project, host, &["config"])
                    .await
                    .context("compose config")?;
                Ok(crate::pull::from_v1_yaml(&out))
            }
        }
    }

    /// Runs compose and turns a failure into compose's own words.
    pub async fn run(
        &self,
        project: &Project<'_>,
        host: Option<&str>,
        args: &[&str],
    ) -> anyhow::Result<String> {
        let out = self
            .command(project, host, args)
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
    pub fn display(&self) -> String {
        let mut s = self.program.file_name().map_or_else(
            || self.program.display().to_string(),
            |f| f.to_string_lossy().into_owned(),
        );
        for p in &self.prefix {
            s.push(' ');
            s.push_str(p);
        }
        s
    }
}

/// The most telling lines of compose's output: its last non-empty lines, without progress noise.
pub fn last_words(stderr: &str, stdout: &str) -> String {
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

async fn probe(program: &str, prefix: Vec<String>) -> anyhow::Result<Compose> {
    let path = which::which(program).with_context(|| format!("{program} not found on PATH"))?;
    let out = Command::new(&path)
        .args(&prefix)
        .args(["version", "--short"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .output()
        .await
        .with_context(|| format!("run {program}"))?;
    if !out.status.success() {
        bail!(
            "`{program} version` failed: {}",
            last_words(&String::from_utf8_lossy(&out.stderr), "")
        );
    }
    let version = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let flavor = flavor_of(&version)
        .with_context(|| format!("{program} reports an unknown version {version:?}"))?;
    Ok(Compose {
        program: path,
        prefix,
        flavor,
        version: version.trim_start_matches('v').to_string(),
    })
}

/// `1.29.2` is v1; `2.26.1` or `v2.26.1` is v2 (and later majors behave as v2).
pub fn flavor_of(version: &str) -> Option<Flavor> {
    let v = version.trim().trim_start_matches('v');
    let major: u32 = v.split('.').next()?.trim().parse().ok()?;
    match major {
        0 => None,
        1 => Some(Flavor::V1),
        _ => Some(Flavor::V2),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_map_to_flavors() {
        assert_eq!(flavor_of("1.29.2"), Some(Flavor::V1));
        assert_eq!(flavor_of("2.26.1"), Some(Flavor::V2));
        assert_eq!(flavor_of("v2.30.0\n"), Some(Flavor::V2));
        assert_eq!(flavor_of("garbage"), None);
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
}
