//! A container's facts from what the engine said of it: the list call alone when that is enough, else list and inspect.

use bollard::models::{ContainerInspectResponse, ContainerSummary};

use crate::stack::assess::{ContainerFacts, health_from_status_text};
use crate::stack::labels::Identity;
use crate::util::timefmt::Stamp;

/// A running container's facts from its summary alone, when it has been up
/// long enough that restart count and exact start time cannot change its
/// verdict; `None` when it must be inspected.
pub fn settled(s: &ContainerSummary, now: Stamp) -> Option<ContainerFacts> {
    use bollard::models::ContainerSummaryStateEnum as S;
    if s.state != Some(S::RUNNING) {
        return None;
    }
    let text = s.status.as_deref()?;
    let up = crate::stack::assess::uptime_from_status(text)?;
    if up < crate::stack::assess::RESETTLE * 2 {
        return None;
    }
    let started = Stamp {
        secs: now.secs - i64::try_from(up.as_secs()).unwrap_or(0),
        nanos: 0,
    };
    Some(ContainerFacts {
        status: "running".into(),
        health: health_from_status_text(text).map(str::to_string),
        started_at: Some(started.rfc3339()),
        observed_at: Some(now),
        ..identity(s)
    })
}

/// Builds the facts of one container from its summary and its inspect.
pub fn of(s: &ContainerSummary, i: &ContainerInspectResponse) -> ContainerFacts {
    let state = i.state.clone().unwrap_or_default();
    let status = state
        .status
        .map(|st| st.to_string())
        .or_else(|| s.state.map(|st| st.to_string()))
        .unwrap_or_default();
    let health = state
        .health
        .as_ref()
        .and_then(|h| h.status)
        .map(|h| h.to_string())
        .filter(|h| !h.is_empty() && h != "none")
        .or_else(|| {
            s.status
                .as_deref()
                .and_then(health_from_status_text)
                .map(str::to_string)
        });
    let policy = i
        .host_config
        .as_ref()
        .and_then(|h| h.restart_policy.as_ref());
    let restart_policy = policy
        .and_then(|p| p.name)
        .map(|n| n.to_string())
        .unwrap_or_default();
    let max_retries = policy.and_then(|p| p.maximum_retry_count).unwrap_or(0);
    let time = |t: Option<String>| t.filter(|t| !t.starts_with("0001-"));
    ContainerFacts {
        status,
        health,
        exit_code: state.exit_code,
        restart_policy,
        max_retries,
        restart_count: i.restart_count.unwrap_or(0),
        started_at: time(state.started_at),
        finished_at: time(state.finished_at),
        oom_killed: state.oom_killed.unwrap_or(false),
        error: state.error.filter(|e| !e.is_empty()),
        observed_at: Some(Stamp::now()),
        ..identity(s)
    }
}

/// What the list call alone says of a container: who it is, never how it is.
fn identity(s: &ContainerSummary) -> ContainerFacts {
    let who = Identity::of_summary(s).unwrap_or(Identity {
        project: String::new(),
        service: String::new(),
        number: 1,
        oneoff: false,
    });
    ContainerFacts {
        id: s.id.clone().unwrap_or_default(),
        name: s
            .names
            .as_ref()
            .and_then(|n| n.first())
            .map(|n| n.trim_start_matches('/').to_string())
            .unwrap_or_default(),
        project: who.project,
        service: who.service,
        number: who.number,
        oneoff: who.oneoff,
        image: s.image.clone().unwrap_or_default(),
        ..Default::default()
    }
}
