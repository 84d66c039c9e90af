//! systemd as the init of host modules: `systemctl [--user]` and `journalctl`, parsed into typed results.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use futures_util::future::{BoxFuture, FutureExt};

use super::{Activity, Init, InitError, JournalQuery, Load, MainExit, UnitStatus};
use crate::error::HalError;
use crate::logs::line::{Line, Stream};
use crate::logs::stream::Lines;
use crate::module::config::Scope;
use crate::util::timefmt::{self, Stamp};

/// `systemctl show` and `reset-failed` answer at once unless the manager is stuck.
const QUICK: Duration = Duration::from_secs(15);
/// How long a diagnosis waits for journald to store what it was sent.
const SYNC_AT_MOST: Duration = Duration::from_secs(1);
/// The properties `show` asks for; see [`parse_show`].
const PROPERTIES: &str = "Id,Names,LoadState,LoadError,ActiveState,SubState,Result,\
ExecMainPID,ExecMainCode,ExecMainStatus,NRestarts,ActiveEnterTimestamp,StateChangeTimestamp";
/// A journal entry as JSON may be long (`--all` spells binary messages as byte arrays).
const MAX_JSON_LINE: usize = 8 * crate::logs::line::MAX_LINE;

/// The system manager, or the calling user's manager.
#[derive(Clone, Debug)]
pub struct Systemd {
    scope: Scope,
}

impl Systemd {
    pub fn new(scope: Scope) -> Systemd {
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
        let mut cmd = super::command("systemctl", &all);
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

const NOT_BOOTED: &str = "systemd is not running on this node (no /run/systemd/system): host modules need systemd as init";

impl Init for Systemd {
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

    fn restart<'a>(
        &'a self,
        unit: &'a str,
        timeout: Duration,
    ) -> BoxFuture<'a, anyhow::Result<()>> {
        self.job("restart", unit, true, timeout).boxed()
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
            let cmd = super::command("journalctl", &["--sync".to_string()]);
            let _ = super::run(cmd, SYNC_AT_MOST).await;
        }
        .boxed()
    }

    fn journal(&self, unit: &str, q: JournalQuery) -> Lines {
        use futures_util::stream::StreamExt;
        let args = journal_args(self.scope, unit, current_uid(), q);
        let cmd = super::command("journalctl", &args);
        super::line_stream(
            cmd,
            format!("journalctl for {unit}"),
            MAX_JSON_LINE,
            parse_journal_line,
        )
        .map(|item| {
            item.map_err(|e| {
                let text = crate::error::OneLine(&e).to_string();
                if text.contains("insufficient permissions") {
                    anyhow::anyhow!(
                        "{text}: reading this journal needs root or membership in the systemd-journal (or adm) group"
                    )
                } else {
                    e
                }
            })
        })
        .boxed()
    }
}

/// The journalctl arguments for one unit.
///
/// A user unit is matched over every journal file the caller may read (no
/// `--user`/`--system`): root's user units log to the system journal, while a
/// normal user's may be split into a per-user file; both are read this way.
/// See [`user_unit_matches`] for which entries are the unit's.
pub fn journal_args(scope: Scope, unit: &str, uid: Option<u32>, q: JournalQuery) -> Vec<String> {
    let mut a: Vec<String> = Vec::new();
    match (scope, uid) {
        (Scope::System, _) => a.extend(["--unit".into(), unit.to_string()]),
        (Scope::User, Some(uid)) => a.extend(user_unit_matches(unit, uid, q.pid)),
        (Scope::User, None) => a.extend(["--user-unit".into(), unit.to_string()]),
    }
    a.extend(
        [
            "--no-pager",
            "--quiet",
            "--all",
            "--output",
            "json",
            "--output-fields",
            "MESSAGE,PRIORITY",
        ]
        .map(String::from),
    );
    match (q.tail, q.follow) {
        (Some(n), _) => a.extend(["--lines".into(), n.to_string()]),
        (None, true) => a.extend(["--lines".into(), "all".into()]),
        (None, false) => {}
    }
    if let Some(s) = q.since {
        a.extend(["--since".into(), format!("@{s}")]);
    }
    if q.follow {
        a.push("--follow".into());
    }
    a
}

