//! Finding compose once per run: `HAL_COMPOSE`, else the docker CLI's compose plugin run directly, else `docker compose`, else `docker-compose`.
//!
//! The plugin is the same binary `docker compose` runs; calling it directly
//! saves the `docker` CLI process in front of every compose call (about half
//! of a compose call's client CPU on the benchmark node: BENCHMARKS.md, issue
//! 13). The plugin gets exactly hal's endpoint through its environment, as
//! every compose child does, so nothing the docker CLI would have told it is lost.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use anyhow::{Context, bail};
use tokio::process::Command;

use super::{Compose, Flavor, last_words};

/// Where the docker CLI looks for plugins after the config's
/// `cliPluginsExtraDirs` and `$DOCKER_CONFIG/cli-plugins` (docker/cli's
/// `defaultSystemPluginDirs` on Linux), in its order.
const SYSTEM_PLUGIN_DIRS: [&str; 4] = [
    "/usr/local/lib/docker/cli-plugins",
    "/usr/local/libexec/docker/cli-plugins",
    "/usr/lib/docker/cli-plugins",
    "/usr/libexec/docker/cli-plugins",
];

impl Compose {
    /// Finds compose: `HAL_COMPOSE` if set; else, when the docker CLI is on
    /// `PATH`, the compose plugin it would run for `docker compose`, run
    /// directly (or `docker compose` itself); else a `docker-compose` binary (which may itself be v1 or v2).
    pub(crate) async fn detect() -> anyhow::Result<Compose> {
        if let Some(spec) = std::env::var_os("HAL_COMPOSE").filter(|v| !v.is_empty()) {
            let spec = spec.to_string_lossy().into_owned();
            let mut words = spec.split_whitespace().map(str::to_string);
            let program = words.next().unwrap_or_default();
            let prefix: Vec<String> = words.collect();
            return probe(Path::new(&program), prefix, None)
                .await
                .with_context(|| format!("HAL_COMPOSE={spec:?} does not answer `version`"));
        }
        // Where `docker compose` would work, the plugin it would run is run directly.
        if which::which("docker").is_ok() {
            if let Some(plugin) = plugin_path()
                && let Ok(c) = probe(&plugin, Vec::new(), Some("docker compose")).await
            {
                return Ok(c);
            }
            if let Ok(c) = probe(Path::new("docker"), vec!["compose".into()], None).await {
                return Ok(c);
            }
        }
        if which::which("docker-compose").is_ok() {
            return probe(Path::new("docker-compose"), Vec::new(), None).await;
        }
        bail!(
            "no compose found: install the Docker Compose plugin (v2) or docker-compose (v1), or set HAL_COMPOSE"
        )
    }
}

/// The `docker-compose` plugin binary the docker CLI would run, searched in
/// the CLI's order: the config's `cliPluginsExtraDirs`, the config
/// directory's `cli-plugins`, then the system directories.
fn plugin_path() -> Option<PathBuf> {
    let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    let config_dir = var("DOCKER_CONFIG")
        .map(PathBuf::from)
        .or_else(|| var("HOME").map(|h| Path::new(&h).join(".docker")));
    plugin_dirs(config_dir.as_deref())
        .into_iter()
        .map(|d| d.join("docker-compose"))
        .find(|p| is_executable(p))
}

/// The directories the docker CLI searches for plugins, in its order.
fn plugin_dirs(config_dir: Option<&Path>) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    if let Some(cfg) = config_dir {
        if let Ok(text) = std::fs::read_to_string(cfg.join("config.json"))
            && let Ok(doc) = serde_json::from_str::<serde_json::Value>(&text)
            && let Some(extra) = doc.get("cliPluginsExtraDirs").and_then(|d| d.as_array())
        {
            dirs.extend(extra.iter().filter_map(|d| d.as_str()).map(PathBuf::from));
        }
        dirs.push(cfg.join("cli-plugins"));
    }
    dirs.extend(SYSTEM_PLUGIN_DIRS.iter().map(PathBuf::from));
    dirs
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Asks `program prefix… version --short` which compose this is. `label`
/// names it in messages (default: the program's file name and the prefix).
async fn probe(
    program: &Path,
    prefix: Vec<String>,
    label: Option<&str>,
) -> anyhow::Result<Compose> {
    let shown = program.display().to_string();
    let path = which::which(program).with_context(|| format!("{shown} not found on PATH"))?;
    let out = Command::new(&path)
        .args(&prefix)
        .args(["version", "--short"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .output()
        .await
        .with_context(|| format!("run {shown}"))?;
    if !out.status.success() {
        bail!(
            "`{shown} version` failed: {}",
            last_words(&String::from_utf8_lossy(&out.stderr), "")
        );
    }
    let version = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let flavor = flavor_of(&version)
        .with_context(|| format!("{shown} reports an unknown version {version:?}"))?;
    let label = label.map_or_else(
        || {
            let mut s = path.file_name().map_or_else(
                || path.display().to_string(),
                |f| f.to_string_lossy().into_owned(),
            );
            for p in &prefix {
                s.push(' ');
                s.push_str(p);
            }
            s
        },
        str::to_string,
    );
    Ok(Compose {
        program: path,
        prefix,
        flavor,
        version: version.trim_start_matches('v').to_string(),
        label,
    })
}

/// `1.29.2` is v1; `2.26.1` or `v2.26.1` is v2 (and later majors behave as v2).
fn flavor_of(version: &str) -> Option<Flavor> {
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
    fn plugin_dirs_follow_the_docker_cli_order() {
        let cfg = std::env::temp_dir().join(format!("hal-plugin-dirs-{}", std::process::id()));
        std::fs::create_dir_all(&cfg).unwrap();
        std::fs::write(
            cfg.join("config.json"),
            r#"{"cliPluginsExtraDirs": ["/opt/extra"]}"#,
        )
        .unwrap();
        let dirs = plugin_dirs(Some(&cfg));
        assert_eq!(dirs[0], PathBuf::from("/opt/extra"));
        assert_eq!(dirs[1], cfg.join("cli-plugins"));
        assert_eq!(dirs[2], PathBuf::from("/usr/local/lib/docker/cli-plugins"));
        assert_eq!(dirs.len(), 6);
        std::fs::write(cfg.join("config.json"), "not json").unwrap();
        assert_eq!(
            plugin_dirs(Some(&cfg)).len(),
            5,
            "a broken config adds nothing"
        );
        assert_eq!(plugin_dirs(None).len(), 4);
        std::fs::remove_dir_all(&cfg).unwrap();
    }
}
