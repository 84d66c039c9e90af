//! Whether systemctl can reach its manager: what its complaints mean, and what stops `--user` from reaching the user bus.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::host::init::ManagerHealth;
use crate::module::config::Scope;

/// How long one of `doctor`'s questions to systemctl may take.
const ASK_AT_MOST: Duration = Duration::from_secs(5);

/// What `is-system-running` answers when the manager is there.
const REACHABLE: [&str; 6] = [
    "running",
    "degraded",
    "starting",
    "initializing",
    "maintenance",
    "stopping",
];

/// Why the manager of `scope` cannot be asked at all, found without asking it.
pub(super) fn health_before_asking(scope: Scope) -> Option<ManagerHealth> {
    if scope == Scope::User && std::env::var_os("XDG_RUNTIME_DIR").is_none_or(|v| v.is_empty()) {
        return Some(ManagerHealth::Down {
            why: "XDG_RUNTIME_DIR is not set, so the user manager cannot be reached".into(),
            hint:
                "run hal in the user's login session, or export XDG_RUNTIME_DIR=/run/user/$(id -u) \
(and `loginctl enable-linger USER` so the user manager runs without a session)"
                    .into(),
        });
    }
    if which::which("systemctl").is_err() {
        return Some(ManagerHealth::Down {
            why: "systemctl not found".into(),
            hint: "host modules are systemd units: install systemd, or drop the host modules from the config".into(),
        });
    }
    None
}

/// The manager's health from its `is-system-running` answer (or why there was none).
pub(super) fn health(scope: Scope, answer: Result<String, NoAnswer>) -> ManagerHealth {
    let why = match answer {
        Ok(state) if REACHABLE.contains(&state.as_str()) => {
            return ManagerHealth::Up {
                note: (state == "degraded").then(|| "some unit failed: systemctl --failed".into()),
                state,
            };
        }
        Ok(word) => word,
        Err(e) => e.to_string(),
    };
    ManagerHealth::Down {
        why: format!("{} is not reachable: {why}", scope.manager()),
        hint: unreachable_hint(scope),
    }
}

fn unreachable_hint(scope: Scope) -> String {
    match scope {
        Scope::System => "system-scope host modules need systemd running as PID 1".into(),
        Scope::User => {
            let user = ["USER", "LOGNAME"]
                .iter()
                .find_map(|v| std::env::var(v).ok().filter(|u| !u.is_empty()))
                .unwrap_or_else(|| "$USER".to_string());
            format!("start the user manager: `loginctl enable-linger {user}`, then log in again")
        }
    }
}

/// Why systemctl gave no answer.
#[derive(Debug, thiserror::Error)]
pub(super) enum NoAnswer {
    #[error("no answer within {}s", ASK_AT_MOST.as_secs())]
    Late,
    #[error("run systemctl: {0}")]
    Run(std::io::Error),
    #[error("no output")]
    Silent,
    /// Its last words on stderr.
    #[error("{0}")]
    Said(String),
}

/// Runs a systemctl command and returns its first stdout line, or why it could not answer.
pub(super) async fn answer(cmd: tokio::process::Command) -> Result<String, NoAnswer> {
    let out = match crate::host::init::run(cmd, ASK_AT_MOST).await {
        Ok(Some(out)) => out,
        Ok(None) => return Err(NoAnswer::Late),
        Err(e) => return Err(NoAnswer::Run(e)),
    };
    let stdout = String::from_utf8_lossy(&out.stdout);
    let first = stdout.lines().next().unwrap_or("").trim();
    if !first.is_empty() {
        // is-system-running exits non-zero for every state but running: its word is the answer.
        return Ok(first.to_string());
    }
    let words = crate::host::init::last_words(&String::from_utf8_lossy(&out.stderr));
    Err(if words.is_empty() {
        NoAnswer::Silent
    } else {
        NoAnswer::Said(words)
    })
}

/// The effective uid of this process (the owner of `/proc/self`).
pub(super) fn current_uid() -> Option<u32> {
    std::fs::metadata("/proc/self").ok().map(|m| m.uid())
}

/// What systemctl's stderr says went wrong.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Complaint {
    /// The bus or the manager could not be reached.
    Unreachable(String),
    /// systemd is not PID 1.
    NotBooted,
    NotFound,
    Permission(String),
    JobFailed(String),
    Other(String),
}

