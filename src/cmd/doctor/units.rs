//! Is automatic rescue installed: the shipped `hal-watch.service` and `hal-rescue.timer` active under the init?

use std::time::Duration;

use super::check::Check;
use crate::error::OneLine;
use crate::host::Hosts;
use crate::module::config::Scope;

const UNITS: [&str; 2] = ["hal-watch.service", "hal-rescue.timer"];
const TIMEOUT: Duration = Duration::from_secs(5);

/// One line, or none when the init is not running this node (there is
/// nothing of ours to check; `hal watch` must then run under whatever init
/// there is).
pub async fn check(hosts: &Hosts) -> Option<Check> {
    hosts.init(Scope::System).reachable().ok()?;
    let user = !crate::util::sys::is_root();
    let scope = if user { Scope::User } else { Scope::System };
    let init = hosts.init(scope);
    let units = UNITS.map(String::from);
    let states: Vec<String> = match tokio::time::timeout(TIMEOUT, init.show(&units)).await {
        // The first word of `active/running`: what `systemctl is-active` says.
        Ok(Ok(all)) => all
            .iter()
            .map(|s| s.words.split('/').next().unwrap_or_default().to_string())
            .collect(),
        Ok(Err(e)) => vec![OneLine(&e).to_string()],
        Err(_) => vec![format!("{} did not answer", init.name())],
    };
    let detail = UNITS
        .iter()
        .zip(
            states
                .iter()
                .map(String::as_str)
                .chain(std::iter::repeat("unknown")),
        )
        .map(|(u, s)| format!("{u} {s}"))
        .collect::<Vec<_>>()
        .join(", ");
    let ok = states.len() == UNITS.len() && states.iter().all(|s| s == "active");
    let scope = scope.as_str();
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
