//! The whole command-line interface: every verb, flag and help text lives here.

mod args;
pub(crate) mod complete;
pub(crate) mod parse;
mod update;
mod values;

use std::path::PathBuf;

use clap::CommandFactory;
use clap::{Args, Parser, Subcommand, ValueEnum, ValueHint};
use clap_complete::env::CompleteEnv;

pub(crate) use args::{
    AdoptArgs, CompletionsArgs, LogsArgs, PlanArgs, RescueArgs, ResetArgs, StartArgs, StatusArgs,
    StatusFormat, StopArgs, Targets, WatchArgs,
};
pub(crate) use update::UpdateArgs;
pub(crate) use values::yes_or_no;

/// Answers a completion request (`HAL_COMPLETE` set in the environment) and exits;
/// returns at once otherwise. Call it first thing in `main`.
pub fn complete_from_env() {
    CompleteEnv::with_factory(Cli::command)
        .var(complete::VAR)
        .completer(complete::COMPLETER)
        .complete();
}

const EXIT_CODES: &str = "\
Exit codes:
  0  success; for status, every module asked about is active
  1  the operation failed (a module did not start, stop, or recover);
     status: the services root is missing, not a directory or unreadable
  2  usage error, bad config or name, a bad endpoint, context or TLS setting (every
     command, status included), another directory's project of the module's name
     (start, stop), or a confirmation was needed with no terminal and no --yes
  3  status: at least one module is not active; update --check: an update is available;
     plan: the next start would change something
  4  no such module (or service, or a pattern that matches none)
  5  refused: the module's start limit is hit (--force or reset-failed lifts it)
  6  the engine is unreachable (Docker daemon, or the init/user bus)
130  interrupted (Ctrl-C); 143 for SIGTERM";

/// One verb for every module on the node: Docker Compose stacks and init units alike.
#[derive(Debug, Parser)]
#[command(
    name = "hal",
    version,
    about = "Start, stop, watch and rescue the modules of a node: compose stacks and init units",
    long_about = "hal gives every module on a node the same verbs: start, stop, restart, status, logs \
and rescue. A module is a Docker Compose project under the services root (/services/NAME) or an init \
unit declared in the config. Stacks are driven through the Docker Engine API, units through systemd.

States: active (every expected container running, healthy where it has a healthcheck, or a job done), starting, degraded (some of the expected set running, some missing, stopped or unhealthy: the reason names the service, e.g. \"db: no container\"), inactive (stopped by request, or never started), failed (a container exited non-zero, loops or is dead; nothing of the expected set runs; the start limit is hit while the module is wanted up; or the last start failed, with its cause as the reason, until a start succeeds, a stop or reset-failed), conflict (a project with the module's name runs from another directory: not this module, never touched), orphaned (containers of a stack hal ran whose directory is gone: `hal stop NAME` removes them), invalid, unknown (hal cannot tell: the engine or init cannot be reached, or it answered what hal cannot read). A stack's expected set is what compose resolved for its files (active profiles, replicas), less the services stopped with `hal stop MODULE/SERVICE`; a service whose restart policy keeps it running (always, unless-stopped) and that has exited is not done, whatever its exit code. A module stopped by request is never failed. Health is the engine's own health field, never its display text.",
    after_help = "Examples:\n  hal status\n  hal module start web mailu\n  hal module logs -f web\n  hal --json module status web",
    after_long_help = EXIT_CODES,
    propagate_version = true
)]
pub struct Cli {
    #[command(flatten)]
    pub global: Global,

    #[command(subcommand)]
    pub command: Command,
}

/// Options every command takes, shown under their own heading in every help.
#[derive(Debug, Args)]
#[command(next_help_heading = "Global options")]
pub struct Global {
    /// Print one JSON document on stdout (logs: one object per line); no colour, no progress.
    #[arg(long, global = true)]
    pub json: bool,

