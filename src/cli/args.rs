//! The arguments each verb takes: which modules, how a start waits, and the
//! flags of `start`, `stop`, `status`, `logs`, `rescue`, `adopt`,
//! `reset-failed`, `completions` and `watch`.

use clap::{Args, ValueEnum};
use clap_complete::engine::ArgValueCompleter;

use crate::cli::values::{parse_duration, pull_policy};
use crate::module::config::PullPolicy;

/// Which modules a verb acts on.
#[derive(Debug, Args)]
pub struct Targets {
    /// Module names (see `hal module list`), quoted shell patterns ('mail*'), or MODULE/SERVICE for one service of a stack.
    #[arg(value_name = "MODULE", required_unless_present = "all", add = ArgValueCompleter::new(crate::cli::complete::modules))]
    pub modules: Vec<String>,

    /// Every module on the node.
    #[arg(long, conflicts_with = "modules")]
    pub all: bool,

    /// How many modules to work on at once [default: 4 per CPU, 8 to 16].
    #[arg(long, short = 'j', value_name = "N", value_parser = clap::value_parser!(u16).range(1..=64))]
    pub jobs: Option<u16>,
}

/// How a start waits.
#[derive(Debug, Args, Clone)]
pub struct WaitArgs {
    /// Return once the containers are started, without waiting for active.
    #[arg(long)]
    pub no_wait: bool,

    /// How long the start may take, the pull and compose included, until active, e.g. 90s or 5m [default: 120s, or the config's timeout].
    #[arg(long, value_name = "DUR", value_parser = parse_duration)]
    pub timeout: Option<std::time::Duration>,
}

/// What `start` and `restart` take.
#[derive(Debug, Args)]
pub struct StartArgs {
    #[command(flatten)]
    pub targets: Targets,

    /// Image pull policy for the start [default: the module's pull setting, else always].
    #[arg(long, value_name = "POLICY", value_parser = pull_policy())]
    pub pull: Option<PullPolicy>,

    /// Start even if the module's start limit is hit (the start still counts).
    #[arg(long)]
    pub force: bool,

    /// Say what would be done (start, recreate, restart or none) and, per service, the plan `hal plan` says (a restart recreates every container), and do nothing.
    #[arg(long)]
    pub dry_run: bool,

    #[command(flatten)]
    pub wait: WaitArgs,
}

#[derive(Debug, Args)]
pub struct StopArgs {
    #[command(flatten)]
    pub targets: Targets,

    /// Grace period before SIGKILL, e.g. 10s or 2m [default: each service's stop_grace_period, else 10s].
    ///
    /// For a stack, hal hands it to compose: `down -t N`, or `stop -t N` for one service
    /// (whole seconds, rounded up). A host unit keeps its own TimeoutStopSec=: systemd sends
    /// the unit's KillSignal= (SIGTERM), then SIGKILL once TimeoutStopSec= has passed (default
    /// 90s), and hal does not change that; for a unit, -t only bounds how long hal waits for the
    /// stop [default: the module's timeout, 120s], and a stop still under way then is reported
    /// (exit 1) while systemd finishes it.
    #[arg(short = 't', long, value_name = "DUR", value_parser = parse_duration)]
    pub timeout: Option<std::time::Duration>,

    /// Say what would be done (stop or none) and do nothing.
    #[arg(long)]
    pub dry_run: bool,
}

#[derive(Debug, Args)]
pub struct StatusArgs {
    /// Module names, quoted shell patterns ('mail*'), or MODULE/SERVICE [default: every module].
    #[arg(value_name = "MODULE", add = ArgValueCompleter::new(crate::cli::complete::modules))]
    pub modules: Vec<String>,

    /// Show only what needs a person: failed, degraded, conflict, orphaned or unknown
    /// modules, and modules wanted up that are not active. Exits 0 when there is none.
    #[arg(long)]
    pub failed: bool,

    /// Print in another format: prometheus (node_exporter's textfile format, as `hal watch --metrics` writes it).
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub format: Option<StatusFormat>,
}

/// `status --format`'s values.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum StatusFormat {
    /// node_exporter's textfile-collector format.
    Prometheus,
}

#[derive(Debug, Args)]
pub struct LogsArgs {
    /// Module names, quoted shell patterns ('mail*'), or MODULE/SERVICE for one service of a stack [default: every module].
    #[arg(value_name = "MODULE", add = ArgValueCompleter::new(crate::cli::complete::modules))]
    pub modules: Vec<String>,

    /// Keep following new lines, across container re-creation, until Ctrl-C or the reader closes the pipe.
    #[arg(short, long, conflicts_with = "until")]
    pub follow: bool,

