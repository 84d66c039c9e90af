//! Whether the engine delivers events to hal: a volume of hal's own made and removed while subscribed (cheap, no image needed, and both Docker and Podman announce it).

use std::collections::HashMap;
use std::time::{Duration, Instant};

use bollard::Docker;
use bollard::models::VolumeCreateRequest;
use bollard::query_parameters::{EventsOptions, RemoveVolumeOptions};
use futures_util::stream::StreamExt;

/// How long after its subscription a made volume's event takes, or why none came within `limit`.
pub(super) async fn event_round_trip(api: &Docker, limit: Duration) -> Result<Duration, String> {
    let name = format!(
        "hal-doctor-{}-{}",
        std::process::id(),
        Instant::now().elapsed().as_nanos()
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
    let volume = VolumeCreateRequest {
        name: Some(name.clone()),
        labels: Some(HashMap::from([("hal.doctor".to_string(), "1".to_string())])),
        ..Default::default()
    };
    let t0 = Instant::now();
    let wait = async {
        // The subscription is made by the first poll: poll it while the volume is made.
        let made = api.create_volume(volume);
        let (first, made) = futures_util::future::join(events.next(), made).await;
        made.map_err(|e| format!("could not make a test volume: {e}"))?;
        let mut next = first;
        loop {
            match next {
                Some(Ok(ev)) => {
                    let actor = ev.actor.unwrap_or_default();
                    let named = actor.id.as_deref() == Some(name.as_str())
                        || actor.attributes.unwrap_or_default().get("name") == Some(&name);
                    if named {
                        return Ok(t0.elapsed());
                    }
                }
                Some(Err(e)) => return Err(format!("the event stream failed: {e}")),
                None => return Err("the event stream ended".to_string()),
            }
            next = events.next().await;
        }
    };
    let got = tokio::time::timeout(limit, wait).await;
    let _ = api.remove_volume(&name, None::<RemoveVolumeOptions>).await;
    match got {
        Ok(r) => r,
        Err(_) => Err(format!(
            "no event for a test volume within {}s",
            limit.as_secs()
        )),
    }
}
