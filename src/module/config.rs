//! The TOML config file: what it may say, and errors that name the line and key (`load.rs` finds and reads it).

mod lines;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Deserializer};

use crate::error::HalError;
use crate::module::schedule::Schedule;
use lines::{describe, key_error, line_of_key};

/// How images are pulled before a start.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PullPolicy {
    /// Pull every image before starting; fall back to a cached image if the pull fails.
    Always,
    /// Pull only images that are not present locally.
    Missing,
    /// Never pull.
    Never,
}

impl PullPolicy {
    pub fn as_str(self) -> &'static str {
        match self {
            PullPolicy::Always => "always",
            PullPolicy::Missing => "missing",
            PullPolicy::Never => "never",
        }
    }
}

/// Which manager a host unit lives in: the calling user's (the default), or the system's.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    #[default]
    User,
    System,
}

impl Scope {
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::User => "user",
            Scope::System => "system",
        }
    }

    /// The manager in words: `the user manager`, `the system manager`.
    pub fn manager(self) -> &'static str {
        match self {
            Scope::User => "the user manager",
            Scope::System => "the system manager",
        }
    }
}

/// A start limit: at most `burst` starts in any `interval`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RestartLimit {
    pub burst: u32,
    #[serde(deserialize_with = "de_duration")]
    pub interval: Duration,
}

impl Default for RestartLimit {
    /// hal-module@'s StartLimitBurst=5 / StartLimitIntervalSec=120.
    fn default() -> Self {
        RestartLimit {
            burst: 5,
            interval: Duration::from_secs(120),
        }
    }
}

#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Defaults {
    pub pull: Option<PullPolicy>,
    pub restart: Option<RestartLimit>,
    /// How long `start` waits for `active` unless `--timeout` says otherwise.
    #[serde(default, deserialize_with = "de_opt_duration")]
    pub timeout: Option<Duration>,
    /// How long one image pull may take before it counts as failed.
    #[serde(default, deserialize_with = "de_opt_duration")]
    pub pull_timeout: Option<Duration>,
    /// The largest checkpoint an update may take (`2GiB`), unless a module's own says otherwise.
    #[serde(default, deserialize_with = "de_opt_size")]
    pub checkpoint_max: Option<u64>,
}

/// One `[module.NAME]` section: a host unit when `unit` is set, otherwise
/// settings for the discovered stack of that name.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModuleSection {
    pub unit: Option<String>,
    pub scope: Option<Scope>,
    pub pull: Option<PullPolicy>,
    pub restart: Option<RestartLimit>,
    #[serde(default, deserialize_with = "de_opt_duration")]
    pub timeout: Option<Duration>,
    #[serde(default)]
    pub critical: bool,
    #[serde(default)]
    pub after: Vec<String>,
    /// Modules this one needs running: started first, stopped after it.
    #[serde(default)]
    pub requires: Vec<String>,
    /// A command (program and arguments, never a shell string) run when the
    /// supervisor gives up on the module.
    #[serde(default)]
    pub on_failure: Vec<String>,
    /// `false`: `hal watch`'s scheduled updates leave this module alone.
    pub auto_update: Option<bool>,
    /// What an update checkpoints: compose volume keys and bind-mount sources
    /// (relative to the module's directory); unset: every local named volume
    /// and bind mount inside the directory; `[]`: nothing.
    pub checkpoint: Option<Vec<String>>,
    /// The largest checkpoint an update of this module may take.
    #[serde(default, deserialize_with = "de_opt_size")]
    pub checkpoint_max: Option<u64>,
    /// `true`: `update --all` and the scheduled updates leave the module;
    /// naming it to `hal update` is refused without `--force`.
    #[serde(default)]
    pub pin: bool,
}

#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    services_dir: Option<PathBuf>,
    metrics_file: Option<PathBuf>,
    #[serde(default, deserialize_with = "de_schedule")]
    auto_update: Schedule,
    auto_update_max_failures: Option<usize>,
    #[serde(default)]
    defaults: Defaults,
    #[serde(default)]
    module: BTreeMap<String, ModuleSection>,
}

/// The effective settings of one module after defaults are applied.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    pub pull: PullPolicy,
    pub limit: RestartLimit,
    pub timeout: Duration,
    pub pull_timeout: Duration,
}

