//! Whether the engine delivers events to hal: volumes of hal's own made and removed while subscribed (cheap, no image needed, and both Docker and Podman announce them).

use std::collections::HashMap;
use std::time::{Duration, Instant};

use bollard::Docker;
use bollard::models::{EventMessage, VolumeCreateRequest};
use bollard::query_parameters::{EventsOptions, RemoveVolumeOptions};
use futures_util::stream::StreamExt;

/// How often another test volume is made while no event has come: the events
/// request and the first volume race to the engine, and a volume made before the
/// engine has taken the subscription is never announced to it.
const AGAIN: Duration = Duration::from_secs(1);

/// Why the engine delivered no event of hal's own making.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ProbeError {
    #[error("the event stream failed: {0}")]
    Stream(bollard::errors::Error),
    #[error("the event stream ended")]
    Ended,
    #[error("could not make a test volume: {0}")]
    Volume(bollard::errors::Error),
    #[error("no event for {made} test volume(s) within {}s", limit.as_secs())]
    Silent { made: usize, limit: Duration },
}

/// How long after it was made a test volume's event took, or why none came within `limit`.
pub(super) async fn event_round_trip(
    api: &Docker,
    limit: Duration,
) -> Result<Duration, ProbeError> {
    let base = format!(
        "hal-doctor-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default()
    );
    let options = EventsOptions {
        since: None,
        until: None,
        filters: Some(HashMap::from([
            ("type".to_string(), vec!["volume".to_string()]),
            ("event".to_string(), vec!["create".to_string()]),
        ])),
    };
    let mut events = api.events(Some(options));
    let mut made: Vec<(String, Instant)> = Vec::new();
    let mut again = tokio::time::interval(AGAIN);
    again.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let wait = async {
        loop {
            tokio::select! {
                // The events stream first: its first poll sends the subscription.
                biased;
                next = events.next() => match next {
                    Some(Ok(ev)) => {
                        if let Some(at) = announced(&ev, &made) {
                            return Ok(at.elapsed());
                        }
                    }
                    Some(Err(e)) => return Err(ProbeError::Stream(e)),
                    None => return Err(ProbeError::Ended),
                },
                _ = again.tick() => {
                    let name = format!("{base}-{}", made.len());
                    let volume = VolumeCreateRequest {
                        name: Some(name.clone()),
                        labels: Some(HashMap::from([("hal.doctor".to_string(), "1".to_string())])),
                        ..Default::default()
                    };
                    let t0 = Instant::now();
                    api.create_volume(volume)
                        .await
                        .map_err(ProbeError::Volume)?;
                    made.push((name, t0));
                }
            }
        }
    };
    let got = tokio::time::timeout(limit, wait).await;
    for (name, _) in &made {
        let _ = api.remove_volume(name, None::<RemoveVolumeOptions>).await;
    }
    match got {
        Ok(r) => r,
        Err(_) => Err(ProbeError::Silent {
            made: made.len(),
            limit,
        }),
    }
}

/// When the volume an event names was made, if it is one of ours.
fn announced(ev: &EventMessage, made: &[(String, Instant)]) -> Option<Instant> {
    let actor = ev.actor.as_ref()?;
    let by_name = actor.attributes.as_ref().and_then(|a| a.get("name"));
    made.iter()
        .find(|(name, _)| actor.id.as_deref() == Some(name.as_str()) || by_name == Some(name))
        .map(|(_, at)| *at)
}
