//! `hal update`'s long help: what an update does, under its examples.

/// `update`'s examples and what it does, under its help.
pub(crate) const UPDATE_EXAMPLES: &str = "Examples:
  hal update web
  hal update --check --all
  hal module update --all --jobs 2 --max-failures 3
  hal update --json web | jq '.modules[0].rolled_back'

Each service's image is pulled through the Engine API (a failed pull keeps the present image, with a warning) and compared with what its containers run; only the services whose image changed are recreated (compose up -d --no-deps --force-recreate --pull never SERVICE...), their siblings keep their containers. The image each ran before keeps a hal-owned tag, hal-previous/MODULE:SERVICE, so no prune removes it; the tag moves at the next update. If the module is not active within --timeout (healthchecks included), each service's reference is pointed back at its previous image and the service recreated: the verb says `rolled back: MODULE/SERVICE (new image ...)` and exits 1, the failed container's exit code and last lines are kept as for a failed start, and status names the rollback until the next update or reset-failed. A start or restart whose pull brings a new image goes through the same gate. Host units have nothing to pull. An update that recreates something counts as one start against the module's limit.";
