//! systemd as the init of host modules: `systemctl [--user]` and `journalctl`, parsed into typed results.

mod adopt;
mod bus;
pub(crate) mod journal;
pub(crate) mod show;

use std::path::Path;
use std::time::Duration;

use futures_util::future::{BoxFuture, FutureExt};

use self::bus::{
    BusEnv, Complaint, classify, current_uid, manager_name, unreachable_message, user_bus_problem,
};
use self::journal::{journal_args, parse_journal_line};
use self::show::{PROPERTIES, parse_show};
use super::{
    Adopt, Init, InitError, Instance, JournalQuery, LoadProblem, ManagerHealth, UnitStatus,
};
use crate::error::HalError;
use crate::logs::stream::Lines;
use crate::module::config::Scope;

/// `systemctl show` and `reset-failed` answer at once unless the manager is stuck.
const QUICK: Duration = Duration::from_secs(15);
/// How long a diagnosis waits for journald to store what it was sent.
const SYNC_AT_MOST: Duration = Duration::from_secs(1);
/// A journal entry as JSON may be long (`--all` spells binary messages as byte arrays).
const MAX_JSON_LINE: usize = 8 * crate::logs::line::MAX_LINE;

/// The system manager, or the calling user's manager.
#[derive(Clone, Debug)]
pub(crate) struct Systemd {
    scope: Scope,
}

impl Systemd {
    pub(crate) fn new(scope: Scope) -> Systemd {
        Systemd { scope }
    }

    /// `systemctl [--user] --no-pager ARGS...`.
    fn systemctl(&self, args: &[&str]) -> tokio::process::Command {
        let mut all: Vec<String> = Vec::with_capacity(args.len() + 2);
        if self.scope == Scope::User {
            all.push("--user".into());
        }
        all.push("--no-pager".into());
        all.extend(args.iter().map(|a| (*a).to_string()));
        let mut cmd = command("systemctl", &all);
        // Timestamps in UTC whatever the node's zone, so they parse without a zone database.
        cmd.env("TZ", "UTC");
        cmd
    }

    /// Runs `systemctl ARGS` within `timeout`; a failure becomes a typed error.
    async fn call(&self, args: &[&str], unit: &str, timeout: Duration) -> anyhow::Result<String> {
        self.reachable()?;
        let what = format!("systemctl {}", args.first().copied().unwrap_or_default());
        let out = super::run(self.systemctl(args), timeout)
            .await
            .map_err(|e| anyhow::anyhow!("{what}: cannot run systemctl: {e}"))?;
        let Some(out) = out else {
            return Err(InitError::Timeout(timeout).into());
        };
        if out.status.success() {
            return Ok(String::from_utf8_lossy(&out.stdout).into_owned());
        }
        let stderr = String::from_utf8_lossy(&out.stderr);
        Err(self.failure(&stderr, unit, out.status.code()))
    }

    /// Turns systemctl's complaint into an error a person can act on.
    fn failure(&self, stderr: &str, unit: &str, code: Option<i32>) -> anyhow::Error {
        match classify(self.scope, stderr) {
            Complaint::Unreachable(why) => {
                HalError::InitUnreachable(unreachable_message(self.scope, &why, &BusEnv::read()))
                    .into()
            }
            Complaint::NotBooted => HalError::InitUnreachable(NOT_BOOTED.into()).into(),
            Complaint::NotFound => InitError::NotFound(unit.to_string()).into(),
            Complaint::Permission(why) => InitError::Permission(why).into(),
            Complaint::JobFailed(why) => InitError::JobFailed(why).into(),
            Complaint::Other(why) if why.is_empty() => InitError::Other(format!(
                "systemctl exited with status {}",
                code.map_or("?".into(), |c| c.to_string())
            ))
            .into(),
            Complaint::Other(why) => InitError::Other(why).into(),
        }
    }

