//! What `hal adopt` will do, module by module: pure rules from what the inits and the engine said (the template's shape, the desired state to record).

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;

use crate::host::init::{Instance, template_problem};
use crate::module::config::Scope;
use crate::module::run_state::{Activity, ContainerRun};
use crate::module::status::{Desired, ModuleStatus};
use crate::module::{KindTag, Module};

/// The systemd template hal replaces.
pub(crate) const TEMPLATE: &str = "hal-module";

/// One unit that runs a module now.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct UnitRef {
    pub unit: String,
    pub scope: Scope,
    pub state: Activity,
    pub enabled: bool,
}

/// One module to adopt (or to leave alone, and why): a line of the plan.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct ToAdopt {
    pub name: String,
    /// What runs it now, in words.
    pub was: String,
    pub units: Vec<UnitRef>,
    /// Its containers (or its unit) run.
    pub runs: bool,
    /// What hal will record (a desired state hal already holds is kept).
    pub desired: Desired,
    /// What hal will do, in words.
    pub action: String,
    /// Why the module is left alone, if it is.
    pub refused: Option<String>,
}

/// Whether an instance is still someone's supervisor: running, failed,
/// enabled, or half handed over.
pub(crate) fn live(i: &Instance) -> bool {
    i.activity != Activity::Inactive || i.enabled || i.handing_over
}

/// The plan: every live `hal-module@` instance's module, then every running
/// stack hal has no desired state for, in name order.
pub(crate) fn build(
    instances: &[(Scope, Instance)],
    modules: &[Module],
    statuses: &[ModuleStatus],
    root: &Path,
) -> Vec<ToAdopt> {
    let mut by_module: BTreeMap<&str, Vec<&(Scope, Instance)>> = BTreeMap::new();
    for si in instances.iter().filter(|(_, i)| live(i)) {
        by_module
            .entry(si.1.instance.as_str())
            .or_default()
            .push(si);
    }
    let mut steps: Vec<ToAdopt> = by_module
        .iter()
        .map(|(name, found)| {
            let is_stack = modules.iter().any(|m| m.name == *name && m.is_stack());
            unit_step(name, found, status_of(statuses, name), is_stack, root)
        })
        .collect();
    steps.extend(
        statuses
            .iter()
            .filter(|s| !by_module.contains_key(s.name.as_str()))
            .filter_map(by_hand_step),
    );
    steps.sort_by(|a, b| a.name.cmp(&b.name));
    steps
}

fn status_of<'a>(statuses: &'a [ModuleStatus], name: &str) -> Option<&'a ModuleStatus> {
    statuses.iter().find(|s| s.name == name)
}

/// Whether any of the module's containers runs.
fn containers_run(status: Option<&ModuleStatus>) -> bool {
    status.is_some_and(|s| {
        s.services
            .iter()
            .any(|c| c.state.container() == Some(ContainerRun::Running))
    })
}

/// The step of a module some live instances run: taken over from them,
/// or left alone when they are not the template's or it is not a stack.
fn unit_step(
    name: &str,
    found: &[&(Scope, Instance)],
    status: Option<&ModuleStatus>,
    is_stack: bool,
    root: &Path,
) -> ToAdopt {
    let units: Vec<UnitRef> = found
        .iter()
        .map(|(scope, i)| UnitRef {
            unit: i.unit.clone(),
            scope: *scope,
            state: i.activity.clone(),
            enabled: i.enabled,
        })
        .collect();
    let refused = found
        .iter()
        .find_map(|(_, i)| template_problem(&i.exec_start, name, root))
        .or_else(|| {
            (!is_stack).then(|| {
                format!(
                    "hal has no stack {}: only stacks under its services root can be adopted",
                    root.join(name).display()
                )
            })
        })
        .map(|why| format!("{}: {why}", found[0].1.unit));
    let runs = containers_run(status) || found.iter().any(|(_, i)| i.activity == Activity::Active);
    let enabled = found.iter().any(|(_, i)| i.enabled);
    let desired = status
        .and_then(|s| s.desired)
        .unwrap_or(if runs || enabled {
            Desired::Up
        } else {
            Desired::Down
        });
    let was = units
        .iter()
        .map(|u| {
            let en = if u.enabled { ", enabled" } else { "" };
            format!(
                "{} ({}: {}{en})",
                u.unit,
                u.scope.as_str(),
                u.state.as_str()
            )
        })
        .collect::<Vec<_>>()
        .join("; ");
    let action = if refused.is_some() {
        "leave it alone".to_string()
    } else {
        let units = units
            .iter()
            .map(|u| u.unit.as_str())
            .collect::<Vec<_>>()
            .join(", ");
        format!(
            "desired {}, take over from {units} (no container stopped), disable it",
            desired.as_str()
        )
    };
    ToAdopt {
        name: name.to_string(),
        was,
        units,
        runs,
        desired,
        action,
        refused,
    }
}

/// The step of a stack no unit runs: running with no desired state in hal
/// (started by hand), so it is recorded as wanted up.
fn by_hand_step(s: &ModuleStatus) -> Option<ToAdopt> {
    let by_hand = s.kind == KindTag::Stack && s.desired.is_none() && containers_run(Some(s));
    by_hand.then(|| ToAdopt {
        name: s.name.clone(),
        was: "running, no unit (started by hand)".into(),
        units: Vec::new(),
        runs: true,
        desired: Desired::Up,
        action: "desired up".into(),
        refused: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::module::Kind;

    fn argv(s: &str) -> Vec<Vec<String>> {
        vec![s.split_whitespace().map(str::to_string).collect()]
    }

    fn inst(unit: &str, activity: Activity, enabled: bool) -> (Scope, Instance) {
        let name = unit
            .trim_start_matches("hal-module@")
            .trim_end_matches(".service");
        (
            Scope::User,
            Instance {
                unit: unit.into(),
                instance: name.into(),
                activity,
                enabled,
                exec_start: argv(&format!(
                    "docker compose --project-directory /services/{name} --project-name {name} up"
                )),
                handing_over: false,
            },
        )
    }

    fn stack(name: &str) -> Module {
        Module {
            name: name.into(),
            kind: Kind::Stack {
                dir: format!("/services/{name}").into(),
                file: format!("/services/{name}/compose.yaml").into(),
            },
        }
    }

    #[test]
    fn desired_is_up_when_it_runs_or_is_enabled() {
        let found = [
            inst("hal-module@a.service", Activity::Active, false),
            inst("hal-module@b.service", Activity::Failed, true),
            inst("hal-module@c.service", Activity::Failed, false),
            inst("hal-module@d.service", Activity::Inactive, false),
            inst("hal-module@x.service", Activity::Active, true),
        ];
        let modules = ["a", "b", "c", "d"].map(stack);
        let plan = build(&found, &modules, &[], Path::new("/services"));
        let got: Vec<(&str, Desired, bool)> = plan
            .iter()
            .map(|s| (s.name.as_str(), s.desired, s.refused.is_some()))
            .collect();
        assert_eq!(
            got,
            [
                ("a", Desired::Up, false),
                ("b", Desired::Up, false),
                ("c", Desired::Down, false),
                ("x", Desired::Up, true),
            ]
        );
        assert!(
            plan[3]
                .refused
                .as_deref()
                .unwrap()
                .contains("hal has no stack /services/x")
        );
    }
}