/// The loaded config: the file (if any) plus where it came from.
#[derive(Debug, Default, Clone)]
pub struct Config {
    /// The file that was read, if one existed.
    pub path: Option<PathBuf>,
    pub services_dir: Option<PathBuf>,
    /// Where `hal watch` writes Prometheus metrics (none: it writes none).
    pub metrics_file: Option<PathBuf>,
    /// When `hal watch` updates the modules on its own (off: never).
    pub auto_update: Schedule,
    /// A scheduled update stops after this many modules failed to update (1 when unset).
    pub auto_update_max_failures: Option<usize>,
    pub defaults: Defaults,
    pub modules: BTreeMap<String, ModuleSection>,
    /// The file's text, for errors that name a key's line after parsing.
    text: String,
}

pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);
pub const DEFAULT_PULL_TIMEOUT: Duration = Duration::from_secs(300);
/// The largest checkpoint an update takes unless the config says otherwise: 8 GiB.
pub(crate) const DEFAULT_CHECKPOINT_MAX: u64 = 8 << 30;

/// What an update of one module checkpoints, and how much it may.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckpointSettings {
    /// The `checkpoint` key's entries (`None`: the default, every local volume
    /// and bind mount inside the module's directory).
    pub entries: Option<Vec<String>>,
    /// `checkpoint_max`, in bytes.
    pub max: u64,
}

impl Config {
    /// Parses config text; `path` is only used in messages.
    pub fn parse(text: &str, path: &Path) -> Result<Config, HalError> {
        let file: File = toml::from_str(text).map_err(|e| HalError::Config {
            path: path.display().to_string(),
            message: describe(text, &e),
        })?;
        let cfg = Config {
            path: Some(path.to_path_buf()),
            services_dir: file.services_dir,
            metrics_file: file.metrics_file,
            auto_update: file.auto_update,
            auto_update_max_failures: file.auto_update_max_failures,
            defaults: file.defaults,
            modules: file.module,
            text: text.to_string(),
        };
        cfg.check(text, path)?;
        Ok(cfg)
    }

    /// The error for a bad value of `key` (e.g. `module.web.unit`) found after
    /// parsing, worded as parsing words its own: file, line, key, message.
    pub fn key_error(&self, key: &str, message: String) -> HalError {
        let path = self.path.as_deref().unwrap_or(Path::new(""));
        key_error(&self.text, path, key, message)
    }

    fn check(&self, text: &str, path: &Path) -> Result<(), HalError> {
        let err = |key: &str, message: String| key_error(text, path, key, message);
        if self.auto_update_max_failures == Some(0) {
            return Err(err("auto_update_max_failures", "must be at least 1".into()));
        }
        let limits = std::iter::once(("defaults".to_string(), self.defaults.restart)).chain(
            self.modules
                .iter()
                .map(|(n, m)| (format!("module.{n}"), m.restart)),
        );
        for (table, limit) in limits {
            if let Some(l) = limit {
                if l.burst == 0 {
                    return Err(err(
                        &format!("{table}.restart"),
                        "burst must be at least 1".into(),
                    ));
                }
                if l.interval.is_zero() {
                    return Err(err(
                        &format!("{table}.restart"),
                        "interval must be longer than 0s".into(),
                    ));
                }
            }
        }
        let graph = crate::module::deps::Graph::new(self.declared_edges());
        if let Some(cycle) = graph.cycle() {
            let key = graph
                .edge(&cycle[0], &cycle[1])
                .map_or("after", |e| match e.origin {
                    crate::module::deps::Origin::Config { key, .. } => key,
                    crate::module::deps::Origin::Compose { .. } => "after",
                });
            return Err(err(
                &format!("module.{}.{key}", cycle[0]),
                format!("a cycle: {}", cycle.join(" → ")),
            ));
        }
        for (name, m) in &self.modules {
            if let Some(why) = crate::module::name::problem(name) {
                return Err(err(
                    &format!("module.{name}"),
                    format!("invalid module name: {why}"),
                ));
            }
            if m.scope.is_some() && m.unit.is_none() {
                return Err(err(
                    &format!("module.{name}.scope"),
                    "scope is only meaningful with unit = \"NAME.service\"".into(),
                ));
            }
            for (key, deps) in [("after", &m.after), ("requires", &m.requires)] {
                for dep in deps {
                    if let Some(why) = crate::module::name::problem(dep) {
                        return Err(err(
                            &format!("module.{name}.{key}"),
                            format!("{dep:?}: {why}"),
                        ));
                    }
                }
            }
        }
        Ok(())
    }

