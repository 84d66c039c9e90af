//! `update`'s own work on one stack, its lock taken: pull (or, under `--check`, ask the registries), count a start when an image changed, recreate behind the gate. The runner (`runner.rs`) does the rest; the gate restarts and holds the namespace followers (`dependents.rs`), and `follow::after_update` says them and restarts them again after a rollback (`call.rs`).

use crate::module::Module;
use crate::module::progress::Progress;
use crate::module::target::Target;
use crate::module::warning::Warning;
use crate::run::backend::{plan, undriven};
use crate::run::node::Node;
use crate::run::steps::{Did, Launched, Worked, outcome_now, still_wanted};
use crate::run::verb::UpdateOpts;
use crate::stack::checkpoint::{self, DataSource, SourcesError};
use crate::util::size;
use crate::util::timefmt::Stamp;

/// One module's update (or check), its lock taken, with what it did: what
/// it found, and when it got past the refusals and changed something (said
/// on a failure too: a failed recreate still counted).
pub(super) async fn act(
    node: &Node,
    progress: &dyn Progress,
    m: &Module,
    opts: &UpdateOpts,
) -> Worked<Launched> {
    let t = Target::whole(m.clone());
    if opts.by_supervisor {
        still_wanted(node, m)?;
    }
    let env = node.stack_env(progress);
    let stack = crate::stack::Stack::of(m, None).ok_or_else(|| undriven(m))?;
    if opts.check {
        // A registry not asked is no "up to date": the check failed (exit 1).
        let checked = crate::stack::check_update(env, &stack).await?;
        let mut did = Did::default();
        did.update.check = true;
        did.update.available = checked.available();
        did.update.images = checked.images;
        did.warnings.extend(checked.held);
        if let Some(cannot) = checked.cannot {
            return Err(did.failed(cannot.into()));
        }
        return did.with(done(node, &t, Vec::new()).await);
    }
    if node.config.pinned(&m.name) && !opts.unpinned.contains(&m.name) {
        // `update --all` and the scheduled rounds leave a pinned module, and say so.
        return Did::default().with(done(node, &t, vec![Warning::Pinned]).await);
    }
    let plan = plan(node, m, &opts.start());
    // Refused at the limit before anything is pulled, as a start is; counted
    // below only when something is recreated.
    node.store.check_limit(&m.name, plan.limit, opts.force)?;
    // The checkpoint's size is known, and refused over `checkpoint_max`,
    // before anything is pulled or stopped.
    let sources = if opts.no_checkpoint {
        None
    } else {
        Some(checkpoint_sources(node, env, m, &stack).await?)
    };
    let mut did = Did {
        tried: true,
        ..Did::default()
    };
    let pulled = crate::stack::pull_update(env, &stack, &plan, opts.force)
        .await
        .map_err(|e| did.failed(e))?;
    did.update.images = pulled.images.clone();
    did.warnings.extend(pulled.held.iter().cloned());
    if !pulled.changed() {
        // Nothing changed: nothing is recreated, nothing counts. Every image
        // pulled and none new: an old rollback no longer describes the module.
        if pulled.warnings.is_empty() {
            let name = m.name.clone();
            node.store
                .update(move |s| {
                    if let Some(r) = s.modules.get_mut(&name) {
                        r.up_to_date();
                    }
                })
                .await
                .map_err(|e| did.failed(e))?;
        }
        return did.with(done(node, &t, pulled.warnings).await);
    }
    let at = Stamp::now();
    let counted = node.store.count_start(&m.name, plan.limit, opts.force, at);
    let counted = counted.await.map(|(_, w)| Warning::of_state(w));
    did.warnings.extend(counted.map_err(|e| did.failed(e))?);
    did.changed = true;
    (did.update.dependents, did.update.followers) = held_by_gate(node, &m.name).await;
    let launch = crate::stack::recreate_update(env, &stack, pulled, plan.timeout, sources).await;
    if launch.as_ref().is_err_and(refused) {
        // A refused checkpoint copy recreated nothing: its start is taken
        // back (the refusal is what is said, should this fail too).
        let _ = node.store.uncount_start(&m.name, at).await;
    }
    did.with(launch.map(Launched::of))
}

/// The update was refused for its checkpoint (the copy failed).
fn refused(e: &anyhow::Error) -> bool {
    e.chain().any(|c| c.is::<checkpoint::CheckpointRefused>())
}

/// What the gate holds besides the module, read before its recreate: the
/// dependents, and the namespace followers (a follower also declared a
/// dependent, once, as a follower).
async fn held_by_gate(node: &Node, name: &str) -> (Vec<String>, Vec<String>) {
    let followers = crate::run::dependents::active_followers(node, name).await;
    let mut dependents = crate::run::dependents::active_dependents(node, name).await;
    dependents.retain(|d| !followers.contains(d));
    (dependents, followers)
}

/// An update that changed nothing: the module's state now.
async fn done(node: &Node, t: &Target, warnings: Vec<Warning>) -> anyhow::Result<Launched> {
    outcome_now(node, t, warnings).await.map(Launched::Done)
}

/// What an update of `m` would checkpoint (its config's `checkpoint`, or
/// the default), refused when an entry names nothing of the module (exit 2)
/// or when it all holds more than `checkpoint_max` (exit 1).
async fn checkpoint_sources(
    node: &Node,
    env: crate::stack::Env<'_>,
    m: &Module,
    stack: &crate::stack::Stack<'_>,
) -> anyhow::Result<Vec<DataSource>> {
    let settings = node.config.checkpoint(&m.name);
    let sources = match checkpoint::sources(env, stack, settings.entries.as_deref()).await {
        Ok(s) => s,
        Err(SourcesError::Unmatched(entry)) => {
            let key = format!("module.{}.checkpoint", m.name);
            return Err(node
                .config
                .key_error(
                    &key,
                    format!(
                        "{entry:?} names no volume and no bind mount of {} (a compose volume key, or a bind mount's source relative to {})",
                        m.name,
                        stack.dir.display()
                    ),
                )
                .into());
        }
        Err(SourcesError::Other(e)) => return Err(e),
    };
    let bytes = checkpoint::size_of(&sources).await?;
    if bytes > settings.max {
        return Err(checkpoint::CheckpointRefused(format!(
            "update refused: its checkpoint would be {} ({bytes} bytes), over checkpoint_max {}; raise checkpoint_max, or update with --no-checkpoint",
            size::format(bytes),
            size::format(settings.max)
        ))
        .into());
    }
    Ok(sources)
}