    /// Show the last N lines of each source, or `all` [default: all].
    #[arg(short = 'n', long = "tail", value_name = "N|all", value_parser = parse_tail)]
    pub tail: Option<Tail>,

    /// Only lines since WHEN: a duration back from now (10m, 1h30m, -1h, '5 minutes ago'), now, today, yesterday,
    /// YYYY-MM-DD[ HH:MM[:SS]] in local time, an RFC 3339 time, or @UNIX; a bare number is a Unix
    /// time, as docker reads it.
    #[arg(long, value_name = "WHEN", allow_hyphen_values = true)]
    pub since: Option<String>,

    /// Only lines before WHEN (the same forms as --since).
    #[arg(long, value_name = "WHEN", allow_hyphen_values = true)]
    pub until: Option<String>,

    /// Show each line's time.
    #[arg(short, long)]
    pub timestamps: bool,

    /// Do not prefix lines with `module/service |`.
    #[arg(long)]
    pub no_prefix: bool,
}

/// How many lines `logs -n` shows of each source: `Tail(None)` is all.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Tail(pub Option<u64>);

/// A `-n` value that is neither a count nor `all` (as typed).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not a number of lines or `all`")]
struct NotATail(String);

fn parse_tail(s: &str) -> Result<Tail, NotATail> {
    if s == "all" {
        return Ok(Tail(None));
    }
    s.parse::<u64>()
        .map(|n| Tail(Some(n)))
        .map_err(|_| NotATail(s.to_string()))
}

#[derive(Debug, Args)]
pub struct RescueArgs {
    /// Modules to rescue, or quoted shell patterns ('mail*') [default: every failed module].
    #[arg(value_name = "MODULE", add = ArgValueCompleter::new(crate::cli::complete::modules))]
    pub modules: Vec<String>,

    /// Print the plan and change nothing.
    #[arg(long)]
    pub dry_run: bool,

    /// Only modules whose desired state is up (what the shipped timer runs).
    #[arg(long)]
    pub auto: bool,

    /// How long to wait for Docker when it is down [default: 60s], then for each module to become active [default: the module's timeout from the config, else 120s].
    #[arg(long, value_name = "DUR", value_parser = parse_duration)]
    pub timeout: Option<std::time::Duration>,
}

#[derive(Debug, Args)]
pub struct AdoptArgs {
    /// Print the plan and change nothing.
    #[arg(long)]
    pub dry_run: bool,
}

#[derive(Debug, Args)]
pub struct ResetArgs {
    /// Module names, or quoted shell patterns ('mail*').
    #[arg(value_name = "MODULE", required = true, add = ArgValueCompleter::new(crate::cli::complete::modules))]
    pub modules: Vec<String>,
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to print the script for.
    #[arg(value_name = "SHELL", value_parser = ["bash", "elvish", "fish", "powershell", "zsh"])]
    pub shell: String,
}

#[derive(Debug, Args)]
pub struct WatchArgs {
    /// How long a container may stay unhealthy before hal restarts it (that container alone).
    #[arg(long, value_name = "DUR", value_parser = parse_duration, default_value = "60s")]
    pub grace: std::time::Duration,

    /// How often to read what sends no events: host units, holds lifted by `reset-failed`, new stack directories.
    #[arg(long, value_name = "DUR", value_parser = parse_duration, default_value = "30s")]
    pub interval: std::time::Duration,

    /// How often to read every stack even while Docker's events say nothing changed (a safety net).
    #[arg(long, value_name = "DUR", value_parser = parse_duration, default_value = "5m")]
    pub resync: std::time::Duration,

    /// Write Prometheus metrics to PATH (node_exporter's textfile format), replaced at each pass and change [default: the config's metrics_file, else none].
    #[arg(long, value_name = "PATH")]
    pub metrics: Option<std::path::PathBuf>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tail_is_a_count_or_all_and_anything_else_is_told_as_it_was() {
        assert_eq!(parse_tail("all"), Ok(Tail(None)));
        assert_eq!(parse_tail("20"), Ok(Tail(Some(20))));
        assert_eq!(
            parse_tail("-3").unwrap_err().to_string(),
            "\"-3\" is not a number of lines or `all`"
        );
    }
}

/// What `plan` takes.
#[derive(Debug, Args)]
pub struct PlanArgs {
    /// Module names (see `hal module list`), quoted shell patterns ('mail*'), or MODULE/SERVICE for one service of a stack.
    #[arg(value_name = "MODULE", required_unless_present = "all", add = ArgValueCompleter::new(crate::cli::complete::modules))]
    pub modules: Vec<String>,

    /// Every module on the node.
    #[arg(long, conflicts_with = "modules")]
    pub all: bool,

    /// Show the services that would be kept too (--json always lists every service).
    #[arg(short, long)]
    pub verbose: bool,
}
