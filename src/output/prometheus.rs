//! The node's modules in node_exporter's textfile-collector format: `hal status --format prometheus` and `hal watch --metrics`.

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::module::node_state::{NodeState, NodeSummary};
use crate::module::status::{Desired, ModuleStatus, State};
use crate::module::update_tally::UpdateTally;
use crate::util::timefmt::Stamp;

/// Every state a module can be in: each module has a series for each, 1 for the current one.
const STATES: [State; 7] = [
    State::Active,
    State::Starting,
    State::Degraded,
    State::Inactive,
    State::Failed,
    State::Invalid,
    State::Unknown,
];

/// What only `hal watch` knows: its repairs so far and its last pass.
pub(crate) struct WatchSeries<'a> {
    /// Repairs by (module, action), counted since the watch started.
    pub repairs: &'a BTreeMap<(String, String), u64>,
    /// When the watch last read its modules.
    pub last_pass: Stamp,
    /// Whether hal's state could be written when the watch last tried.
    pub state_writable: bool,
}

/// The text of the metrics file: HELP and TYPE before each family, one
/// sample a line; `updates` is what updates left per module (from hal's state).
pub(crate) fn render(
    modules: &[ModuleStatus],
    updates: &BTreeMap<String, UpdateTally>,
    watch: Option<&WatchSeries<'_>>,
    node: Option<&NodeSummary>,
) -> String {
    let mut out = String::new();
    if let Some(n) = node {
        node_series(&mut out, n);
    }
    state_series(&mut out, modules);
    desired_series(&mut out, modules);
    let gauge = |name: &'static str, help: &'static str| Family {
        name,
        kind: "gauge",
        help,
    };
    let held = gauge(
        "hal_module_held",
        "1 while hal watch holds the module (its start limit is hit), else 0.",
    );
    held.write(
        &mut out,
        per_module(modules, |m| Some(u64::from(m.held.is_some()))),
    );
    let starts = gauge(
        "hal_module_starts",
        "Starts counted in the module's current start-limit window.",
    );
    starts.write(
        &mut out,
        per_module(modules, |m| Some(u64::from(m.limit.used))),
    );
    let limit = gauge(
        "hal_module_start_limit",
        "Starts the module may make in one window (its burst).",
    );
    limit.write(
        &mut out,
        per_module(modules, |m| Some(u64::from(m.limit.burst))),
    );
    update_series(&mut out, modules, updates);
    if let Some(w) = watch {
        watch_series(&mut out, w);
    }
    out
}

/// One family of series: its name, type and HELP line.
struct Family {
    name: &'static str,
    kind: &'static str,
    help: &'static str,
}

