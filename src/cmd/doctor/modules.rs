//! Are the modules usable: their names, and their compose files as `compose config -q` sees them.

use std::path::Path;
use std::time::Duration;

use futures_util::stream::{self, StreamExt};

use super::check::Check;
use crate::cmd::ctx::Ctx;
use crate::module::Module;
use crate::stack::{ComposeFound, ConfigVerdict};

/// How long one `compose config -q` may take.
const CONFIG_TIMEOUT: Duration = Duration::from_secs(30);

/// One failed check per module that cannot be used: an invalid name, a name
/// used twice, or (when compose was found) a compose file compose rejects.
pub(super) async fn problems(ctx: &Ctx, compose: Option<&ComposeFound>) -> Vec<Check> {
    let mut out: Vec<Check> = ctx
        .node
        .inventory
        .modules
        .iter()
        .filter_map(|m| {
            let reason = m.invalid_reason()?;
            Some(Check::fail(
                check_name(&m.name),
                reason.to_string(),
                invalid_hint(ctx, m),
            ))
        })
        .collect();
    if let Some(compose) = compose {
        let stacks = ctx.node.inventory.modules.iter().filter_map(|m| {
            let (dir, file) = m.stack_files()?;
            Some((m.name.as_str(), dir, file))
        });
        let rejected: Vec<Option<Check>> = stream::iter(stacks)
            .map(|(name, dir, file)| validate(ctx, compose, name, dir, file))
            .buffered(ctx.node.jobs(None))
            .collect()
            .await;
        out.extend(rejected.into_iter().flatten());
    }
    for m in &ctx.node.inventory.modules {
        if let Some(why) = crate::stack::name_mismatch(m) {
            out.push(Check::fail(
                check_name(&m.name),
                why,
                "remove `name:` and COMPOSE_PROJECT_NAME, or make them the directory name",
            ));
        }
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

/// The name of a module's own check line.
pub(super) fn check_name(module: &str) -> String {
    format!("module:{module}")
}

/// `compose config -q` on one stack: `None` when compose accepts it (or was not asked).
async fn validate(
    ctx: &Ctx,
    compose: &ComposeFound,
    name: &str,
    dir: &Path,
    file: &Path,
) -> Option<Check> {
    let verdict = ctx
        .node
        .stacks
        .check_compose_config(name, dir, CONFIG_TIMEOUT)
        .await;
    let why = match verdict {
        ConfigVerdict::Accepted | ConfigVerdict::NotAsked => return None,
        ConfigVerdict::Rejected(why) => why,
        ConfigVerdict::Silent => format!(
            "{} config gave no answer within {}s",
            compose.label,
            CONFIG_TIMEOUT.as_secs()
        ),
    };
    Some(Check::fail(
        check_name(name),
        format!("{}: {why}", file.display()),
        format!(
            "fix the compose file; `{} config` in {} shows the project as compose reads it",
            compose.label,
            dir.display()
        ),
    ))
}

fn invalid_hint(ctx: &Ctx, m: &Module) -> String {
    let dir = ctx.node.inventory.root.join(&m.name);
    if crate::module::name::problem(&m.name).is_some() {
        format!(
            "rename {} to a compose project name: lowercase letters, digits, '-' and '_', starting with a letter or digit",
            dir.display()
        )
    } else {
        format!(
            "rename {} or the [module.{}] section of the config: a name is either a stack or a host unit",
            dir.display(),
            m.name
        )
    }
}

/// The summary line over every module, given the problems found.
pub(super) fn summary(ctx: &Ctx, problems: &[Check], compose_checked: bool) -> Check {
    let modules = &ctx.node.inventory.modules;
    let stacks = modules.iter().filter(|m| m.is_stack()).count();
    let hosts = modules.iter().filter(|m| m.is_host()).count();
    if modules.is_empty() {
        return Check::pass(
            "modules",
            format!(
                "none: no stacks under {} and no host units in the config",
                ctx.node.inventory.root.display()
            ),
        );
    }
    let mut bad: Vec<&str> = problems
        .iter()
        .filter_map(|c| c.name.strip_prefix("module:"))
        .collect();
    bad.dedup();
    if !bad.is_empty() {
        return Check::fail(
            "modules",
            format!(
                "{} of {} invalid: {}",
                bad.len(),
                modules.len(),
                bad.join(", ")
            ),
            "fix the modules listed below",
        );
    }
    let how = if compose_checked {
        "compose files accepted by compose config"
    } else {
        "compose files not checked: no compose"
    };
    Check::pass(
        "modules",
        format!(
            "{} valid: {stacks} stacks ({how}), {hosts} host units",
            modules.len()
        ),
    )
}
