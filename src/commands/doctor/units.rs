//! Is automatic rescue installed: the shipped `hal-watch.service` and `hal-rescue.timer` active under systemd?

use std::time::Duration;

use tokio::process::Command;

use super::check::Check;

const UNITS: [&str; 2] = ["hal-watch.service", "hal-rescue.timer"];
const TIMEOUT: Duration = Duration::from_secs(5);

/// One line, or none when systemd is not this node's init (there is nothing
/// of ours to check; `hal watch` must then run under whatever init there is).
pub async fn check() -> Option<Check> {
    if !std::path::Path::new("/run/systemd/system").is_dir() {
        return None;
    }
    let user = !crate::sys::is_root();
    let scope = if user { "user" } else { "system" };
    let mut cmd = Command::new("systemctl");
    if user {
        cmd.arg("--user");
    }
    cmd.args(["is-active", "--no-pager"])
        .args(UNITS)
        .env("LC_ALL", "C")
        .env("SYSTEMD_COLORS", "0")
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true);
    let answer = match tokio::time::timeout(TIMEOUT, cmd.output()).await {
        Ok(Ok(out)) => String::from_utf8_lossy(&out.stdout).into_owned(),
        Ok(Err(e)) => format!("systemctl: {e}"),
        Err(_) => "systemctl did not answer".to_string(),
    };
    let states: Vec<&str> = answer.lines().map(str::trim).collect();
    let detail = UNITS
        .iter()
        .zip(states.iter().chain(std::iter::repeat(&"unknown")))
        .map(|(u, s)| format!("{u} {s}"))
        .collect::<Vec<_>>()
        .join(", ");
    let ok = states.len() == UNITS.len() && states.iter().all(|s| *s == "active");
    Some(if ok {
        Check::pass("automatic-rescue", format!("{detail} ({scope} scope)"))
    } else {
        let sudo = if user { "" } else { "sudo " };
        let flag = if user { "--user " } else { "" };
        Check::fail(
            "automatic-rescue",
            format!("{detail} ({scope} scope)"),
            format!(
                "{sudo}systemctl {flag}enable --now hal-watch.service hal-rescue.timer (the hal package and `make install` ship these units; hal-watch(1) says what they do)"
            ),
        )
    })
}