/// Sorts systemctl's stderr (in the C locale) into a [`Complaint`].
pub(super) fn classify(scope: Scope, stderr: &str) -> Complaint {
    let words = crate::host::init::last_words(stderr);
    let has = |s: &str| stderr.contains(s);
    if has("has not been booted with systemd") {
        return Complaint::NotBooted;
    }
    if has("Failed to connect to bus")
        || has("Failed to connect to user scope bus")
        || has("Failed to connect to system scope bus")
        || has("Transport endpoint is not connected")
        || has("Connection refused")
        || has("Connection timed out")
        || has("No medium found")
    {
        return Complaint::Unreachable(words);
    }
    if has("Access denied")
        || has("Interactive authentication required")
        || has("Permission denied")
        || has("Operation not permitted")
    {
        // `Failed to start x.service: Access denied` (systemd adds a "See system logs" line).
        let first = stderr.lines().next().unwrap_or_default().trim();
        return match scope {
            Scope::System => Complaint::Permission(first.trim_end_matches('.').to_string()),
            Scope::User => Complaint::Other(words),
        };
    }
    if has(" not found") || has(" not loaded") {
        return Complaint::NotFound;
    }
    if has("Job for ") {
        // `Job for x.service failed because the control process exited with error code.`
        let first = stderr.lines().next().unwrap_or_default().trim();
        return Complaint::JobFailed(first.trim_end_matches('.').to_string());
    }
    Complaint::Other(words)
}

pub(super) fn manager_name(scope: Scope) -> &'static str {
    match scope {
        Scope::User => "user manager",
        Scope::System => "systemd",
    }
}

/// The message for a manager systemctl could not reach.
pub(super) fn unreachable_message(scope: Scope, why: &str, env: &BusEnv) -> String {
    match scope {
        Scope::System => format!("systemd not reachable: {why}"),
        Scope::User => match user_bus_problem(env) {
            Some(m) => m,
            None => format!(
                "user manager not reachable: {why}: run as the user in a login session, or export XDG_RUNTIME_DIR={}",
                env.default_runtime_dir()
            ),
        },
    }
}

/// What decides whether `systemctl --user` can reach the user manager.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct BusEnv {
    pub uid: Option<u32>,
    pub user: String,
    /// `XDG_RUNTIME_DIR`, when set and not empty.
    pub runtime_dir: Option<PathBuf>,
    /// The owner of `runtime_dir`, when it exists.
    pub runtime_owner: Option<u32>,
    /// `DBUS_SESSION_BUS_ADDRESS` is set.
    pub bus_address: bool,
    /// `$XDG_RUNTIME_DIR/bus` or `$XDG_RUNTIME_DIR/systemd/private` exists.
    pub bus_socket: bool,
    /// `/run/user/UID/bus` exists (where a login session would point).
    pub default_bus: bool,
    /// `SUDO_USER`, when hal runs under sudo for another user.
    pub sudo_user: Option<String>,
}

impl BusEnv {
    /// Reads the environment and the file system.
    pub(super) fn read() -> BusEnv {
        let uid = current_uid();
        let runtime_dir = std::env::var_os("XDG_RUNTIME_DIR")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from);
        let runtime_owner = runtime_dir
            .as_ref()
            .and_then(|d| std::fs::metadata(d).ok())
            .map(|m| m.uid());
        let bus_socket = runtime_dir
            .as_ref()
            .is_some_and(|d| d.join("bus").exists() || d.join("systemd").join("private").exists());
        let default_bus = uid.is_some_and(|u| Path::new(&format!("/run/user/{u}/bus")).exists());
        BusEnv {
            uid,
            user: crate::util::sys::user_name(),
            runtime_dir,
            runtime_owner,
            bus_address: std::env::var_os("DBUS_SESSION_BUS_ADDRESS")
                .is_some_and(|v| !v.is_empty()),
            bus_socket,
            default_bus,
            sudo_user: std::env::var("SUDO_USER")
                .ok()
                .filter(|u| !u.is_empty() && u != "root"),
        }
    }

    fn default_runtime_dir(&self) -> String {
        match self.uid {
            Some(u) => format!("/run/user/{u}"),
            None => "/run/user/$(id -u)".into(),
        }
    }
}

