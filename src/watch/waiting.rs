//! Modules waiting on a requirement that is not active: left alone (no repair, hold or `on_failure`), and looked at again at once when it is back.

use crate::module::status::{ModuleStatus, State};
use crate::output::watch_log::Cause;
use crate::watch::policy::{Act, Action, RepairScope, Supervisor, WaitsOn};

impl Supervisor {
    /// Whether `s` waits on a requirement, and what to do if it does.
    /// Waiting lets go of a hold and of any pause, so that the repair comes
    /// at once when the requirement is back.
    pub(crate) fn wait(&mut self, s: &ModuleStatus) -> WaitsOn {
        if s.waiting_on.is_empty() || s.state == State::Active {
            let was = self.waiting.remove(&s.name).is_some();
            return if was && s.state != State::Active {
                WaitsOn::Unblocked
            } else {
                WaitsOn::No
            };
        }
        self.paused.remove(&s.name);
        self.forget_unhealthy(&s.name);
        let reason = if s.reason.is_empty() {
            Cause::WaitingOn(s.waiting_on.clone())
        } else {
            Cause::Reasons(s.reason.clone())
        };
        let action = |act| Action {
            module: s.name.clone(),
            act,
            reason: reason.clone(),
            scope: RepairScope::Module,
        };
        let mut out = Vec::new();
        if self.holds.remove(&s.name).is_some() {
            out.push(action(Act::Release));
        }
        if self.waiting.get(&s.name) != Some(&s.waiting_on) {
            self.waiting.insert(s.name.clone(), s.waiting_on.clone());
            out.push(action(Act::Wait));
        }
        WaitsOn::Yes(out)
    }

    /// The waiting modules that wait on one of `active` (seen active now):
    /// to be looked at again at once.
    pub(crate) fn unblocked(&self, active: &[&str]) -> Vec<String> {
        self.waiting
            .iter()
            .filter(|(_, on)| on.iter().any(|r| active.contains(&r.as_str())))
            .map(|(m, _)| m.clone())
            .collect()
    }

    /// Every requirement some module waits on.
    pub(crate) fn waited_on(&self) -> std::collections::BTreeSet<String> {
        self.waiting.values().flatten().cloned().collect()
    }
}
