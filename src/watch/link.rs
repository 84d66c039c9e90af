//! The supervisor's link to the container engine (Docker or Podman): the event subscription, what an event means, and reconnecting with backoff.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use futures_util::stream::StreamExt;

use crate::error::{HalError, OneLine};
use crate::run::Node;
use crate::stack::Identity;
use crate::stack::{EngineEvent, EventAction, Events, Session};
use crate::util::timefmt::Stamp;
use crate::watch::policy::Seen;

/// The container events that can change what the supervisor should do.
pub(super) const ACTIONS: [EventAction; 5] = [
    EventAction::Die,
    EventAction::Health { unhealthy: false },
    EventAction::Oom,
    EventAction::Start,
    EventAction::Destroy,
];
const BACKOFF_FIRST: Duration = Duration::from_secs(1);
/// At most this long between tries while the engine is away: once it is back
/// (an engine restart, a reboot) the catch-up is where seconds count, and a
/// try is one connect to its socket (issue 39: was 30 s).
const BACKOFF_MAX: Duration = Duration::from_secs(2);
/// Between the tries the log tells of, a silent try this often: the watch is
/// back within this of the engine answering, not within a whole back-off step.
const PROBE_EVERY: Duration = Duration::from_millis(250);

/// An event the link could not hand over (unreadable, or the stream broke).
pub(super) use crate::stack::Missed;

/// Connected (with an event stream) or waiting to try again.
pub(super) struct Link {
    session: Option<Session>,
    events: Option<Events>,
    retry_at: Instant,
    /// The next silent try, before `retry_at`.
    probe_at: Instant,
    backoff: Duration,
    /// Whether the engine was ever reached (for the wording of the log).
    ever_up: bool,
    /// Connected, and the subscription not yet said in the log.
    unsaid: bool,
}

impl Link {
    pub(super) fn new() -> Link {
        Link {
            session: None,
            events: None,
            retry_at: Instant::now(),
            probe_at: Instant::now(),
            backoff: BACKOFF_FIRST,
            ever_up: false,
            unsaid: false,
        }
    }

    pub(super) fn up(&self) -> bool {
        self.events.is_some()
    }

    pub(super) fn ever_up(&self) -> bool {
        self.ever_up
    }

    /// When to try to connect, while not connected.
    pub(super) fn retry_at(&self) -> Option<Instant> {
        (!self.up()).then_some(self.retry_at.min(self.probe_at))
    }

    /// Whether a failed try now is a silent probe (before the logged try is due):
    /// if so, the next probe is set, and nothing is to be said.
    pub(super) fn probed(&mut self) -> bool {
        let now = Instant::now();
        self.probe_at = now + PROBE_EVERY;
        now < self.retry_at
    }

    pub(super) fn connected(&mut self, session: Session, events: Events) {
        self.session = Some(session);
        self.events = Some(events);
        self.backoff = BACKOFF_FIRST;
        self.ever_up = true;
        self.unsaid = true;
    }

    /// Whether a subscription is live and not yet said in the log (true once per connection).
    pub(super) fn take_unsaid(&mut self) -> bool {
        let say = self.unsaid && self.up();
        self.unsaid &= !say;
        say
    }

    /// The link is down (or could not be made): returns how long until the next try.
    pub(super) fn down(&mut self) -> Duration {
        self.events = None;
        let wait = self.backoff;
        self.retry_at = Instant::now() + wait;
        self.probe_at = Instant::now() + PROBE_EVERY;
        self.backoff = (self.backoff * 2).min(BACKOFF_MAX);
        wait
    }

    /// The engine's name for the log (`docker`, `podman`; `engine` before it answered).
    pub(super) fn name(&self) -> &'static str {
        self.session.as_ref().map_or("engine", Session::name)
    }

    /// The next event; never ready while not connected.
    pub(super) async fn next(&mut self) -> Option<Result<EngineEvent, Missed>> {
        let Some(events) = self.events.as_mut() else {
            return std::future::pending().await;
        };
        events.next().await
    }
}

