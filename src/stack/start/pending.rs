//! What a start hands between its steps: its fixed inputs while it launches, and the wait it leaves for `active`.

use crate::docker::engine::{Engine, Listed};
use crate::module::outcome::StartPlan;
use crate::module::warning::Warning;
use crate::stack::bound::Bound;
use crate::stack::env::Env;
use crate::stack::one_stack::Stack;
use crate::stack::swap::rollback;

/// A started stack that still has to reach `active`.
pub(crate) struct Pending {
    pub(crate) engine: Engine,
    pub(crate) name: String,
    /// Only this service's containers count (`MODULE/SERVICE`).
    pub(crate) service: Option<String>,
    /// When the whole start (launch and wait) must be over.
    pub(crate) bound: Bound,
    /// The module's containers as just listed (empty: list them first).
    pub(crate) containers: Vec<Listed>,
    pub(crate) warnings: Vec<Warning>,
    /// Where the module's containers are recorded once the wait is over (`state::ledger`).
    /// (Boxed: a runner's `Launched` carries a `Pending` by value.)
    pub(crate) store: Box<crate::state::Store>,
    /// Set when the launch moved services onto new images: a wait that fails rolls them back.
    pub(crate) rollback: Option<Box<rollback::Rollback>>,
}

/// One start's fixed inputs, handed down its steps together: where it runs,
/// which stack, its plan (flags and config resolved) and its deadline.
pub(super) struct Start<'a> {
    pub(super) env: Env<'a>,
    pub(super) engine: &'a Engine,
    pub(super) stack: &'a Stack<'a>,
    pub(super) plan: &'a StartPlan,
    pub(super) bound: Bound,
}

impl Pending {
    /// A wait on `stack` within `bound`, its containers listed at its first
    /// poll, no warnings yet and nothing to roll back.
    pub(crate) fn new(
        store: &crate::state::Store,
        engine: &Engine,
        stack: &Stack<'_>,
        bound: Bound,
    ) -> Pending {
        Pending {
            engine: engine.clone(),
            name: stack.name.to_string(),
            service: stack.service.map(str::to_string),
            bound,
            containers: Vec::new(),
            warnings: Vec::new(),
            store: Box::new(store.clone()),
            rollback: None,
        }
    }
}
