//! Adopting one stack (`hal adopt`): the fast path's baseline and the desired state, recorded under the module's lock as a start records them.

use crate::module::Module;
use crate::module::progress::Progress;
use crate::module::status::Desired;
use crate::run::node::Node;
use crate::stack::Baseline;

/// Records `m`'s baseline (when `runs`) and then its desired state (unless
/// hal already holds one, which is kept). Returns the baseline, if one was
/// tried, and the state store's warnings.
pub(crate) async fn stack(
    node: &Node,
    progress: &dyn Progress,
    m: &Module,
    desired: Desired,
    runs: bool,
) -> anyhow::Result<(Option<Baseline>, Vec<String>)> {
    let Some(stack) = crate::stack::Stack::of(m, None) else {
        anyhow::bail!("{} is not a stack", m.name);
    };
    let _lock = node.store.lock_module(&m.name).await?;
    let baseline = if runs {
        Some(crate::stack::record_baseline(node.stack_env(progress), &stack).await?)
    } else {
        None
    };
    let (state, _) = node.store.read();
    let held = state.modules.get(&m.name).and_then(|r| r.desired);
    let mut warnings = Vec::new();
    if held.is_none() {
        warnings.extend(node.store.set_desired(&m.name, desired).await?);
    }
    Ok((baseline, warnings))
}
