//! Is systemd reachable in every scope the config's host units use, and do those units exist there?

use std::time::Duration;

use tokio::process::Command;

use super::check::Check;
use super::modules::check_name;
use crate::cmd::ctx::Ctx;
use crate::module::Kind;
use crate::module::config::Scope;

/// How long one systemctl call may take.
const TIMEOUT: Duration = Duration::from_secs(5);

/// A host module's name and its unit.
type HostUnit<'a> = (&'a str, &'a str);

/// What `is-system-running` answers when the manager is there.
const REACHABLE: [&str; 6] = [
    "running",
    "degraded",
    "starting",
    "initializing",
    "maintenance",
    "stopping",
];

/// One line per scope in use (or one saying none is), and a failed check per
/// host module whose unit the manager does not know.
pub async fn checks(ctx: &Ctx) -> (Vec<Check>, Vec<Check>) {
    let mut scopes: Vec<(Scope, Vec<HostUnit<'_>>)> = Vec::new();
    for m in &ctx.node.inventory.modules {
        let Kind::Host { unit, scope } = &m.kind else {
            continue;
        };
        let (scope, unit) = (*scope, (m.name.as_str(), unit.as_str()));
        match scopes.iter_mut().find(|(s, _)| *s == scope) {
            Some((_, units)) => units.push(unit),
            None => scopes.push((scope, vec![unit])),
        }
    }
    scopes.sort_by_key(|(s, _)| s.as_str());
    if scopes.is_empty() {
        let line = Check::pass("systemd", "not needed: no host modules in the config");
        return (vec![line], Vec::new());
    }
    let per_scope = scopes
        .into_iter()
        .map(|(scope, units)| async move { scope_checks(scope, &units).await });
    let results = futures_util::future::join_all(per_scope).await;
    let mut lines = Vec::new();
    let mut problems = Vec::new();
    for (line, unit_problems) in results {
        lines.push(line);
        problems.extend(unit_problems);
    }
    (lines, problems)
}

async fn scope_checks(scope: Scope, units: &[HostUnit<'_>]) -> (Check, Vec<Check>) {
    let name = format!("systemd-{}", scope.as_str());
    let manager = match scope {
        Scope::System => "the system manager",
        Scope::User => "the user manager",
    };
    if scope == Scope::User && std::env::var_os("XDG_RUNTIME_DIR").is_none_or(|v| v.is_empty()) {
        let fail = Check::fail(
            name,
            "XDG_RUNTIME_DIR is not set, so the user manager cannot be reached",
            "run hal in the user's login session, or export XDG_RUNTIME_DIR=/run/user/$(id -u) \
(and `loginctl enable-linger USER` so the user manager runs without a session)",
        );
        return (fail, Vec::new());
    }
    if which::which("systemctl").is_err() {
        let fail = Check::fail(
            name,
            "systemctl not found",
            "host modules are systemd units: install systemd, or drop the host modules from the config",
        );
        return (fail, Vec::new());
    }
    let state = match systemctl(scope, &["is-system-running"]).await {
        Ok(s) if REACHABLE.contains(&s.as_str()) => s,
        Ok(s) => {
            let fail = Check::fail(
                name,
                format!("{manager} is not reachable: {s}"),
                unreachable_hint(scope),
            );
            return (fail, Vec::new());
        }
        Err(why) => {
            let fail = Check::fail(
                name,
                format!("{manager} is not reachable: {why}"),
                unreachable_hint(scope),
            );
            return (fail, Vec::new());
        }
    };
    let mut problems = Vec::new();
    for (module, unit) in units {
        if let Ok(load) = systemctl(scope, &["show", "--property=LoadState", "--value", unit]).await
            && load != "loaded"
        {
            let user = if scope == Scope::User { "--user " } else { "" };
            problems.push(Check::fail(
                check_name(module),
                format!("unit {unit}: LoadState={load} in {manager}"),
                format!(
                    "install {unit} (systemctl {user}cat {unit} shows what systemd sees), or fix unit = in [module.{module}] of the config"
                ),
            ));
        }
    }
    let detail = if state == "degraded" {
        format!("{manager} answers: degraded (some unit failed: systemctl --failed)")
    } else {
        format!("{manager} answers: {state}")
    };
    (Check::pass(name, detail), problems)
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

/// Runs `systemctl [--user] ARGS` and returns its first stdout line, or why it could not answer.
async fn systemctl(scope: Scope, args: &[&str]) -> Result<String, String> {
    let mut cmd = Command::new("systemctl");
    if scope == Scope::User {
        cmd.arg("--user");
    }
    cmd.args(args)
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true);
    let out = match tokio::time::timeout(TIMEOUT, cmd.output()).await {
        Ok(Ok(out)) => out,
        Ok(Err(e)) => return Err(format!("run systemctl: {e}")),
        Err(_) => return Err(format!("no answer within {}s", TIMEOUT.as_secs())),
    };
    let stdout = String::from_utf8_lossy(&out.stdout);
    let first = stdout.lines().next().unwrap_or("").trim();
    if !first.is_empty() {
        // is-system-running exits non-zero for every state but running: its word is the answer.
        return Ok(first.to_string());
    }
    Err(crate::stack::compose::last_words(
        &String::from_utf8_lossy(&out.stderr),
        "",
    ))
}