/// Why the user manager cannot be reached, from the environment alone, with the fix.
pub(super) fn user_bus_problem(env: &BusEnv) -> Option<String> {
    let home = env.default_runtime_dir();
    let linger = if env.default_bus {
        String::new()
    } else {
        format!(
            " (no user manager runs for {} yet: log in once, or `loginctl enable-linger {}`)",
            env.user, env.user
        )
    };
    match &env.runtime_dir {
        None if env.bus_address => None,
        None if env.sudo_user.is_some() && env.uid == Some(0) => Some(format!(
            "user manager not reachable: XDG_RUNTIME_DIR is not set (running under sudo): run hal as {} without sudo, since user units live in that user's own manager",
            env.sudo_user.as_deref().unwrap_or_default()
        )),
        None => Some(format!(
            "user manager not reachable: XDG_RUNTIME_DIR is not set (running under sudo or cron?): run as the user in a login session, or export XDG_RUNTIME_DIR={home}{linger}"
        )),
        Some(dir) => {
            if let (Some(owner), Some(uid)) = (env.runtime_owner, env.uid)
                && owner != uid
            {
                return Some(format!(
                    "user manager not reachable: XDG_RUNTIME_DIR={} belongs to uid {owner}, not to this user (uid {uid}; running under su or sudo?): run as the user in a login session, or export XDG_RUNTIME_DIR={home}{linger}",
                    dir.display()
                ));
            }
            if env.bus_socket || env.bus_address {
                return None;
            }
            Some(format!(
                "user manager not reachable: no user bus in XDG_RUNTIME_DIR={} (is the user manager running? `systemctl start user@{}` as root, or `loginctl enable-linger {}`)",
                dir.display(),
                env.uid.map_or("UID".into(), |u| u.to_string()),
                env.user
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn systemctl_complaints() {
        assert_eq!(
            classify(Scope::User, "Failed to connect to bus: No medium found\n"),
            Complaint::Unreachable("Failed to connect to bus: No medium found".into())
        );
        assert_eq!(
            classify(
                Scope::System,
                "System has not been booted with systemd as init system (PID 1). Can't operate.\n"
            ),
            Complaint::NotBooted
        );
        assert_eq!(
            classify(
                Scope::System,
                "Failed to start x.service: Unit x.service not found.\n"
            ),
            Complaint::NotFound
        );
        assert_eq!(
            classify(
                Scope::System,
                "Failed to start x.service: Access denied\nSee system logs and 'systemctl status x.service' for details.\n"
            ),
            Complaint::Permission("Failed to start x.service: Access denied".into())
        );
        assert_eq!(
            classify(
                Scope::System,
                "Job for x.service failed because the control process exited with error code.\nSee \"systemctl status x.service\" for details.\n"
            ),
            Complaint::JobFailed(
                "Job for x.service failed because the control process exited with error code"
                    .into()
            )
        );
    }

    fn env() -> BusEnv {
        BusEnv {
            uid: Some(1000),
            user: "ana".into(),
            runtime_dir: Some("/run/user/1000".into()),
            runtime_owner: Some(1000),
            bus_address: false,
            bus_socket: true,
            default_bus: true,
            sudo_user: None,
        }
    }

    #[test]
    fn user_bus_problems_say_the_fix() {
        assert_eq!(user_bus_problem(&env()), None);
        let unset = BusEnv {
            runtime_dir: None,
            ..env()
        };
        let m = user_bus_problem(&unset).unwrap();
        assert!(m.contains("XDG_RUNTIME_DIR is not set (running under sudo or cron?)"));
        assert!(m.ends_with("export XDG_RUNTIME_DIR=/run/user/1000"), "{m}");
        assert_eq!(
            user_bus_problem(&BusEnv {
                bus_address: true,
                ..unset.clone()
            }),
            None
        );
        let m = user_bus_problem(&BusEnv {
            default_bus: false,
            ..unset.clone()
        })
        .unwrap();
        assert!(m.contains("loginctl enable-linger ana"), "{m}");
        let m = user_bus_problem(&BusEnv {
            uid: Some(0),
            sudo_user: Some("ana".into()),
            ..unset
        })
        .unwrap();
        assert!(
            m.ends_with("(running under sudo): run hal as ana without sudo, since user units live in that user's own manager"),
            "{m}"
        );
        let m = user_bus_problem(&BusEnv {
            runtime_owner: Some(0),
            ..env()
        })
        .unwrap();
        assert!(m.contains("belongs to uid 0"), "{m}");
        let m = user_bus_problem(&BusEnv {
            bus_socket: false,
            ..env()
        })
        .unwrap();
        assert!(m.contains("no user bus"), "{m}");
    }
}