    async fn job(
        &self,
        verb: &'static str,
        unit: &str,
        wait: bool,
        timeout: Duration,
    ) -> anyhow::Result<()> {
        let mut args = vec!["--no-ask-password", verb];
        if !wait {
            args.push("--no-block");
        }
        args.extend(["--", unit]);
        self.call(&args, unit, timeout).await.map(drop)
    }
}

/// A `systemctl` or `journalctl` child: the shared settings, and systemd's
/// own switches for no colour, no pager and no hyperlinks.
fn command(program: &str, args: &[String]) -> tokio::process::Command {
    let mut cmd = super::command(program, args);
    cmd.env("SYSTEMD_COLORS", "0")
        .env("SYSTEMD_PAGER", "")
        .env("SYSTEMD_URLIFY", "0");
    cmd
}

const NOT_BOOTED: &str = "systemd is not running on this node (no /run/systemd/system): host modules need systemd as init";

impl Adopt for Systemd {
    fn instances<'a>(&'a self, template: &'a str) -> BoxFuture<'a, anyhow::Result<Vec<Instance>>> {
        self.list_instances(template).boxed()
    }

    fn disarm<'a>(&'a self, unit: &'a str, timeout: Duration) -> BoxFuture<'a, anyhow::Result<()>> {
        self.disarm_unit(unit, timeout).boxed()
    }

    fn hand_over<'a>(
        &'a self,
        unit: &'a str,
        timeout: Duration,
    ) -> BoxFuture<'a, anyhow::Result<()>> {
        self.hand_over_unit(unit, timeout).boxed()
    }
}

