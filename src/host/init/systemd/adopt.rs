//! Letting go of a template's instances (`hal adopt`): finding them, and the runtime drop-in under which systemd stops a unit without running its stop command.
//!
//! The hand-over, proven in a systemd container with the `hal-module@`
//! template (whose `ExecStop=` is `compose down`): a drop-in in the manager's
//! runtime control directory empties `ExecStop=`/`ExecStopPost=`, sets
//! `KillSignal=SIGKILL` (the attached `compose up` then dies without stopping
//! a container) and `Restart=no`; then `daemon-reload`, `disable`, `stop`;
//! then the drop-in goes, `daemon-reload`, `reset-failed`. Every step can be
//! repeated. The drop-in lives under `/run`, so one left by a hal killed
//! half-way is gone at the next boot too, and `instances` ([`super::Adopt`]) finds it
//! before that, so that the next `hal adopt` finishes the job.
//!
//! `systemctl kill` alone would not do: once the main process dies, systemd
//! still runs `ExecStop=` (the contract of a service that started), and
//! `Restart=on-failure` would start it again.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;

use super::{QUICK, Systemd};
use crate::host::init::{Activity, Init, Instance};
use crate::module::config::Scope;
use crate::util::atomic;

/// The drop-in's file name: sorted after any other, so its settings win.
pub(super) const DROP_IN: &str = "zz-hal-adopt.conf";

const DROP_IN_TEXT: &str = "# Written by `hal adopt` while it takes this unit over; removed when it is done.\n\
[Service]\nExecStop=\nExecStopPost=\nKillMode=control-group\nKillSignal=SIGKILL\nRestart=no\n";

/// Where runtime drop-ins of the manager live (highest priority, gone at reboot).
fn control_dir(scope: Scope) -> Option<PathBuf> {
    match scope {
        Scope::System => Some(PathBuf::from("/run/systemd/system.control")),
        Scope::User => std::env::var_os("XDG_RUNTIME_DIR")
            .filter(|v| !v.is_empty())
            .map(|d| PathBuf::from(d).join("systemd/user.control")),
    }
}

impl Systemd {
    /// Units whose hand-over drop-in is still in place, loaded or not.
    fn half_handed(&self, prefix: &str) -> Vec<String> {
        let Some(dir) = control_dir(self.scope) else {
            return Vec::new();
        };
        let Ok(entries) = std::fs::read_dir(&dir) else {
            return Vec::new();
        };
        entries
            .filter_map(Result::ok)
            .filter_map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                let unit = name.strip_suffix(".d")?.to_string();
                (unit.starts_with(prefix) && e.path().join(DROP_IN).exists()).then_some(unit)
            })
            .collect()
    }

    pub(super) async fn list_instances(&self, template: &str) -> anyhow::Result<Vec<Instance>> {
        let prefix = format!("{template}@");
        let pattern = format!("{prefix}*.service");
        let args = [
            "list-units",
            "--all",
            "--plain",
            "--no-legend",
            "--full",
            "--",
            &pattern,
        ];
        let text = self.call(&args, &pattern, QUICK).await?;
        let mut units: Vec<String> = text
            .lines()
            .filter_map(|l| l.split_whitespace().next())
            .filter(|u| u.starts_with(&prefix) && u.ends_with(".service"))
            .map(str::to_string)
            .collect();
        for u in self.half_handed(&prefix) {
            if !units.contains(&u) {
                units.push(u);
            }
        }
        units.sort();
        if units.is_empty() {
            return Ok(Vec::new());
        }
        let mut args = vec![
            "show",
            "-p",
            "Id,ActiveState,UnitFileState,ExecStart,DropInPaths",
            "--",
        ];
        args.extend(units.iter().map(String::as_str));
        let text = self.call(&args, &units[0], QUICK).await?;
        let left = self.half_handed(&prefix);
        Ok(parse_instances(&text, &prefix)
            .into_iter()
            .map(|mut i| {
                i.handing_over |= left.contains(&i.unit);
                i
            })
            .collect())
    }

    /// The drop-in's directory for `unit`.
    fn drop_in_dir(&self, unit: &str) -> anyhow::Result<PathBuf> {
        Ok(control_dir(self.scope)
            .context("XDG_RUNTIME_DIR is not set: the user manager's runtime directory is unknown")?
            .join(format!("{unit}.d")))
    }

    pub(super) async fn disarm_unit(&self, unit: &str, timeout: Duration) -> anyhow::Result<()> {
        self.reachable()?;
        let dir = self.drop_in_dir(unit)?;
        std::fs::create_dir_all(&dir).with_context(|| format!("create {}", dir.display()))?;
        let file = dir.join(DROP_IN);
        let (mode, sync) = (atomic::Mode::Umask(0o666), atomic::Sync::Durable);
        atomic::replace(&file, DROP_IN_TEXT.as_bytes(), mode, sync)
            .with_context(|| format!("write {}", file.display()))?;
        self.call(&["--no-ask-password", "daemon-reload"], unit, timeout)
            .await
            .map(drop)
    }

    pub(super) async fn hand_over_unit(&self, unit: &str, timeout: Duration) -> anyhow::Result<()> {
        self.disarm_unit(unit, timeout).await?;
        let dir = self.drop_in_dir(unit)?;
        let file = dir.join(DROP_IN);
        self.call(&["--no-ask-password", "disable", "--", unit], unit, timeout)
            .await?;
        self.job("stop", unit, true, timeout).await?;
        match std::fs::remove_file(&file) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e).with_context(|| format!("remove {}", file.display())),
        }
        let _ = std::fs::remove_dir(&dir);
        self.call(&["--no-ask-password", "daemon-reload"], unit, timeout)
            .await?;
        let args = ["--no-ask-password", "reset-failed", "--", unit];
        match self.call(&args, unit, QUICK).await {
            Err(e) if matches!(e.downcast_ref(), Some(super::InitError::NotFound(_))) => Ok(()),
            r => r.map(drop),
        }
    }
}