/// journalctl's own `--user-unit` matches, plus the lines of the unit's last
/// main process (`pid`, when known) filed under no unit at all.
///
/// journald learns a stream's unit from the writer's cgroup; when the process
/// is gone before journald looks (a service that fails at once, whose last
/// words matter most), a user unit's lines carry only `_PID` and `_UID`, and
/// `--user-unit` misses them. A system unit's lines still get `_SYSTEMD_UNIT`
/// from the system manager, so `--unit` needs no such help.
pub fn user_unit_matches(unit: &str, uid: u32, pid: Option<u32>) -> Vec<String> {
    let me = format!("_UID={uid}");
    let mut groups: Vec<Vec<String>> = vec![
        vec![format!("_SYSTEMD_USER_UNIT={unit}"), me.clone()],
        vec![format!("USER_UNIT={unit}"), me.clone()],
        vec![
            format!("COREDUMP_USER_UNIT={unit}"),
            me.clone(),
            "_UID=0".into(),
        ],
        vec![
            format!("OBJECT_SYSTEMD_USER_UNIT={unit}"),
            me.clone(),
            "_UID=0".into(),
        ],
    ];
    if let Some(pid) = pid {
        groups.push(vec![format!("_PID={pid}"), me]);
    }
    let mut out = Vec::new();
    for (i, g) in groups.into_iter().enumerate() {
        if i > 0 {
            out.push("+".to_string());
        }
        out.extend(g);
    }
    out
}

/// The effective uid of this process (the owner of `/proc/self`).
pub fn current_uid() -> Option<u32> {
    std::fs::metadata("/proc/self").ok().map(|m| m.uid())
}

/// One journal entry (`journalctl -o json`) as log lines: the message split at
/// newlines, PRIORITY 0–3 counted as stderr. Entries without a message give none.
pub fn parse_journal_line(json: &[u8]) -> Vec<Line> {
    let Ok(serde_json::Value::Object(entry)) = serde_json::from_slice(json) else {
        return Vec::new();
    };
    let message = match entry.get("MESSAGE") {
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(serde_json::Value::Array(bytes)) => {
            let raw: Vec<u8> = bytes
                .iter()
                .filter_map(|b| b.as_u64().and_then(|n| u8::try_from(n).ok()))
                .collect();
            String::from_utf8_lossy(&raw).into_owned()
        }
        _ => return Vec::new(),
    };
    let time = entry
        .get("__REALTIME_TIMESTAMP")
        .and_then(|v| v.as_str())
        .and_then(|s| s.parse::<i64>().ok())
        .map_or_else(Stamp::now, Stamp::from_micros);
    let stream = match entry
        .get("PRIORITY")
        .and_then(|v| v.as_str())
        .and_then(|s| s.parse::<u8>().ok())
    {
        Some(p) if p <= 3 => Stream::Stderr,
        _ => Stream::Stdout,
    };
    let body = message.strip_suffix('\n').unwrap_or(&message);
    body.split('\n')
        .map(|l| Line {
            time,
            stream,
            message: truncate(l.strip_suffix('\r').unwrap_or(l)),
        })
        .collect()
}

fn truncate(s: &str) -> String {
    if s.len() <= crate::logs::line::MAX_LINE {
        return s.to_string();
    }
    let mut end = crate::logs::line::MAX_LINE;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s[..end].to_string()
}