impl Init for Systemd {
    fn name(&self) -> &'static str {
        "systemd"
    }

    fn unit_problem(&self, unit: &str) -> Option<String> {
        unit_problem(unit)
    }

    fn health(&self) -> BoxFuture<'_, ManagerHealth> {
        async move {
            if let Some(down) = bus::health_before_asking(self.scope) {
                return down;
            }
            bus::health(
                self.scope,
                bus::answer(self.systemctl(&["is-system-running"])).await,
            )
        }
        .boxed()
    }

    fn load_problem<'a>(&'a self, unit: &'a str) -> BoxFuture<'a, Option<LoadProblem>> {
        async move {
            let args = ["show", "--property=LoadState", "--value", unit];
            let load = bus::answer(self.systemctl(&args)).await.ok()?;
            let user = if self.scope == Scope::User {
                "--user "
            } else {
                ""
            };
            (load != "loaded").then(|| LoadProblem {
                words: format!("LoadState={load}"),
                look: format!("systemctl {user}cat {unit} shows what systemd sees"),
            })
        }
        .boxed()
    }

    fn reachable(&self) -> Result<(), HalError> {
        if !Path::new("/run/systemd/system").is_dir() {
            return Err(HalError::InitUnreachable(NOT_BOOTED.into()));
        }
        if self.scope == Scope::User
            && let Some(why) = user_bus_problem(&BusEnv::read())
        {
            return Err(HalError::InitUnreachable(why));
        }
        Ok(())
    }

    fn show<'a>(&'a self, units: &'a [String]) -> BoxFuture<'a, anyhow::Result<Vec<UnitStatus>>> {
        async move {
            if units.is_empty() {
                return Ok(Vec::new());
            }
            let mut args = vec!["show", "-p", PROPERTIES, "--"];
            args.extend(units.iter().map(String::as_str));
            let text = match self.call(&args, &units[0], QUICK).await {
                Err(e) if matches!(e.downcast_ref(), Some(InitError::Timeout(_))) => {
                    return Err(HalError::InitUnreachable(format!(
                        "{} did not answer `systemctl show` within {}s",
                        manager_name(self.scope),
                        QUICK.as_secs()
                    ))
                    .into());
                }
                r => r?,
            };
            Ok(parse_show(&text, units))
        }
        .boxed()
    }

    fn start<'a>(
        &'a self,
        unit: &'a str,
        wait: bool,
        timeout: Duration,
    ) -> BoxFuture<'a, anyhow::Result<()>> {
        self.job("start", unit, wait, timeout).boxed()
    }

    fn stop<'a>(&'a self, unit: &'a str, timeout: Duration) -> BoxFuture<'a, anyhow::Result<()>> {
        async move {
            match self.job("stop", unit, true, timeout).await {
                // Stopping a unit the manager has not loaded leaves nothing to stop;
                // the caller's `show` says whether the unit exists at all.
                Err(e) if matches!(e.downcast_ref(), Some(InitError::NotFound(_))) => Ok(()),
                r => r,
            }
        }
        .boxed()
    }

    fn reset_failed<'a>(&'a self, unit: &'a str) -> BoxFuture<'a, anyhow::Result<()>> {
        async move {
            let args = ["--no-ask-password", "reset-failed", "--", unit];
            match self.call(&args, unit, QUICK).await {
                // An unloaded unit has no failed state to forget.
                Err(e) if matches!(e.downcast_ref(), Some(InitError::NotFound(_))) => Ok(()),
                r => r.map(drop),
            }
        }
        .boxed()
    }

    fn settle_logs(&self) -> BoxFuture<'_, ()> {
        async {
            // journald answers `--sync` once everything queued before it is
            // stored, service output still in its stream buffers included.
            // Only root may ask; for others this fails quietly. A journal kept
            // busy by a chatty service may not answer for long: wait a second
            // at most, as the caller reads again until the lines stop changing.
            let cmd = command("journalctl", &["--sync".to_string()]);
            let _ = super::run(cmd, SYNC_AT_MOST).await;
        }
        .boxed()
    }

    fn adoption(&self) -> Option<&dyn Adopt> {
        Some(self)
    }

    fn enable_hint(&self, units: &[&str]) -> String {
        let (sudo, flag) = match self.scope {
            Scope::User => ("", "--user "),
            Scope::System => ("sudo ", ""),
        };
        format!("{sudo}systemctl {flag}enable --now {}", units.join(" "))
    }

    fn journal(&self, unit: &str, q: JournalQuery) -> Lines {
        use futures_util::stream::StreamExt;
        let args = journal_args(self.scope, unit, current_uid(), q);
        let cmd = command("journalctl", &args);
        let label = format!("journalctl for {unit}");
        super::line_stream(cmd, label.clone(), MAX_JSON_LINE, parse_journal_line)
            .map(move |item| {
                item.map_err(|e| {
                    let text = crate::error::OneLine(&e).to_string();
                    if text.contains("insufficient permissions") {
                        anyhow::anyhow!("{label}: {}", crate::logs::access::denied())
                    } else {
                        e
                    }
                })
            })
            .boxed()
    }
}

/// Why a unit name is unusable for systemd, or `None`: one of the suffixes
/// hal can start and wait for, and only the characters systemd allows.
pub(crate) fn unit_problem(unit: &str) -> Option<String> {
    const SUFFIXES: [&str; 4] = [".service", ".target", ".socket", ".timer"];
    if !SUFFIXES
        .iter()
        .any(|s| unit.len() > s.len() && unit.ends_with(s))
    {
        return Some(format!(
            "{unit:?} is not a unit name (expected e.g. \"notifier.service\")"
        ));
    }
    if unit.starts_with('-')
        || !unit
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "@._-:\\".contains(c))
    {
        return Some(format!("{unit:?} has characters a unit name cannot have"));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unit_names_follow_systemd() {
        assert_eq!(unit_problem("notifier.service"), None);
        assert_eq!(unit_problem("hal-rescue.timer"), None);
        assert_eq!(unit_problem("getty@tty1.service"), None);
        assert!(
            unit_problem(".service")
                .unwrap()
                .contains("is not a unit name")
        );
        assert!(
            unit_problem("notifier")
                .unwrap()
                .contains("is not a unit name")
        );
        assert!(
            unit_problem("x; rm -rf /.service")
                .unwrap()
                .contains("characters a unit name cannot have")
        );
        assert!(unit_problem("-x.service").is_some());
    }
}