/// `systemctl show -p Id,ActiveState,UnitFileState,ExecStart,DropInPaths` of
/// several units, as instances of the template named by `prefix` (`hal-module@`).
pub(super) fn parse_instances(text: &str, prefix: &str) -> Vec<Instance> {
    text.split("\n\n")
        .filter_map(|block| {
            let get = |key: &str| {
                block
                    .lines()
                    .find_map(|l| l.strip_prefix(key)?.strip_prefix('='))
                    .unwrap_or_default()
            };
            let unit = get("Id").to_string();
            let instance = unit.strip_prefix(prefix)?.strip_suffix(".service")?;
            Some(Instance {
                instance: instance.to_string(),
                activity: Activity::from_word(get("ActiveState")),
                enabled: matches!(get("UnitFileState"), "enabled" | "enabled-runtime"),
                exec_start: argvs(get("ExecStart")),
                handing_over: get("DropInPaths")
                    .split_whitespace()
                    .any(|p| p.ends_with(&format!("/{DROP_IN}"))),
                unit,
            })
        })
        .collect()
}

/// The `argv[]=` of each command in an `ExecStart=` value.
fn argvs(value: &str) -> Vec<Vec<String>> {
    value
        .split("argv[]=")
        .skip(1)
        .map(|rest| {
            let end = rest.find(" ;").unwrap_or(rest.len());
            rest[..end].split_whitespace().map(str::to_string).collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn show_blocks_become_instances() {
        let text = "ExecStart={ path=docker ; argv[]=docker compose --project-directory /services/a --project-name a up --remove-orphans --pull missing ; ignore_errors=no ; start_time=[n/a] ; stop_time=[n/a] ; pid=85 ; code=(null) ; status=0/0 }\n\
Id=hal-module@a.service\nActiveState=active\nDropInPaths=\nUnitFileState=enabled\n\n\
ExecStart=\nId=hal-module@b.service\nActiveState=failed\n\
DropInPaths=/etc/x.conf /run/user/0/systemd/user.control/hal-module@b.service.d/zz-hal-adopt.conf\nUnitFileState=disabled\n\n\
Id=other.service\nActiveState=active\n";
        let got = parse_instances(text, "hal-module@");
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].instance, "a");
        assert_eq!(got[0].activity, Activity::Active);
        assert!(got[0].enabled && !got[0].handing_over);
        assert_eq!(
            got[0].exec_start[0][..3],
            ["docker", "compose", "--project-directory"]
        );
        assert_eq!(got[0].exec_start[0].len(), 10);
        assert_eq!(got[1].unit, "hal-module@b.service");
        assert_eq!(got[1].activity, Activity::Failed);
        assert!(!got[1].enabled && got[1].handing_over);
        assert!(got[1].exec_start.is_empty());
    }
}