/// Parses `systemctl show -p PROPERTIES UNIT...`: one block per unit, in the
/// order asked, separated by blank lines. Blocks are matched to the units by
/// position, or by `Id`/`Names` if their count differs.
pub fn parse_show(text: &str, units: &[String]) -> Vec<UnitStatus> {
    let blocks: Vec<Vec<(&str, &str)>> = text
        .split("\n\n")
        .map(|b| {
            b.lines()
                .filter_map(|l| l.split_once('='))
                .collect::<Vec<_>>()
        })
        .filter(|b| !b.is_empty())
        .collect();
    units
        .iter()
        .enumerate()
        .map(|(i, unit)| {
            let named = |b: &&Vec<(&str, &str)>| {
                b.iter().any(|&(k, v)| {
                    (k == "Id" && v == unit) || (k == "Names" && v.split(' ').any(|n| n == unit))
                })
            };
            let block = if blocks.len() == units.len() {
                blocks.get(i)
            } else {
                blocks.iter().find(named)
            };
            match block {
                Some(b) => unit_status(unit, b),
                None => UnitStatus {
                    unit: unit.clone(),
                    load: Load::Error("systemctl show said nothing about it".into()),
                    activity: Activity::Other("unknown".into()),
                    words: "unknown".into(),
                    result: None,
                    main_exit: None,
                    main_pid: None,
                    restarts: None,
                    active_since: None,
                    changed: None,
                },
            }
        })
        .collect()
}

fn unit_status(unit: &str, props: &[(&str, &str)]) -> UnitStatus {
    let get = |key: &str| {
        props
            .iter()
            .find(|(k, _)| *k == key)
            .map_or("", |(_, v)| v.trim())
    };
    let load = match get("LoadState") {
        "loaded" | "stub" | "merged" => Load::Loaded,
        "not-found" => Load::NotFound,
        "masked" => Load::Masked,
        other => Load::Error(load_error(get("LoadError")).unwrap_or_else(|| other.to_string())),
    };
    let active = get("ActiveState");
    let activity = match active {
        "active" => Activity::Active,
        "activating" => Activity::Activating,
        "reloading" => Activity::Reloading,
        "deactivating" => Activity::Deactivating,
        "inactive" => Activity::Inactive,
        "failed" => Activity::Failed,
        other => Activity::Other(other.to_string()),
    };
    let status = get("ExecMainStatus").parse::<i64>().ok();
    let main_exit = match (get("ExecMainCode"), status) {
        ("1", Some(s)) => Some(MainExit::Exited(s)),
        ("2" | "3", Some(s)) => Some(MainExit::Signal(s)),
        _ => None,
    };
    let result = Some(get("Result"))
        .filter(|r| !r.is_empty() && *r != "success")
        .map(str::to_string);
    UnitStatus {
        unit: unit.to_string(),
        load,
        activity,
        words: format!("{active}/{}", get("SubState")),
        result,
        main_exit,
        main_pid: get("ExecMainPID").parse().ok().filter(|p| *p != 0),
        restarts: get("NRestarts").parse().ok(),
        active_since: parse_stamp(get("ActiveEnterTimestamp")),
        changed: parse_stamp(get("StateChangeTimestamp")),
    }
}

/// `org.freedesktop.systemd1.BadUnitSetting "Unit x.service has a bad unit file setting."` → the quoted part.
fn load_error(text: &str) -> Option<String> {
    let (_, rest) = text.split_once('"')?;
    let msg = rest.strip_suffix('"').unwrap_or(rest);
    (!msg.is_empty()).then(|| msg.to_string())
}