    /// The edges the config declares: `requires` (hard) and `after` (order
    /// only), each with its key's line.
    pub(crate) fn declared_edges(&self) -> Vec<crate::module::deps::Edge> {
        use crate::module::deps::{Edge, Origin, Strength, Tie};
        let mut out = Vec::new();
        for (name, m) in &self.modules {
            for (key, strength, deps) in [
                ("requires", Strength::Requires, &m.requires),
                ("after", Strength::After, &m.after),
            ] {
                let line = line_of_key(&self.text, &format!("module.{name}.{key}"));
                for dep in deps.iter().filter(|d| *d != name) {
                    out.push(Edge {
                        from: name.clone(),
                        to: dep.clone(),
                        strength,
                        tie: Tie::Declared,
                        origin: Origin::Config { key, line },
                    });
                }
            }
        }
        out
    }

    /// Whether `hal watch`'s scheduled updates include module `name` (its
    /// section's `auto_update`, true unless it says false).
    pub fn auto_update(&self, name: &str) -> bool {
        self.modules
            .get(name)
            .and_then(|m| m.auto_update)
            .unwrap_or(true)
    }

    /// What an update of module `name` checkpoints: its section's `checkpoint`,
    /// and `checkpoint_max` (its own, then `[defaults]`, then 8 GiB).
    pub fn checkpoint(&self, name: &str) -> CheckpointSettings {
        let own = self.modules.get(name);
        CheckpointSettings {
            entries: own.and_then(|m| m.checkpoint.clone()),
            max: own
                .and_then(|m| m.checkpoint_max)
                .or(self.defaults.checkpoint_max)
                .unwrap_or(DEFAULT_CHECKPOINT_MAX),
        }
    }

    /// Whether module `name`'s section says `pin = true`.
    pub fn pinned(&self, name: &str) -> bool {
        self.modules.get(name).is_some_and(|m| m.pin)
    }

    /// The settings of module `name`: its own section, then `[defaults]`, then hal's defaults.
    pub fn settings(&self, name: &str) -> Settings {
        let own = self.modules.get(name);
        Settings {
            pull: own
                .and_then(|m| m.pull)
                .or(self.defaults.pull)
                .unwrap_or(PullPolicy::Always),
            limit: own
                .and_then(|m| m.restart)
                .or(self.defaults.restart)
                .unwrap_or_default(),
            timeout: own
                .and_then(|m| m.timeout)
                .or(self.defaults.timeout)
                .unwrap_or(DEFAULT_TIMEOUT),
            pull_timeout: self.defaults.pull_timeout.unwrap_or(DEFAULT_PULL_TIMEOUT),
        }
    }
}

#[derive(Deserialize)]
#[serde(untagged)]
enum RawDuration {
    Text(String),
    Secs(u64),
}

fn de_duration<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
    match RawDuration::deserialize(d)? {
        RawDuration::Text(s) => crate::util::duration::parse(&s).map_err(serde::de::Error::custom),
        RawDuration::Secs(n) => Ok(Duration::from_secs(n)),
    }
}

fn de_schedule<'de, D: Deserializer<'de>>(d: D) -> Result<Schedule, D::Error> {
    let text = String::deserialize(d)?;
    Schedule::parse(&text).map_err(serde::de::Error::custom)
}

fn de_opt_size<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Raw {
        Text(String),
        Bytes(u64),
    }
    match Raw::deserialize(d)? {
        Raw::Text(s) => crate::util::size::parse(&s)
            .map(Some)
            .map_err(serde::de::Error::custom),
        Raw::Bytes(n) => Ok(Some(n)),
    }
}

fn de_opt_duration<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
    de_duration(d).map(Some)
}

#[cfg(test)]
mod tests;
