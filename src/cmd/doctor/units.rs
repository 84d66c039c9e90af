//! Is automatic rescue installed: the shipped `hal-watch.service` and `hal-rescue.timer` active under the init?

use std::time::Duration;

use super::check::Check;
use crate::error::OneLine;
use crate::host::Inits;
use crate::host::init::Activity;
use crate::module::config::Scope;

const UNITS: [&str; 2] = ["hal-watch.service", "hal-rescue.timer"];
const TIMEOUT: Duration = Duration::from_secs(5);

/// One line; "not checked" when systemd is not this node's init (there is
/// nothing of ours to check; `hal watch` must then run under whatever init
/// there is).
pub(super) async fn check(hosts: &Inits) -> Option<Check> {
    if let Err(why) = hosts.init(Scope::System).reachable() {
        return Some(Check::not_checked(
            "automatic-rescue",
            format!(
                "{}; run `hal watch` under the init there is",
                OneLine(&anyhow::Error::from(why))
            ),
        ));
    }
    let user = !crate::util::sys::is_root();
    let scope = if user { Scope::User } else { Scope::System };
    let init = hosts.init(scope);
    let units = UNITS.map(String::from);
    let answer: anyhow::Result<Vec<Activity>> =
        match tokio::time::timeout(TIMEOUT, init.show(&units)).await {
            Ok(Ok(all)) => Ok(all.into_iter().map(|s| s.activity).collect()),
            Ok(Err(e)) => Err(e),
            Err(_) => Err(anyhow::anyhow!("{} did not answer", init.name())),
        };
    let states: Vec<String> = match &answer {
        Ok(all) => all.iter().map(|a| a.as_str().to_string()).collect(),
        Err(e) => vec![OneLine(e).to_string()],
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
    let ok = answer
        .as_ref()
        .is_ok_and(|all| all.len() == UNITS.len() && all.iter().all(|a| *a == Activity::Active));
    let scope = scope.as_str();
    Some(if ok {
        Check::pass("automatic-rescue", format!("{detail} ({scope} scope)"))
    } else {
        Check::fail(
            "automatic-rescue",
            format!("{detail} ({scope} scope)"),
            format!(
                "{} (the hal package and `make install` ship these units; hal-watch(1) says what they do)",
                init.enable_hint(&UNITS)
            ),
        )
    })
}
