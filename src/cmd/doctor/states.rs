//! One state per engine: doctor fails when a private state claims the engine the node's state already drives.

use super::check::Check;
use crate::cmd::ctx::Ctx;
use crate::state::Place;
use crate::state::Store;
use crate::state::shared::user_state_dir;

/// Fails when hal uses the node's state for the system engine and this
/// user's own state directory also holds module records (what an older hal
/// kept per user): two desired states for one engine, and the watch reads
/// only the node's. A rootless engine's user state and `HAL_STATE_DIR` are
/// the one state of their engine and pass.
pub(super) fn one_state(ctx: &Ctx) -> Option<Check> {
    let store = &ctx.node.store;
    if store.place() != Place::Node {
        return None;
    }
    let private = user_state_dir()?;
    if private == store.dir() {
        return None;
    }
    let (other, _) = Store::new(private.clone()).read();
    let claimed: Vec<&String> = other
        .modules
        .iter()
        .filter(|(_, r)| r.desired.is_some() || !r.starts.is_empty())
        .map(|(n, _)| n)
        .collect();
    if claimed.is_empty() {
        return Some(Check::pass(
            "one-state",
            format!(
                "the system engine's state is the node's, {}",
                store.dir().display()
            ),
        ));
    }
    Some(Check::fail(
        "one-state",
        format!(
            "two states claim the system engine: the node's {} and {} (records for {}), which no hal reads any more",
            store.dir().display(),
            private.display(),
            claimed
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        format!(
            "the node's state is the one every hal and the watch use: check its desired states (hal status), then remove the private copy (rm -r {})",
            private.display()
        ),
    ))
}
