//! Containers left in a dead network namespace: a `network_mode: container:X` whose X started again after it, is stopped, or is gone.
//!
//! A container that shares another's network namespace joins it once, when it
//! starts. When X restarts (by a person's `docker restart`, by Docker's restart
//! policy, by an engine restart) or is recreated, X gets a new namespace and the
//! container stays in the old one: running, and without a network. The engine
//! says nothing of it, so hal reads it from start times: X running and started
//! after the container did (by more than [`SLACK`]), or X gone altogether.
//! A stopped X (exited, dead, created) has no namespace to offer at all: the
//! container runs without a network until X runs again and it is restarted.
//! Such a container is marked ([`StaleNamespace`]); `status` calls its module
//! degraded and `hal watch` restarts it (recreates it when X is gone; leaves
//! it while X is stopped, as nothing could join X then).

use std::time::Duration;

use crate::docker::engine::Engine;
use crate::module::run_state::ContainerRun;
use crate::module::status::{ProviderFate, StaleNamespace};
use crate::stack::look::assess::ContainerFacts;
use crate::util::timefmt::Stamp;

/// Start times read from a list's "Up N minutes" are not exact: a provider must
/// have started this much after its dependent to count as restarted.
const SLACK: Duration = Duration::from_secs(1);

/// A provider as hal found it: by the same read, or by an inspect of its own.
struct Provider {
    name: String,
    run: Option<ContainerRun>,
    started_at: Option<Stamp>,
}

/// Marks each running container whose namespace's provider restarted after it, is stopped, or is gone.
/// Providers outside `facts` are inspected (one call each, only for such containers).
pub(crate) async fn mark_stale(engine: &Engine, facts: &mut [ContainerFacts]) {
    let mut found: Vec<(usize, Option<Provider>)> = Vec::new();
    for (i, c) in facts.iter().enumerate() {
        let Some(id) = c.netns_of.as_deref() else {
            continue;
        };
        if c.run != Some(ContainerRun::Running) {
            continue;
        }
        let here = facts
            .iter()
            .find(|p| p.id == id || (!id.is_empty() && p.id.starts_with(id)) || p.name == id);
        let provider = match here {
            Some(p) => Some(Provider {
                name: p.name.clone(),
                run: p.run,
                started_at: p.started_at,
            }),
            None => match engine.inspect(id).await {
                Ok(Some(i)) => Some(Provider {
                    name: short(id),
                    run: i.state,
                    started_at: i.started_at,
                }),
                Ok(None) => None,
                // Not known: say nothing rather than something wrong.
                Err(_) => continue,
            },
        };
        found.push((i, provider));
    }
    for (i, provider) in found {
        let c = &mut facts[i];
        c.netns_stale = judge(c.started_at, c.netns_of.as_deref(), provider.as_ref());
    }
}

/// Whether a container started at `started` is in a namespace its provider no longer has.
fn judge(started: Option<Stamp>, id: Option<&str>, p: Option<&Provider>) -> Option<StaleNamespace> {
    let Some(p) = p else {
        return Some(StaleNamespace {
            provider: short(id.unwrap_or_default()),
            fate: ProviderFate::Gone,
        });
    };
    let later = matches!((p.started_at, started), (Some(ps), Some(cs)) if ps > cs.plus(SLACK));
    let fate = match p.run {
        Some(ContainerRun::Running) if later => ProviderFate::StartedAgain,
        // Paused, restarting, being stopped or removed: it may keep or regain
        // its namespace; what it comes to is read at the next look.
        Some(ContainerRun::Exited | ContainerRun::Dead | ContainerRun::Created) => {
            ProviderFate::Stopped
        }
        _ => return None,
    };
    Some(StaleNamespace {
        provider: p.name.clone(),
        fate,
    })
}

/// A container id as `docker ps` shows it: its first 12 characters.
fn short(id: &str) -> String {
    id.chars().take(12).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(secs: i64) -> Option<Stamp> {
        Some(Stamp::from_secs(secs))
    }

    fn p(running: bool, started: Option<Stamp>) -> Provider {
        Provider {
            name: "gw-main".into(),
            run: Some(if running {
                ContainerRun::Running
            } else {
                ContainerRun::Exited
            }),
            started_at: started,
        }
    }

    #[test]
    fn a_provider_that_started_after_its_dependent_leaves_it_in_a_dead_namespace() {
        let stale = judge(t(100), Some("abc"), Some(&p(true, t(200)))).unwrap();
        assert_eq!(stale.provider, "gw-main");
        assert_eq!(stale.fate, ProviderFate::StartedAgain);
        assert!(stale.to_string().contains("gw-main started again after it"));
    }

    #[test]
    fn a_provider_started_before_or_of_unknown_start_is_left_alone() {
        assert_eq!(judge(t(100), Some("a"), Some(&p(true, t(90)))), None);
        assert_eq!(judge(t(100), Some("a"), Some(&p(true, t(101)))), None);
        assert_eq!(judge(None, Some("a"), Some(&p(true, t(200)))), None);
        for run in [ContainerRun::Paused, ContainerRun::Restarting] {
            let busy = Provider {
                run: Some(run),
                ..p(true, t(200))
            };
            assert_eq!(judge(t(100), Some("a"), Some(&busy)), None, "{run:?}");
        }
    }

    #[test]
    fn a_stopped_provider_leaves_no_namespace_whenever_it_started() {
        for started in [t(90), t(200), None] {
            let stale = judge(t(100), Some("a"), Some(&p(false, started))).unwrap();
            assert_eq!(stale.fate, ProviderFate::Stopped);
            assert_eq!(
                stale.to_string(),
                "in a dead network namespace: gw-main is stopped"
            );
        }
    }

    #[test]
    fn a_provider_that_is_gone_wants_a_recreate() {
        let stale = judge(t(100), Some("0123456789abcdef"), None).unwrap();
        assert_eq!(stale.fate, ProviderFate::Gone);
        assert_eq!(stale.provider, "0123456789ab");
    }
}
