//! What an init with template units can do for `hal adopt`: list a template's instances, disarm one, hand one over. A capability, not part of every init.

use std::time::Duration;

use futures_util::future::BoxFuture;

use crate::module::run_state::Activity;

/// Handing units of a template (systemd's `hal-module@`) over to hal without
/// stopping what they started. An init offers it through
/// [`super::Init::adoption`]. Every call is bounded in time; nothing prints.
pub(crate) trait Adopt: Send + Sync {
    /// Every instance of `template` (e.g. `hal-module`) the manager knows:
    /// running, failed, enabled or merely loaded, and any whose hand-over
    /// ([`Adopt::hand_over`]) was left half-done. For `hal adopt` and `doctor`.
    fn instances<'a>(&'a self, template: &'a str) -> BoxFuture<'a, anyhow::Result<Vec<Instance>>>;

    /// Makes `unit` harmless while it still runs: from now on stopping it runs
    /// no stop command and kills only its own processes, and nothing restarts
    /// it. The first half of [`Adopt::hand_over`]; undone by its end.
    fn disarm<'a>(&'a self, unit: &'a str, timeout: Duration) -> BoxFuture<'a, anyhow::Result<()>>;

    /// Takes `unit` from the init without stopping what it started: disarmed
    /// ([`Adopt::disarm`]), disabled, stopped, then its usual settings back and
    /// no failed state; it ends inactive. Each step can be repeated, so a
    /// hand-over cut short is finished by asking again.
    fn hand_over<'a>(
        &'a self,
        unit: &'a str,
        timeout: Duration,
    ) -> BoxFuture<'a, anyhow::Result<()>>;
}

/// One instance of a template unit, as [`Adopt::instances`] finds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Instance {
    /// `hal-module@web.service`.
    pub unit: String,
    /// `web`.
    pub instance: String,
    pub activity: Activity,
    /// Started by the init on its own (at boot or login).
    pub enabled: bool,
    /// The command lines it starts (argv of each `ExecStart=`).
    pub exec_start: Vec<Vec<String>>,
    /// A hand-over was begun and not finished.
    pub handing_over: bool,
}
