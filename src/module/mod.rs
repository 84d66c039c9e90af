//! The domain: what a module is, how the node's modules are found and named, and what hal reports about them.
//!
//! Everything here is plain data and pure rules: no engine, no init, no printing, and no file or environment
//! read outside `load.rs`, the one reader of the node's own files (the config, the services root, a stack's `.env`).

pub(crate) mod compose_files;
pub(crate) mod config;
pub(crate) mod container_trouble;
pub(crate) mod deps;
pub(crate) mod diagnosed;
pub(crate) mod dotenv;
pub(crate) mod fix;
pub(crate) mod interpolate;
pub(crate) mod inventory;
pub mod keys;
pub(crate) mod last_run;
pub(crate) mod load;
pub(crate) mod name;
pub(crate) mod node_state;
pub(crate) mod order;
pub(crate) mod outcome;
pub(crate) mod pattern;
pub(crate) mod progress;
pub(crate) mod reason;
pub(crate) mod recorded_causes;
pub(crate) mod run_state;
pub(crate) mod schedule;
pub(crate) mod secret_names;
pub(crate) mod service_action;
pub(crate) mod state;
pub(crate) mod status;
pub(crate) mod target;
pub(crate) mod update_tally;
pub(crate) mod warning;

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error::HalError;
use crate::module::config::Scope;

/// What a module is and how it is driven.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A compose project in `dir`, described by `file`.
    Stack { dir: PathBuf, file: PathBuf },
    /// An init unit.
    Host { unit: String, scope: Scope },
    /// Something that looks like a module but cannot be one; `reason` says why.
    Invalid { reason: String },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Module {
    pub name: String,
    pub kind: Kind,
}

impl Module {
    /// A Docker Compose stack (not a host unit, not invalid).
    pub(crate) fn is_stack(&self) -> bool {
        matches!(self.kind, Kind::Stack { .. })
    }

    /// An init unit (not a stack, not invalid).
    pub(crate) fn is_host(&self) -> bool {
        matches!(self.kind, Kind::Host { .. })
    }

    /// Found but not drivable: an invalid declaration.
    pub(crate) fn is_invalid(&self) -> bool {
        matches!(self.kind, Kind::Invalid { .. })
    }

    /// A stack's directory (where compose runs); `None` for any other kind.
    pub(crate) fn stack_dir(&self) -> Option<&Path> {
        self.stack_files().map(|(dir, _)| dir)
    }

    /// A stack's directory and compose file; `None` for any other kind.
    pub(crate) fn stack_files(&self) -> Option<(&Path, &Path)> {
        match &self.kind {
            Kind::Stack { dir, file } => Some((dir, file)),
            Kind::Host { .. } | Kind::Invalid { .. } => None,
        }
    }

    /// A host module's unit and scope; `None` for any other kind.
    pub(crate) fn host_unit(&self) -> Option<(&str, Scope)> {
        match &self.kind {
            Kind::Host { unit, scope } => Some((unit, *scope)),
            Kind::Stack { .. } | Kind::Invalid { .. } => None,
        }
    }

    /// Why an invalid module cannot be one; `None` for a stack or a host.
    pub(crate) fn invalid_reason(&self) -> Option<&str> {
        match &self.kind {
            Kind::Invalid { reason } => Some(reason),
            Kind::Stack { .. } | Kind::Host { .. } => None,
        }
    }

    /// `stack`, `host` or `invalid`, as shown in tables and JSON.
    pub(crate) fn kind_name(&self) -> &'static str {
        self.kind_tag().as_str()
    }

    /// The kind without its details, for comparing and publishing.
    pub(crate) fn kind_tag(&self) -> KindTag {
        match self.kind {
            Kind::Stack { .. } => KindTag::Stack,
            Kind::Host { .. } => KindTag::Host,
            Kind::Invalid { .. } => KindTag::Invalid,
        }
    }

    /// Where the module is defined: the compose file, or `unit (scope)`.
    pub(crate) fn source(&self) -> String {
        match &self.kind {
            Kind::Stack { file, .. } => file.display().to_string(),
            Kind::Host { unit, scope } => format!("{unit} ({})", scope.as_str()),
            Kind::Invalid { .. } => String::new(),
        }
    }

    /// `Err` with the reason for a module hal found but cannot drive (an
    /// invalid declaration): what every verb answers for it.
    pub(crate) fn usable(&self) -> Result<(), HalError> {
        match &self.kind {
            Kind::Invalid { reason } => Err(self.invalid(reason.clone())),
            Kind::Stack { .. } | Kind::Host { .. } => Ok(()),
        }
    }

    /// What a start of a stack whose directory is gone answers: only `stop`
    /// applies to what still runs of it (the stack backend looks).
    pub(crate) fn dir_gone(&self) -> HalError {
        let dir = match &self.kind {
            Kind::Stack { dir, .. } => dir.display().to_string(),
            Kind::Host { .. } | Kind::Invalid { .. } => String::new(),
        };
        self.invalid(format!(
            "its directory {dir} is gone (renamed or removed); `hal stop {}` removes what still runs of it",
            self.name
        ))
    }

    /// The one place a module's refusal is made.
    fn invalid(&self, reason: String) -> HalError {
        HalError::InvalidModule {
            name: self.name.clone(),
            reason,
        }
    }
}

/// One service's image, as compose resolves the file.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ServiceImage {
    pub service: String,
    pub image: Option<String>,
    /// The service has `build:`: compose builds it, hal does not pull it.
    pub build: bool,
    /// The service waits for another (`depends_on` with a `condition`), so its
    /// containers must be started by compose, in order.
    #[serde(default)]
    pub gated: bool,
    /// How many containers compose runs for it (`scale`, `deploy.replicas`; 1 by default).
    #[serde(default = "one")]
    pub replicas: u32,
    /// The services it starts after, as compose orders a start: `depends_on`
    /// and the implicit ones (`network_mode`/`ipc`/`pid: service:X`,
    /// `volumes_from`, `links`). Empty in a record from an older hal.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub after: Vec<Dependency>,
}

fn one() -> u32 {
    1
}

/// One service another starts after, and what it waits for.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Dependency {
    pub service: String,
    pub condition: Condition,
}

/// What a dependent waits for before it starts (compose's `condition`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
#[expect(clippy::enum_variant_names, reason = "compose's own words, service_*")]
pub enum Condition {
    /// `service_started` (and every implicit dependency).
    ServiceStarted,
    /// `service_healthy`: its healthcheck passed.
    ServiceHealthy,
    /// `service_completed_successfully`: it ran and exited 0.
    ServiceCompletedSuccessfully,
}

impl Condition {
    /// Compose's word; `None` for one it does not have.
    pub fn parse(word: &str) -> Option<Condition> {
        match word.trim() {
            "service_started" => Some(Condition::ServiceStarted),
            "service_healthy" => Some(Condition::ServiceHealthy),
            "service_completed_successfully" => Some(Condition::ServiceCompletedSuccessfully),
            _ => None,
        }
    }
}

/// A module's kind without its details: `stack`, `host` or `invalid`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum KindTag {
    Stack,
    Host,
    Invalid,
}

impl KindTag {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            KindTag::Stack => "stack",
            KindTag::Host => "host",
            KindTag::Invalid => "invalid",
        }
    }
}
