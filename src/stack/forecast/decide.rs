//! The per-service decisions of compose 2.26's `up` (pure): hash and image compared, replicas counted, stopped started, orphans removed, dependents recreated.

use std::collections::{BTreeMap, HashMap};

use crate::docker::compose::config_hash::Resolved;
use crate::docker::labels;
use crate::module::run_state::ContainerRun;
use crate::module::service_action::{ServiceAction, ServicePlan, Why};

/// One container of the project as the plan sees it.
#[derive(Clone, Debug)]
pub(crate) struct SeenContainer {
    pub name: String,
    pub service: String,
    pub number: u32,
    pub running: bool,
    pub state: Option<ContainerRun>,
    pub hash: Option<String>,
    pub image_label: Option<String>,
}

impl SeenContainer {
    pub(crate) fn of(c: &crate::docker::engine::Listed) -> Option<SeenContainer> {
        let id = c.identity.as_ref()?;
        if id.oneoff {
            return None;
        }
        Some(SeenContainer {
            name: c.name.clone(),
            service: id.service.clone(),
            number: id.number,
            running: c.is_running(),
            state: c.state,
            hash: c.labels.get(labels::CONFIG_HASH).cloned(),
            image_label: c.labels.get(labels::IMAGE).cloned(),
        })
    }
}

/// What `up` would do to each service, in compose's order, orphans last.
/// `images` holds the local id of each reference now (absent: not present).
/// `newer` the references the start's pull would move (pull `always`), and
/// why. `why_config` explains a hash that differs (the keys that changed).
pub(crate) fn decide(
    resolved: &[Resolved],
    seen: &[SeenContainer],
    images: &HashMap<String, String>,
    newer: &HashMap<String, Why>,
    why_config: &dyn Fn(&Resolved) -> Vec<Why>,
) -> Vec<ServicePlan> {
    let mut out: Vec<ServicePlan> = resolved
        .iter()
        .map(|r| one(r, seen, images, newer, why_config))
        .collect();
    dependents(resolved, &mut out);
    let mut orphans: BTreeMap<&str, Vec<&SeenContainer>> = BTreeMap::new();
    for c in seen {
        if !resolved.iter().any(|r| r.service == c.service) {
            orphans.entry(&c.service).or_default().push(c);
        }
    }
    for (service, cs) in orphans {
        let names: Vec<&str> = cs.iter().map(|c| c.name.as_str()).collect();
        out.push(ServicePlan {
            service: service.to_string(),
            action: ServiceAction::Remove,
            reasons: vec![Why::new(
                "orphan",
                format!(
                    "service {service} is gone from the files: {}",
                    names.join(", ")
                ),
            )],
        });
    }
    out
}

fn one(
    r: &Resolved,
    seen: &[SeenContainer],
    images: &HashMap<String, String>,
    newer: &HashMap<String, Why>,
    why_config: &dyn Fn(&Resolved) -> Vec<Why>,
) -> ServicePlan {
    let mut mine: Vec<&SeenContainer> = seen.iter().filter(|c| c.service == r.service).collect();
    mine.sort_by_key(|c| c.number);
    let plan = |action, reasons| ServicePlan {
        service: r.service.clone(),
        action,
        reasons,
    };
    let want = r.replicas as usize;
    let image_now = r.image.as_ref().and_then(|i| images.get(i));
    let mut recreate = Vec::new();
    let kept: Vec<&&SeenContainer> = mine.iter().take(want).collect();
    if kept.iter().any(|c| c.hash.as_deref() != Some(&r.hash)) {
        recreate.extend(why_config(r));
    }
    if let (Some(reference), Some(now)) = (&r.image, image_now)
        && let Some(c) = kept
            .iter()
            .find(|c| c.image_label.as_deref() != Some(now.as_str()))
    {
        recreate.push(Why::new(
            "image",
            format!(
                "{reference}: {} -> {}",
                c.image_label.as_deref().map_or("unknown", short),
                short(now)
            ),
        ));
    }
    if recreate.is_empty()
        && !kept.is_empty()
        && let Some(why) = r.image.as_ref().and_then(|i| newer.get(i))
    {
        recreate.push(why.clone());
    }
    if !recreate.is_empty() {
        return plan(ServiceAction::Recreate, recreate);
    }
    let mut reasons = Vec::new();
    let action = if mine.len() < want {
        let missing = if mine.is_empty() {
            "no container".to_string()
        } else {
            format!("{} of {want} containers", mine.len())
        };
        reasons.push(Why::new("container", missing));
        ServiceAction::Create
    } else if mine.len() > want {
        reasons.push(Why::new(
            "replicas",
            format!("{} containers, {want} wanted", mine.len()),
        ));
        ServiceAction::Remove
    } else {
        ServiceAction::Keep
    };
    for c in kept.iter().filter(|c| !c.running) {
        let state = c.state.map_or("not running", ContainerRun::as_str);
        reasons.push(Why::new("container", format!("{} is {state}", c.name)));
    }
    match action {
        ServiceAction::Keep if !reasons.is_empty() => plan(ServiceAction::Start, reasons),
        _ => plan(action, reasons),
    }
}

/// Compose recreates every service that depends on one it recreates.
fn dependents(resolved: &[Resolved], out: &mut [ServicePlan]) {
    loop {
        let recreated: Vec<String> = out
            .iter()
            .filter(|p| p.action == ServiceAction::Recreate)
            .map(|p| p.service.clone())
            .collect();
        let mut more = false;
        for (r, p) in resolved.iter().zip(out.iter_mut()) {
            if p.action == ServiceAction::Recreate {
                continue;
            }
            if let Some(dep) = r.depends_on.iter().find(|d| recreated.contains(d)) {
                if !matches!(p.action, ServiceAction::Keep | ServiceAction::Start) {
                    continue;
                }
                p.action = ServiceAction::Recreate;
                p.reasons
                    .push(Why::new("depends_on", format!("{dep} is recreated")));
                more = true;
            }
        }
        if !more {
            return;
        }
    }
}

/// An image id as `docker images` shows it.
fn short(id: &str) -> &str {
    let hex = id.strip_prefix("sha256:").unwrap_or(id);
    hex.get(..12).unwrap_or(hex)
}