/// A sample's labels and value.
type Sample = (Vec<(&'static str, String)>, u64);

impl Family {
    /// The family's HELP and TYPE, then each sample on a line.
    fn write(&self, out: &mut String, samples: impl IntoIterator<Item = Sample>) {
        let _ = writeln!(out, "# HELP {} {}", self.name, self.help);
        let _ = writeln!(out, "# TYPE {} {}", self.name, self.kind);
        for (labels, value) in samples {
            sample(out, self.name, &labels, value);
        }
    }
}

/// A sample per module (`module` and `kind` labels), for each that has a value.
fn per_module(
    modules: &[ModuleStatus],
    value: impl Fn(&ModuleStatus) -> Option<u64>,
) -> impl Iterator<Item = Sample> {
    modules
        .iter()
        .filter_map(move |m| value(m).map(|v| (labels_of(m, None), v)))
}

/// A module's labels (`module`, `kind`), and one more if given.
fn labels_of(m: &ModuleStatus, more: Option<(&'static str, &str)>) -> Vec<(&'static str, String)> {
    let mut labels = vec![("module", label(m)), ("kind", m.kind.as_str().to_string())];
    labels.extend(more.map(|(k, v)| (k, v.to_string())));
    labels
}

/// Each module's state: 1 for the current one, 0 for the others.
fn state_series(out: &mut String, modules: &[ModuleStatus]) {
    let family = Family {
        name: "hal_module_state",
        kind: "gauge",
        help: "1 for the module's current state, 0 for the others.",
    };
    let samples = modules.iter().flat_map(|m| {
        let mut states = STATES.to_vec();
        if !states.contains(&m.state) {
            states.push(m.state);
        }
        states.into_iter().map(move |s| {
            let labels = labels_of(m, Some(("state", s.as_str())));
            (labels, u64::from(m.state == s))
        })
    });
    family.write(out, samples);
}

/// What hal was last asked for, per module: `up`, `down`, or `none`.
fn desired_series(out: &mut String, modules: &[ModuleStatus]) {
    let family = Family {
        name: "hal_module_desired",
        kind: "gauge",
        help: "1 for the state hal was last asked for: up, down, or none when hal never started or stopped it.",
    };
    let samples = modules.iter().flat_map(|m| {
        [Some(Desired::Up), Some(Desired::Down), None]
            .into_iter()
            .map(move |d| {
                let word = d.map_or("none", Desired::as_str);
                (
                    labels_of(m, Some(("desired", word))),
                    u64::from(m.desired == d),
                )
            })
    });
    family.write(out, samples);
}

/// The node as a whole: 1 for its state (`systemctl is-system-running`'s words), 0 for the others.
fn node_series(out: &mut String, n: &NodeSummary) {
    let family = Family {
        name: "hal_node_state",
        kind: "gauge",
        help: "1 for the node's state (starting, running, degraded), 0 for the others.",
    };
    let samples = NodeState::ALL.into_iter().map(|s| {
        (
            vec![("state", s.as_str().to_string())],
            u64::from(n.state == s),
        )
    });
    family.write(out, samples);
}

/// What `hal update` left in the state: the last check's answer, and the rollbacks.
fn update_series(
    out: &mut String,
    modules: &[ModuleStatus],
    updates: &BTreeMap<String, UpdateTally>,
) {
    let available = Family {
        name: "hal_module_update_available",
        kind: "gauge",
        help: "1 when the last hal update --check found another image in the registry of some service of the module, 0 when it found none; no sample for a module never checked or whose last check could not ask a registry.",
    };
    available.write(
        out,
        per_module(modules, |m| {
            let available = updates.get(&m.name).and_then(|u| u.available);
            available.map(u64::from)
        }),
    );
    let rollbacks = Family {
        name: "hal_module_rollbacks_total",
        kind: "counter",
        help: "Updates of the module that hal rolled back to the previous images, ever (kept in hal's state).",
    };
    rollbacks.write(
        out,
        per_module(modules, |m| {
            Some(updates.get(&m.name).map_or(0, |u| u.rollbacks))
        }),
    );
    let quarantined = Family {
        name: "hal_module_quarantined",
        kind: "gauge",
        help: "1 for each service of the module whose new image hal rolled back and will not apply again (quarantined until another digest is applied or hal update --force tries it); no sample otherwise.",
    };
    let samples = modules
        .iter()
        .filter(|m| m.service.is_none())
        .flat_map(|m| {
            let services = updates.get(&m.name).map(|u| u.quarantined.clone());
            services
                .into_iter()
                .flatten()
                .map(move |service| (labels_of(m, Some(("service", &service))), 1))
        });
    quarantined.write(out, samples);
}

fn watch_series(out: &mut String, w: &WatchSeries<'_>) {
    let repairs = Family {
        name: "hal_watch_repairs_total",
        kind: "counter",
        help: "Repairs hal watch made since it started that succeeded (a repair refused at the start limit or that failed is not counted), by module and action: containers (the failing containers alone), module (the whole module), escalated (the whole module after a repair of its containers did not hold).",
    };
    let samples = w.repairs.iter().map(|((module, action), n)| {
        (
            vec![("module", module.clone()), ("action", action.clone())],
            *n,
        )
    });
    repairs.write(out, samples);
    let last_pass = Family {
        name: "hal_watch_last_pass_timestamp_seconds",
        kind: "gauge",
        help: "When hal watch last read its modules (Unix time).",
    };
    // One sample with no labels, in seconds with a fraction.
    last_pass.write(out, []);
    let secs = w.last_pass.secs() as f64 + f64::from(w.last_pass.nanos()) / 1e9;
    let _ = writeln!(out, "{} {secs:.3}", last_pass.name);
    let writable = Family {
        name: "hal_state_writable",
        kind: "gauge",
        help: "1 while hal watch can write hal's state; 0 while it cannot (a full disk, a read-only mount) and keeps its start counts and holds in memory.",
    };
    writable.write(out, []);
    let _ = writeln!(out, "{} {}", writable.name, u64::from(w.state_writable));
}

/// `web`, or `web/worker` for one service's status.
fn label(m: &ModuleStatus) -> String {
    match &m.service {
        Some(s) => format!("{}/{s}", m.name),
        None => m.name.clone(),
    }
}

fn sample(out: &mut String, name: &str, labels: &[(&str, String)], value: u64) {
    let labels: Vec<String> = labels
        .iter()
        .map(|(k, v)| format!("{k}=\"{}\"", escape(v)))
        .collect();
    let _ = writeln!(out, "{name}{{{}}} {value}", labels.join(","));
}

/// A label value as the exposition format quotes it.
fn escape(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_values_are_escaped() {
        assert_eq!(escape("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
    }

    #[test]
    fn the_node_state_is_one_series_per_word() {
        let n = NodeSummary {
            state: NodeState::Starting,
            up_since: None,
            until: None,
            wanted: 2,
            not_active: vec!["db".into()],
            unwritable: None,
        };
        let text = render(&[], &BTreeMap::new(), None, Some(&n));
        assert!(text.starts_with("# HELP hal_node_state "), "{text}");
        assert!(text.contains("# TYPE hal_node_state gauge\n"));
        assert!(text.contains("hal_node_state{state=\"starting\"} 1\n"));
        assert!(text.contains("hal_node_state{state=\"running\"} 0\n"));
        assert!(text.contains("hal_node_state{state=\"degraded\"} 0\n"));
    }

    #[test]
    fn watch_series_name_each_repair() {
        let mut repairs = BTreeMap::new();
        repairs.insert(("web".to_string(), "containers".to_string()), 2);
        let w = WatchSeries {
            repairs: &repairs,
            last_pass: Stamp::new(10, 500_000_000),
            state_writable: false,
        };
        let text = render(&[], &BTreeMap::new(), Some(&w), None);
        assert!(text.contains("\nhal_state_writable 0\n"), "{text}");
        assert!(text.contains("hal_watch_repairs_total{module=\"web\",action=\"containers\"} 2\n"));
        // The help says what the counter counts: repairs that succeeded (issue 52).
        assert!(
            text.contains("# HELP hal_watch_repairs_total Repairs hal watch made since it started that succeeded"),
            "{text}"
        );
        assert!(text.contains("hal_watch_last_pass_timestamp_seconds 10.500\n"));
        assert!(text.contains("# TYPE hal_module_state gauge\n"));
    }

    #[test]
    fn update_series_say_the_last_check_and_the_rollbacks() {
        use crate::module::KindTag;
        let names = ["new", "same", "unreachable", "never"];
        let modules: Vec<ModuleStatus> = names
            .iter()
            .map(|n| ModuleStatus::named(n, KindTag::Stack, State::Active))
            .collect();
        let tally = |available: Option<bool>, rollbacks: u64| UpdateTally {
            available,
            rollbacks,
            quarantined: Vec::new(),
        };
        let mut updates = BTreeMap::new();
        updates.insert(
            "new".to_string(),
            UpdateTally {
                quarantined: vec!["api".into()],
                ..tally(Some(true), 2)
            },
        );
        updates.insert("same".to_string(), tally(Some(false), 0));
        updates.insert("unreachable".to_string(), tally(None, 0));
        let text = render(&modules, &updates, None, None);
        let has = |s: &str| text.contains(&format!("{s}\n"));
        assert!(
            has("hal_module_update_available{module=\"new\",kind=\"stack\"} 1"),
            "{text}"
        );
        assert!(
            has("hal_module_update_available{module=\"same\",kind=\"stack\"} 0"),
            "{text}"
        );
        assert!(
            !text.contains("hal_module_update_available{module=\"unreachable\""),
            "{text}"
        );
        assert!(
            !text.contains("hal_module_update_available{module=\"never\""),
            "{text}"
        );
        assert!(
            has("hal_module_rollbacks_total{module=\"new\",kind=\"stack\"} 2"),
            "{text}"
        );
        assert!(
            has("hal_module_rollbacks_total{module=\"never\",kind=\"stack\"} 0"),
            "{text}"
        );
        assert!(has("# TYPE hal_module_rollbacks_total counter"), "{text}");
        assert!(
            has("hal_module_quarantined{module=\"new\",kind=\"stack\",service=\"api\"} 1"),
            "{text}"
        );
        assert!(
            !text.contains("hal_module_quarantined{module=\"same\""),
            "{text}"
        );
        assert!(has("# TYPE hal_module_quarantined gauge"), "{text}");
    }
}