    /// When to colour output: auto is off under NO_COLOR, on under CLICOLOR_FORCE, off under TERM=dumb, else on a terminal.
    #[arg(long, global = true, value_enum, default_value_t = ColorWhen::Auto, value_name = "WHEN")]
    pub color: ColorWhen,

    /// Print only errors and warnings.
    #[arg(short, long, global = true)]
    pub quiet: bool,

    /// Answer yes to confirmations (needed for stop --all, restart --all and rescue without a terminal); HAL_YES takes 1/0, true/false, yes/no or on/off.
    #[arg(
        short,
        long,
        global = true,
        env = "HAL_YES",
        hide_env_values = true,
        value_parser = yes_or_no
    )]
    pub yes: bool,

    /// The config file [default: ~/.config/hal/hal.toml, or /etc/hal/hal.toml for root].
    #[arg(
        long,
        global = true,
        env = "HAL_CONFIG",
        value_name = "FILE",
        value_hint = ValueHint::FilePath,
        hide_env_values = true
    )]
    pub config: Option<PathBuf>,

    /// The services root holding one directory per stack [default: services_dir from the config, else /services].
    #[arg(
        long,
        global = true,
        env = "HAL_SERVICES_DIR",
        value_name = "DIR",
        value_hint = ValueHint::DirPath,
        hide_env_values = true
    )]
    pub services_dir: Option<PathBuf>,

    /// The Docker endpoint, e.g. unix:///var/run/docker.sock [default: DOCKER_HOST, else DOCKER_CONTEXT, else the docker CLI's current context, else the local socket].
    #[arg(short = 'H', long, global = true, value_name = "URL", value_hint = ValueHint::Url)]
    pub host: Option<String>,
}

/// `--color` values.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum ColorWhen {
    Auto,
    Always,
    Never,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Work on modules: list, start, stop, restart, status, logs, rescue, reset-failed, update, plan (each is also a command of its own: `hal start` is `hal module start`).
    #[command(subcommand)]
    Module(ModuleCommand),

    /// `hal start|stop|restart|status|logs|list|rescue|reset-failed|update|plan`: each
    /// `hal module` verb is a command of its own too, declared once here.
    #[command(flatten)]
    Verb(ModuleCommand),

    /// Supervise the node: repair what fails (the failed container, not its siblings), within each module's limit (run it under init).
    #[command(after_help = "Examples:\n  hal watch\n  hal watch --json --grace 30s")]
    Watch(WatchArgs),

    /// Take this node over from hal-module@ units and stacks started by hand, stopping no container.
    #[command(
        after_help = "Examples:\n  hal adopt --dry-run\n  hal adopt --yes\n\nFor each hal-module@ instance (user and system scope) that runs, failed or is enabled, and each running stack hal has no desired state for: records the desired state (up if it runs or its unit is enabled, else down) and what the next start needs to be a no-op, then stops and disables the unit without running its ExecStop= (compose down). Running it again finishes an interrupted run; a unit whose ExecStart= is not the template's is refused and left alone."
    )]
    Adopt(AdoptArgs),

    /// Check the node and say what to fix.
    #[command(after_help = "Examples:\n  hal doctor\n  hal doctor --json")]
    Doctor,

    /// Print the shell completion script for SHELL (it calls hal back for module names).
    #[command(
        after_help = "Examples:\n  hal completions bash > ~/.local/share/bash-completion/completions/hal\n  hal completions zsh > ~/.zfunc/_hal\n  hal completions fish > ~/.config/fish/completions/hal.fish"
    )]
    Completions(CompletionsArgs),
}

impl Command {
    /// Whether the answer is asked for in Prometheus text (`status --format
    /// prometheus`): one of the flags the printer decides its format from.
    pub fn asks_prometheus(&self) -> bool {
        matches!(
            self,
            Command::Verb(ModuleCommand::Status(StatusArgs {
                format: Some(StatusFormat::Prometheus),
                ..
            })) | Command::Module(ModuleCommand::Status(StatusArgs {
                format: Some(StatusFormat::Prometheus),
                ..
            }))
        )
    }

