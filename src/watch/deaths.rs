//! Deaths the engine reported and a status pass has not seen yet: the `die` event can come before the engine's list shows the exit, so the module is read again, exactly, until it does.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::module::run_state::ContainerRun;
use crate::module::status::{Detail, ModuleStatus};
use crate::stack::EngineEvent;
use crate::util::timefmt::Stamp;

/// How soon to read a module again whose death its status does not show yet.
pub(super) const RELOOK: Duration = Duration::from_millis(25);
/// How long a reported death waits to be seen before it is forgotten (a full pass catches it).
const FORGET: Duration = Duration::from_secs(5);

/// Module → (container name, when it died).
#[derive(Default)]
pub(super) struct Deaths(BTreeMap<String, Vec<(String, Stamp)>>);

impl Deaths {
    /// Remembers a `die` (or `oom`) event of `module`'s.
    pub(super) fn saw(&mut self, module: &str, ev: &EngineEvent) {
        let Some(name) = ev.container() else {
            return;
        };
        self.0
            .entry(module.to_string())
            .or_default()
            .push((name.to_string(), ev.at));
    }

    /// How much to read of these modules: every container exactly when one just died.
    pub(super) fn detail(&self, modules: &[String], usual: Detail) -> Detail {
        if modules.iter().any(|m| self.0.contains_key(m)) {
            Detail::Full
        } else {
            usual
        }
    }

    /// Forgets the deaths the statuses show; returns the modules whose status
    /// still shows a dead container running from before its death (read them again).
    pub(super) fn settle(&mut self, statuses: &[ModuleStatus], now: Stamp) -> Vec<String> {
        let mut again = Vec::new();
        for s in statuses {
            let Some(list) = self.0.get_mut(&s.name) else {
                continue;
            };
            list.retain(|(container, at)| {
                let stale = s.services.iter().any(|c| {
                    c.container.as_deref() == Some(container.as_str())
                        && c.state.container() == Some(ContainerRun::Running)
                        && c.started_at.is_some_and(|started| started <= *at)
                });
                stale && now.since(*at) < FORGET
            });
            if list.is_empty() {
                self.0.remove(&s.name);
            } else {
                again.push(s.name.clone());
            }
        }
        again
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::module::status::ServiceStatus;
    use crate::stack::EventAction;
    use crate::util::timefmt;
    use std::collections::HashMap;

    fn status(state: &str, started: &str) -> ModuleStatus {
        use crate::module::run_state::ServiceState;
        use crate::module::status::{Desired, State};
        ModuleStatus {
            desired: Some(Desired::Up),
            services: vec![ServiceStatus {
                name: "web".into(),
                container: Some("m-web-1".into()),
                state: ServiceState::Container(ContainerRun::from_word(state)),
                started_at: timefmt::parse(started),
                ..Default::default()
            }],
            ..ModuleStatus::named("m", crate::module::KindTag::Stack, State::Active)
        }
    }

    #[test]
    fn a_death_is_read_again_until_the_status_shows_it() {
        let mut d = Deaths::default();
        let ev = EngineEvent {
            action: EventAction::Die,
            id: None,
            attributes: HashMap::from([("name".into(), "m-web-1".into())]),
            at: Stamp::from_micros(1_700_000_010_000_000),
        };
        d.saw("m", &ev);
        assert_eq!(d.detail(&["m".into()], Detail::Settled), Detail::Full);
        let now = Stamp::from_secs(1_700_000_010);
        // Still reads running, from before the death: again.
        let stale = status("running", "2023-11-14T22:13:00Z");
        assert_eq!(d.settle(std::slice::from_ref(&stale), now), ["m"]);
        // Exited: seen, forgotten.
        assert!(
            d.settle(&[status("exited", "2023-11-14T22:13:00Z")], now)
                .is_empty()
        );
        assert_eq!(d.detail(&["m".into()], Detail::Settled), Detail::Settled);
        // Never seen: forgotten after a while.
        d.saw("m", &ev);
        assert!(d.settle(&[stale], now.plus(FORGET)).is_empty());
    }
}
