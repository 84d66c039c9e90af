//! `update`'s own arguments: whole modules only, one at a time unless told (start and stop share [`super::Targets`], which takes `MODULE/SERVICE` and works on several at once).

use clap::Args;
use clap_complete::engine::ArgValueCompleter;

use super::values::parse_duration;

/// How many modules `update` works on at once unless told: one, so that
/// `--max-failures` stops a bad image before it reaches the next module.
pub(crate) const UPDATE_JOBS: u16 = 1;

/// Which modules `update` works on: whole modules only (it recreates the
/// services whose image changed), one at a time unless told. Its own, not
/// [`super::Targets`]: start and stop take `MODULE/SERVICE` and work on several at once.
#[derive(Debug, Args)]
pub struct UpdateTargets {
    /// Module names (see `hal module list`) or quoted shell patterns ('mail*'): whole modules only (an update recreates just the services whose image changed).
    #[arg(value_name = "MODULE", required_unless_present = "all", add = ArgValueCompleter::new(crate::cli::complete::modules))]
    pub modules: Vec<String>,

    /// Every module on the node.
    #[arg(long, conflicts_with = "modules")]
    pub all: bool,

    /// How many modules to update at once.
    #[arg(long, short = 'j', value_name = "N", default_value_t = UPDATE_JOBS, value_parser = clap::value_parser!(u16).range(1..=64))]
    pub jobs: u16,
}

/// What `update` takes.
#[derive(Debug, Args)]
pub struct UpdateArgs {
    #[command(flatten)]
    pub targets: UpdateTargets,

    /// Ask each image's registry for its digest now, pull nothing, and list what would change, with the plan of the start after the pull (`hal plan` under pull always) (exit 3 when some update is available, 0 when none; a registry it cannot ask is "cannot check", exit 1, never "up to date").
    #[arg(long, visible_alias = "dry-run")]
    pub check: bool,

    /// Stop starting updates after N modules failed to update (were rolled back, or could not pull); a module refused (its start limit) is not updated, not a failure.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_failures: u32,

    /// Update even if the module's start limit is hit (the update still counts as a start); a module named with `pin = true` is updated once anyway; a digest hal rolled back before (quarantined: update, a start under pull always and hal watch's rounds keep the running image and say so) is tried once more.
    #[arg(long)]
    pub force: bool,

    /// Recreate without checkpointing the data first: a rollback then puts back the previous images only, over whatever the new ones wrote (see `checkpoint` and `checkpoint_max` in docs/configuration.md).
    #[arg(long)]
    pub no_checkpoint: bool,

    /// How long each updated module has to become active, healthchecks included, before it is rolled back, e.g. 90s or 5m [default: 120s, or the config's timeout].
    #[arg(long, value_name = "DUR", value_parser = parse_duration)]
    pub timeout: Option<std::time::Duration>,
}