    /// Commands whose normal end is Ctrl-C: they handle it and exit 0.
    pub fn ends_on_interrupt(&self) -> bool {
        matches!(
            self,
            Command::Watch(_)
                | Command::Verb(ModuleCommand::Logs(LogsArgs { follow: true, .. }))
                | Command::Module(ModuleCommand::Logs(LogsArgs { follow: true, .. }))
        )
    }
}

/// The verbs on modules: `hal module VERB`, and `hal VERB` the same (so each
/// is declared, documented and dispatched once).
#[derive(Debug, Subcommand)]
pub enum ModuleCommand {
    /// Show the state of modules (all of them when none is named).
    ///
    /// States: active, starting, degraded, inactive, failed, conflict (a project with the
    /// module's name runs from another directory: not this module, never touched), orphaned
    /// (containers of a stack hal ran whose directory is gone: `hal stop NAME` removes them),
    /// invalid, unknown (hal cannot tell: the engine or init cannot be reached, exit 6, or it
    /// answered what hal cannot read, exit 1). A services root that is missing, not a directory or unreadable fails
    /// status (exit 1, the error document under --json); an empty one is fine.
    #[command(
        after_help = "Examples:\n  hal status\n  hal status --failed\n  hal module status web mailu --json\n  hal status web/worker\n  hal -q status || echo 'something is not active'\n  hal status --json | jq '.modules[] | select(.state != \"active\")'"
    )]
    Status(StatusArgs),

    /// Start modules and wait until they are active.
    ///
    /// What a module requires (`requires`, or inferred from compose) starts first, said on stderr
    /// (`db: starting first (app requires it)`; --json: `pulled_in_by`); an active one is left
    /// alone. A requirement that fails fails its dependents untried (`app: not started: db did not start`).
    #[command(
        after_help = "Examples:\n  hal start web\n  hal module start --all --pull missing\n  hal start web --no-wait\n  hal start 'mail*' web/worker"
    )]
    Start(StartArgs),

    /// Stop modules: their containers and network go (named volumes stay), or the unit stops.
    ///
    /// The modules that require them and are up stop first, said on stderr (`app: stopping first
    /// (requires db)`; --json: `stopped_first_for`; --dry-run lists them). --all stops dependents first.
    #[command(
        after_help = "Examples:\n  hal stop web\n  hal module stop --all --yes\n  hal stop -t 60s web\n  hal stop web/worker"
    )]
    Stop(StopArgs),

    /// Stop, then start modules.
    #[command(
        after_help = "Examples:\n  hal restart web\n  hal restart web/worker\n  hal module restart --all --yes"
    )]
    Restart(StartArgs),

    /// Show the logs of modules (every module when none is named), merged in time order, or follow them.
    #[command(
        after_help = "Examples:\n  hal logs web\n  hal module logs -f -n 20 web notifier\n  hal logs --since 10m --json web\n  hal logs --since '5 minutes ago' web/worker\n  hal logs --since yesterday --until '2026-01-01 12:00'\n  hal logs -f db | grep -m1 ready\n\nA timer module's logs include the journal of the job it starts."
    )]
    Logs(LogsArgs),

    /// List the modules of this node and where each is defined (no engine call).
    ///
    /// With each module's edges (what it requires or comes after) and where each came from: the
    /// config's key and line, or the compose file and key (`edges` in --json). A cycle is exit 2.
    #[command(after_help = "Examples:\n  hal list\n  hal module list --json")]
    List,

    /// Recover modules: clear the start count, recreate containers or reset and restart the unit (every failed module when none is named).
    #[command(
        after_help = "Examples:\n  hal rescue --dry-run\n  hal module rescue web --dry-run\n  hal rescue --yes"
    )]
    Rescue(RescueArgs),

    /// Clear modules' start counts (and a unit's failed state), so they may start again.
    #[command(
        name = "reset-failed",
        after_help = "Examples:\n  hal reset-failed web\n  hal module reset-failed 'mail*'"
    )]
    ResetFailed(ResetArgs),

    /// Pull modules' images and recreate the services whose image changed; roll back what is not active in time.
    ///
    /// Each service's image is pulled through the Engine API (a failed pull keeps the present
    /// image, with a warning; an absent image that cannot be pulled fails the module) and compared
    /// with what its containers run. Only the services whose image changed are recreated (`compose
    /// up -d --no-deps --force-recreate --pull never SERVICE...`, compose's order); their siblings
    /// keep their containers. The image each ran before keeps a hal-owned tag,
    /// `hal-previous/MODULE:SERVICE`, so `docker image prune` and `docker system prune` (dangling
    /// images only) keep it; `prune -a` removes it, as any image no container runs (during the
    /// wait nothing runs it: no rollback then). The tag moves at the next update. If
    /// the module is not active within --timeout (healthchecks included), each service's reference
    /// is pointed back at its previous image and the service recreated: the verb says `rolled back:
    /// MODULE/SERVICE (new image ...)` and exits 1, the failed container's exit code and last lines
    /// are kept as for a failed start, and status names the rollback until the next update or
    /// reset-failed. A start or restart whose pull brings a new image goes through the same gate
    /// (not with --no-wait). The gate also holds what requires the module (declared or inferred):
    /// each one active before the update must be active again within --timeout, else the module is
    /// rolled back, the reason names that module, and it is restarted if it is not active.
    ///
    /// A digest that was rolled back is quarantined: update, a start or restart under pull always
    /// and hal watch's scheduled updates keep the running image, say so in one line (the digest,
    /// when it was rolled back and why) and exit 0; status shows it (`quarantined` in JSON, the
    /// hal_module_quarantined series) and --check does not count it as an update. A new digest
    /// lifts it; --force tries it once more. A module with `pin = true` is left by --all and the
    /// scheduled updates; naming it is refused (exit 2) without --force.
    ///
    /// Modules are updated one at a time (--jobs widens it), in `after` order; after
    /// --max-failures failed updates (rolled back, or could not pull) the rest are skipped; a
    /// module refused is not updated, not a failure. At the module's start limit an update
    /// is refused before anything is pulled (exit 5, --force), as a start is; it counts as one
    /// start only when it recreates something, and the rollback counts nothing more. Host units have nothing to
    /// pull. Exit: 0, 1 when an update failed or was rolled back, 3 under --check when an update is
    /// available.
    #[command(
        after_help = "Examples:\n  hal update web\n  hal update --check --all\n  hal module update --all --jobs 2 --max-failures 3\n  hal update --json web | jq '.modules[0].rolled_back'"
    )]
    Update(UpdateArgs),

    /// Say what the next start would do to each service, and why, changing nothing.
    ///
    /// Per service: keep, create (no container), recreate (its configuration or image changed, or
    /// a service it depends on is recreated), start (a stopped container, or a finished job run
    /// again) or remove (a container whose service is gone, or a replica too many); a host unit:
    /// start or keep. Decided as compose's `up` decides (the config hash compose writes on its
    /// containers, the image id the reference names locally now, replicas, orphans), from
    /// `compose config` and the engine's lists alone: nothing is pulled, built, created,
    /// started or stopped. The table shows the services that would change (-v: every one);
    /// --json lists every service with its reasons. A module that cannot be read fails as
    /// start fails. Exit: 0 when nothing would change, 3 when something would.
    #[command(
        after_help = "Examples:\n  hal plan web\n     MODULE  SERVICE  ACTION    WHY\n     web     app      recreate  config: compose.yaml: environment.GREETING: hello -> bye\n             worker   recreate  depends_on: app is recreated\n  hal module start --dry-run web\n  hal plan --all -v\n  hal plan --json web | jq '.modules[].services[] | select(.action != \"keep\")'\n  hal -q plan web || hal start web"
    )]
    Plan(PlanArgs),
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_is_well_formed() {
        Cli::command().debug_assert();
    }
}