/// A systemctl timestamp: `Mon 2026-11-30 12:00:00 UTC` (optionally with
/// microseconds), or `@1700000000`. Empty or `n/a` is `None`; so is any zone
/// but UTC (hal runs systemctl with `TZ=UTC`).
pub fn parse_stamp(text: &str) -> Option<Stamp> {
    let t = text.trim();
    if let Some(secs) = t.strip_prefix('@') {
        let (whole, frac) = secs.split_once('.').unwrap_or((secs, ""));
        let secs: i64 = whole.parse().ok()?;
        let frac = timefmt::parse(&format!("1970-01-01T00:00:00.{frac}Z")).map_or(0, |s| s.nanos);
        return Some(Stamp { secs, nanos: frac });
    }
    let words: Vec<&str> = t.split_whitespace().collect();
    let (date, time, zone) = match words.as_slice() {
        [_, date, time, zone] => (date, time, zone),
        [date, time, zone] => (date, time, zone),
        _ => return None,
    };
    if !matches!(*zone, "UTC" | "GMT" | "Z") {
        return None;
    }
    timefmt::parse(&format!("{date}T{time}Z"))
}

/// What systemctl's stderr says went wrong.
#[derive(Debug, PartialEq, Eq)]
pub enum Complaint {
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
pub fn classify(scope: Scope, stderr: &str) -> Complaint {
    let words = super::last_words(stderr);
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

fn manager_name(scope: Scope) -> &'static str {
    match scope {
        Scope::User => "user manager",
        Scope::System => "systemd",
    }
}

/// The message for a manager systemctl could not reach.
fn unreachable_message(scope: Scope, why: &str, env: &BusEnv) -> String {
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
pub struct BusEnv {
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
    pub fn read() -> BusEnv {
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
pub fn user_bus_problem(env: &BusEnv) -> Option<String> {
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

    const SHOW: &str = "\
Id=notifier.service
Names=notifier.service
LoadState=loaded
LoadError=
ActiveState=failed
SubState=failed
Result=exit-code
ExecMainPID=4242
ExecMainCode=1
ExecMainStatus=3
NRestarts=2
ActiveEnterTimestamp=Mon 2026-11-30 12:00:00 UTC
StateChangeTimestamp=Mon 2026-11-30 12:00:01.250000 UTC

Id=ghost.service
Names=ghost.service
LoadState=not-found
LoadError=org.freedesktop.systemd1.NoSuchUnit \"Unit ghost.service not found.\"
ActiveState=inactive
SubState=dead
Result=success
ExecMainCode=0
ExecMainStatus=0
NRestarts=0
ActiveEnterTimestamp=
StateChangeTimestamp=

Id=real.service
Names=real.service alias.service
LoadState=loaded
ActiveState=active
SubState=running
Result=success
ExecMainCode=0
ExecMainStatus=0
NRestarts=0
ActiveEnterTimestamp=@1700000000
StateChangeTimestamp=@1700000000
";

    fn units(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn show_blocks_become_statuses_in_order() {
        let s = parse_show(
            SHOW,
            &units(&["notifier.service", "ghost.service", "alias.service"]),
        );
        assert_eq!(s.len(), 3);
        assert_eq!(s[0].activity, Activity::Failed);
        assert_eq!(s[0].words, "failed/failed");
        assert_eq!(s[0].result.as_deref(), Some("exit-code"));
        assert_eq!(s[0].main_exit, Some(MainExit::Exited(3)));
        assert_eq!(s[0].main_pid, Some(4242));
        assert_eq!(s[0].restarts, Some(2));
        assert_eq!(s[0].active_since.unwrap().rfc3339(), "2026-11-30T12:00:00Z");
        assert_eq!(s[0].changed.unwrap().nanos, 250_000_000);
        assert_eq!(s[1].load, Load::NotFound);
        assert_eq!(s[1].result, None);
        assert_eq!(s[1].active_since, None);
        assert_eq!(s[2].unit, "alias.service");
        assert_eq!(s[2].activity, Activity::Active);
        assert_eq!(s[2].active_since.unwrap().secs, 1_700_000_000);
    }

    #[test]
    fn show_matches_by_name_when_counts_differ() {
        let s = parse_show(SHOW, &units(&["alias.service", "missing.service"]));
        assert_eq!(s[0].words, "active/running");
        assert!(matches!(s[1].load, Load::Error(_)));
    }

    #[test]
    fn load_errors_and_signals() {
        let props = [
            ("LoadState", "bad-setting"),
            (
                "LoadError",
                "org.freedesktop.systemd1.BadUnitSetting \"Unit x.service has a bad unit file setting.\"",
            ),
            ("ActiveState", "inactive"),
            ("ExecMainCode", "2"),
            ("ExecMainStatus", "9"),
        ];
        let s = unit_status("x.service", &props);
        assert_eq!(
            s.load,
            Load::Error("Unit x.service has a bad unit file setting.".into())
        );
        assert_eq!(s.main_exit, Some(MainExit::Signal(9)));
    }

    #[test]
    fn stamps_in_utc_only() {
        assert_eq!(
            parse_stamp("Tue 2024-01-02 03:04:05 UTC")
                .unwrap()
                .rfc3339(),
            "2024-01-02T03:04:05Z"
        );
        assert_eq!(parse_stamp("@1.5").unwrap().nanos, 500_000_000);
        assert_eq!(parse_stamp(""), None);
        assert_eq!(parse_stamp("n/a"), None);
        assert_eq!(parse_stamp("Tue 2024-01-02 03:04:05 CET"), None);
    }

    #[test]
    fn journal_json_becomes_lines() {
        let l = parse_journal_line(
            br#"{"__REALTIME_TIMESTAMP":"1700000000123456","MESSAGE":"hello\n","PRIORITY":"6"}"#,
        );
        assert_eq!(l.len(), 1);
        assert_eq!(l[0].message, "hello");
        assert_eq!(l[0].stream, Stream::Stdout);
        assert_eq!(l[0].time.secs, 1_700_000_000);
        assert_eq!(l[0].time.nanos, 123_456_000);

        let l = parse_journal_line(
            br#"{"__REALTIME_TIMESTAMP":"1","MESSAGE":[104,105,255,10,111,107],"PRIORITY":"3"}"#,
        );
        assert_eq!(l.len(), 2);
        assert_eq!(l[0].message, "hi\u{fffd}");
        assert_eq!(l[1].message, "ok");
        assert_eq!(l[0].stream, Stream::Stderr);

        assert!(parse_journal_line(br#"{"MESSAGE":null}"#).is_empty());
        assert!(parse_journal_line(b"not json").is_empty());
    }

    #[test]
    fn journal_args_per_scope() {
        let q = JournalQuery {
            follow: true,
            tail: None,
            since: Some(42),
            pid: None,
        };
        let a = journal_args(Scope::User, "n.service", Some(1000), q);
        assert_eq!(a[..2], ["_SYSTEMD_USER_UNIT=n.service", "_UID=1000"]);
        assert_eq!(a.iter().filter(|x| *x == "+").count(), 3);
        assert!(!a.iter().any(|x| x.starts_with("_PID=")));
        let with_pid = JournalQuery { pid: Some(77), ..q };
        let b = journal_args(Scope::User, "n.service", Some(1000), with_pid);
        assert!(b.windows(3).any(|w| w == ["+", "_PID=77", "_UID=1000"]));
        assert_eq!(b.iter().filter(|x| *x == "+").count(), 4);
        assert!(!a.contains(&"--user".to_string()));
        let a = journal_args(Scope::User, "n.service", None, q);
        assert_eq!(a[..2], ["--user-unit", "n.service"]);
        assert!(a.windows(2).any(|w| w == ["--lines", "all"]));
        assert!(a.windows(2).any(|w| w == ["--since", "@42"]));
        assert!(a.contains(&"--follow".to_string()));
        let a = journal_args(
            Scope::System,
            "n.service",
            Some(0),
            JournalQuery {
                tail: Some(5),
                ..Default::default()
            },
        );
        assert_eq!(a[..2], ["--unit", "n.service"]);
        assert!(a.windows(2).any(|w| w == ["--lines", "5"]));
        assert!(!a.contains(&"--follow".to_string()));
    }

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
