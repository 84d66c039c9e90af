//! `hal update`'s arguments: which modules, `--check`, and how a run over many of them goes.

use clap::Args;

use crate::cli::Targets;

/// What `update` takes. Its `--jobs` default is 1: one module at a time, so
/// that `--max-failures` stops a bad image before it reaches the next module.
#[derive(Debug, Args)]
pub struct UpdateArgs {
    #[command(flatten)]
    pub targets: Targets,

    /// Ask each image's registry for its digest now, pull nothing, and list what would change (exit 3 when some update is available, 0 when none).
    #[arg(long, visible_alias = "dry-run")]
    pub check: bool,

    /// Stop starting updates after N modules failed to update (were rolled back, or could not pull) [default: 1].
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_failures: u32,

    /// Update even if the module's start limit is hit (the update still counts as a start).
    #[arg(long)]
    pub force: bool,

    /// How long each updated module has to become active, healthchecks included, before it is rolled back, e.g. 90s or 5m [default: 120s, or the config's timeout].
    #[arg(long, value_name = "DUR", value_parser = super::parse_duration)]
    pub timeout: Option<std::time::Duration>,
}

/// `update`'s examples and what it does, under its help.
pub(crate) const UPDATE_EXAMPLES: &str = "Examples:
  hal update web
  hal update --check --all
  hal module update --all --jobs 2 --max-failures 3
  hal update --json web | jq '.modules[0].rolled_back'

Each service's image is pulled through the Engine API (a failed pull keeps the present image, with a warning) and compared with what its containers run; only the services whose image changed are recreated (compose up -d --no-deps --force-recreate --pull never SERVICE...), their siblings keep their containers. The image each ran before keeps a hal-owned tag, hal-previous/MODULE:SERVICE, so no prune removes it; the tag moves at the next update. If the module is not active within --timeout (healthchecks included), each service's reference is pointed back at its previous image and the service recreated: the verb says `rolled back: MODULE/SERVICE (new image ...)` and exits 1, the failed container's exit code and last lines are kept as for a failed start, and status names the rollback until the next update or reset-failed. A start or restart whose pull brings a new image goes through the same gate. Host units have nothing to pull. An update that recreates something counts as one start against the module's limit.";