/// Why the engine could not be reached; the log says it and the link tries again.
#[derive(Debug, thiserror::Error)]
pub(super) enum Unreached {
    /// No session: the endpoint could not be chosen or connected to.
    #[error(transparent)]
    Session(#[from] HalError),
    /// Connected, and the engine did not answer its ping (the cause's chain, on one line).
    #[error("{}", OneLine(.0))]
    Ping(anyhow::Error),
}

/// Reaches the engine and subscribes to its events (from a second ago, so none
/// fall between the subscription and the status pass that follows it).
pub(super) async fn connect(node: &Node) -> Result<(Session, Events), Unreached> {
    let session = node.stacks.session().await?;
    session.ping().await.map_err(Unreached::Ping)?;
    let since = Stamp::now().whole_second().minus(Duration::from_secs(1));
    let events = session.events(since, &ACTIONS);
    Ok((session, events))
}

/// A container that started goes into its module's ledger, even if it is
/// gone before the next look: its lines stay readable (`hal logs`).
pub(super) fn remember(store: &crate::state::Store, ev: &EngineEvent) {
    let Some(seen) = crate::stack::seen_in_event(ev) else {
        return;
    };
    let store = store.clone();
    // Best effort, as in status: the next look records it too.
    tokio::spawn(async move {
        let _ = store.saw(crate::stack::seen_by_module([seen])).await;
    });
}

/// The module an event is about (a stack this node has), and what it says about health.
pub(super) fn meaning(
    ev: &EngineEvent,
    stacks: &BTreeSet<String>,
) -> Option<(String, Option<Seen>)> {
    let who = Identity::of(&ev.attributes)?;
    if !stacks.contains(&who.project) || who.oneoff {
        return None;
    }
    let module = &who.project;
    let seen = ev.container().and_then(|container| {
        let unhealthy = match ev.action {
            EventAction::Health { unhealthy } => unhealthy,
            EventAction::Die | EventAction::Destroy | EventAction::Start => false,
            EventAction::Oom | EventAction::Other(_) => return None,
        };
        Some(Seen {
            module: module.clone(),
            container: container.to_string(),
            unhealthy,
            at: ev.at,
        })
    });
    Some((module.clone(), seen))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn ev(action: &str, project: &str) -> EngineEvent {
        EngineEvent {
            action: EventAction::from_word(action),
            id: Some("abc".into()),
            attributes: HashMap::from([
                (
                    crate::docker::labels::PROJECT.to_string(),
                    project.to_string(),
                ),
                ("name".to_string(), format!("{project}-web-1")),
            ]),
            at: Stamp::from_micros(1_700_000_000_500_000),
        }
    }

    #[test]
    fn events_name_their_module_and_health() {
        let stacks = BTreeSet::from(["web".to_string()]);
        let (m, seen) = meaning(&ev("health_status: unhealthy", "web"), &stacks).unwrap();
        assert_eq!(m, "web");
        let seen = seen.unwrap();
        assert!(seen.unhealthy);
        assert_eq!(seen.container, "web-web-1");
        assert_eq!(seen.at.secs(), 1_700_000_000);
        assert!(
            !meaning(&ev("health_status: healthy", "web"), &stacks)
                .unwrap()
                .1
                .unwrap()
                .unhealthy
        );
        assert!(meaning(&ev("oom", "web"), &stacks).unwrap().1.is_none());
        assert!(meaning(&ev("die", "other"), &stacks).is_none());
    }

    #[test]
    fn why_the_engine_was_not_reached_reads_as_it_did() {
        let session = Unreached::from(HalError::DockerUnreachable {
            endpoint: "unix:///run/docker.sock".into(),
            why: "no socket there (is the engine running?)".into(),
        });
        assert_eq!(
            session.to_string(),
            "Docker not reachable at unix:///run/docker.sock: no socket there (is the engine running?)"
        );
        let refused = anyhow::Error::new(std::io::Error::from_raw_os_error(111)).context("ping");
        assert_eq!(
            Unreached::Ping(refused).to_string(),
            "ping: connection refused"
        );
    }

    #[test]
    fn backoff_doubles_to_a_bound_and_resets() {
        let mut l = Link::new();
        let waits: Vec<u64> = (0..7).map(|_| l.down().as_secs()).collect();
        assert_eq!(waits, [1, 2, 2, 2, 2, 2, 2]);
        assert!(l.retry_at().is_some());
    }

    #[test]
    fn silent_probes_come_between_the_logged_tries() {
        let mut l = Link::new();
        assert!(!l.probed(), "the first try is logged");
        l.down();
        let next = l.retry_at().unwrap();
        assert!(next <= Instant::now() + PROBE_EVERY);
        assert!(l.probed(), "a try before the logged one is silent");
    }
}
