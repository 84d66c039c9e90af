//! Adopting one stack (`hal adopt`): the fast path's baseline and the desired state, recorded under the module's lock as a start records them.

use crate::module::Module;
use crate::module::progress::Progress;
use crate::module::status::Desired;
use crate::module::warning::Warning;
use crate::run::backend::undriven;
use crate::run::node::Node;
use crate::stack::Baseline;

/// Records `m`'s baseline (when `runs`) and then its desired state (unless
/// hal already holds one, which is kept). Returns the baseline, if one was
/// tried, and the state store's warnings.
pub(crate) async fn adopt_stack(
    node: &Node,
    progress: &dyn Progress,
    m: &Module,
    desired: Desired,
    runs: bool,
) -> anyhow::Result<(Option<Baseline>, Vec<Warning>)> {
    let stack = crate::stack::Stack::of(m, None).ok_or_else(|| undriven(m))?;
    let _lock = node.store.lock_module(&m.name).await?;
    let baseline = if runs {
        Some(crate::stack::record_baseline(node.stack_env(progress), &stack).await?)
    } else {
        None
    };
    let (state, _) = node.store.read();
    let held = state.modules.get(&m.name).and_then(|r| r.desired);
    let warnings = match held {
        None => Warning::of_state(node.store.set_desired(&m.name, desired).await?),
        Some(_) => None,
    };
    Ok((baseline, warnings.into_iter().collect()))
}
