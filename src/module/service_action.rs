//! What the next start would do to each service of a module, and why (`hal plan`): plain data the backends fill and the printer shows.

use serde::Serialize;

/// What the next `hal module start` would do to one service (or a unit).
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum ServiceAction {
    /// Nothing: it runs as its files say.
    Keep,
    /// A stopped container started again, or a finished job run again.
    Start,
    /// A container made where there is none.
    Create,
    /// Its container replaced by a new one.
    Recreate,
    /// A project container whose service is gone (an orphan), or a replica too many.
    Remove,
}

impl ServiceAction {
    pub(crate) fn word(self) -> &'static str {
        match self {
            ServiceAction::Keep => "keep",
            ServiceAction::Start => "start",
            ServiceAction::Create => "create",
            ServiceAction::Recreate => "recreate",
            ServiceAction::Remove => "remove",
        }
    }
}

/// One reason for an action: what changed, and how.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct Why {
    /// `config`, `image`, `container`, `replicas`, `orphan`, `depends_on`, `requires`…
    pub what: String,
    pub detail: String,
}

impl Why {
    pub(crate) fn new(what: &str, detail: impl Into<String>) -> Why {
        Why {
            what: what.to_string(),
            detail: detail.into(),
        }
    }
}

/// One service's (or unit's) planned action, with its reasons (none for `keep`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct ServicePlan {
    pub service: String,
    pub action: ServiceAction,
    pub reasons: Vec<Why>,
}

/// A module's plan: its services, in compose's order, orphans last.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct ModulePlan {
    pub name: String,
    /// `stack` or `host`.
    pub kind: &'static str,
    pub services: Vec<ServicePlan>,
    /// The requirements not active that the start would start first and wait for.
    pub waits: Vec<Why>,
    /// What would fail before or during the start (`unset`, `container_name`,
    /// `port`, `network`).
    pub fails: Vec<Why>,
    /// Why the module could not be planned (its files do not parse, a file
    /// they need is missing): then it has no services, and the plan is not whole.
    pub error: Option<String>,
}

impl ModulePlan {
    /// Whether the next start would change anything here.
    pub(crate) fn changes(&self) -> bool {
        !self.waits.is_empty()
            || !self.fails.is_empty()
            || self.error.is_some()
            || self
                .services
                .iter()
                .any(|s| s.action != ServiceAction::Keep)
    }
}

#[cfg(test)]
impl ModulePlan {
    /// The plan of a stack `web` whose one service, `app`, would see
    /// `action` (with no reason given): the unit tests' plan.
    pub(crate) fn one_service(action: ServiceAction) -> ModulePlan {
        ModulePlan {
            name: "web".to_string(),
            kind: "stack",
            services: vec![ServicePlan {
                service: "app".to_string(),
                action,
                reasons: Vec::new(),
            }],
            waits: Vec::new(),
            fails: Vec::new(),
            error: None,
        }
    }
}
