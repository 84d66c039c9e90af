//! Every key of the config file, documented: the source of `hal.toml(5)`, checked
//! against the structs of `config.rs` so that no key can go undocumented.
//!
//! `tests/integration/config_manual.rs` renders `man/hal.toml.5` from [`KEYS`] (a
//! test fails when the committed page is stale), parses a config that sets every
//! key to its example, and asks serde for the fields of each table: a field
//! missing here, or a key here that the structs do not take, fails it. The unit
//! tests beside this file tie the shipped example, `dist/hal.toml`, to [`KEYS`].

/// Where a key lives.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Table {
    /// The top of the file.
    Top,
    /// `[defaults]`: what every module gets unless its own section says otherwise.
    Defaults,
    /// `[module.NAME]`: one module.
    Module,
    /// The inline table of a `restart = { … }`, in `[defaults]` or `[module.NAME]`.
    Restart,
}

impl Table {
    /// The table as it is written in the file.
    pub fn header(self) -> &'static str {
        match self {
            Table::Top => "(top level)",
            Table::Defaults => "[defaults]",
            Table::Module => "[module.NAME]",
            Table::Restart => "restart = { burst, interval }",
        }
    }

    pub const ALL: [Table; 4] = [Table::Top, Table::Defaults, Table::Module, Table::Restart];
}

/// One key: its table, name, the type of its value, its default, what it does,
/// and a value that sets it (written into the test's config that sets every key).
#[derive(Copy, Clone, Debug)]
pub struct Key {
    pub table: Table,
    pub name: &'static str,
    pub kind: &'static str,
    pub default: &'static str,
    pub meaning: &'static str,
    pub example: &'static str,
}

const fn key(
    table: Table,
    name: &'static str,
    kind: &'static str,
    default: &'static str,
    meaning: &'static str,
    example: &'static str,
) -> Key {
    Key {
        table,
        name,
        kind,
        default,
        meaning,
        example,
    }
}

const LIMIT: &str = "The start limit: at most burst starts in any interval; every start hal makes counts (start, restart, rescue and hal watch's restarts), and past it a start is refused with exit 5 until the window has room, --force starts once anyway, or reset-failed clears the count.";

/// Every key the config file takes.
pub const KEYS: &[Key] = &[
    key(
        Table::Top,
        "services_dir",
        "path",
        "/services",
        "The services root: every directory directly under it holding compose.yaml, compose.yml, docker-compose.yaml or docker-compose.yml is a stack module of that name. --services-dir and HAL_SERVICES_DIR override it.",
        "\"/services\"",
    ),
    key(
        Table::Top,
        "metrics_file",
        "path",
        "none",
        "Where hal watch writes Prometheus metrics in node_exporter's textfile-collector format (the file is replaced at each pass and each change; point node_exporter's --collector.textfile.directory at its directory). --metrics overrides it; unset, hal watch writes none.",
        "\"/var/lib/prometheus/node-exporter/hal.prom\"",
    ),
    key(
        Table::Top,
        "auto_update",
        "daily HH:MM | weekly DAY HH:MM | every DURATION | off",
        "off",
        "When hal watch updates the stacks on its own, as hal update would: the stacks wanted up (started by hal) whose section does not say auto_update = false, one at a time, each rolled back if its new images do not become active. Times are in the node's local time zone (TZ, else /etc/localtime); DAY is mon to sun; every DURATION runs at each multiple of it since the Unix epoch (every 6h: 00:00, 06:00… UTC). A slot missed while hal watch was not running is not caught up, and one that comes while a scheduled update is still running is skipped. off: never.",
        "\"daily 04:00\"",
    ),
    key(
        Table::Top,
        "auto_update_max_failures",
        "integer, at least 1",
        "1",
        "A scheduled update stops once this many modules failed to update (rolled back or not pulled; a module refused at its start limit, or held, is not updated, not a failure); the rest wait for the next slot.",
        "2",
    ),
    key(
        Table::Defaults,
        "pull",
        "always | missing | never",
        "always",
        "The image pull policy of a start: always pulls every image first (a failed pull falls back to a present image, with a warning), missing pulls only absent images, never pulls nothing. --pull overrides it for one call. A start whose pull brings a service a new image goes through hal update's health gate: not active within the timeout, it is rolled back to the previous image. hal update always pulls.",
        "\"missing\"",
    ),
    key(
        Table::Defaults,
        "restart",
        "inline table",
        "{ burst = 5, interval = \"120s\" }",
        LIMIT,
        "{ burst = 5, interval = \"120s\" }",
    ),
    key(
        Table::Defaults,
        "timeout",
        "duration",
        "120s",
        "How long a start may take until active, the pull and compose included, before it fails (--timeout overrides it for one call), and how long a host unit's stop may take. It is also how long an updated module (hal update, or a start that pulled a new image) has to become active before it is rolled back.",
        "\"90s\"",
    ),
    key(
        Table::Defaults,
        "pull_timeout",
        "duration",
        "300s",
        "How long one image pull may take before it counts as failed.",
        "\"5m\"",
    ),
    key(
        Table::Defaults,
        "checkpoint_max",
        "size (2GiB, 500MB, or bytes)",
        "8GiB",
        "The largest checkpoint an update takes: an update whose data would exceed it is refused before anything is pulled or stopped (exit 1); hal update --no-checkpoint goes ahead without one. A module's own checkpoint_max comes first.",
        "\"2GiB\"",
    ),
    key(
        Table::Module,
        "unit",
        "string",
        "none (a stack)",
        "A full init unit name (web.service): the module is a host module driven through systemctl. Without it, the section holds settings for the stack of that name under the services root.",
        "\"desktop_notifications.service\"",
    ),
    key(
        Table::Module,
        "scope",
        "user | system",
        "user",
        "Which manager runs the unit: the calling user's (systemctl --user) or the system's. Only with unit.",
        "\"user\"",
    ),
    key(
        Table::Module,
        "pull",
        "always | missing | never",
        "[defaults] pull",
        "The module's pull policy.",
        "\"never\"",
    ),
    key(
        Table::Module,
        "restart",
        "inline table",
        "[defaults] restart",
        "The module's start limit.",
        "{ burst = 3, interval = \"300s\" }",
    ),
    key(
        Table::Module,
        "timeout",
        "duration",
        "[defaults] timeout",
        "The module's start (and unit stop) limit, pull and compose included.",
        "\"3m\"",
    ),
    key(
        Table::Module,
        "critical",
        "boolean",
        "false",
        "Rescue recovers critical modules first, before the others.",
        "true",
    ),
    key(
        Table::Module,
        "after",
        "array of module names",
        "[]",
        "Modules this one starts after (and stops before) when both are started or stopped together, and is repaired after by hal watch (order only: neither pulls the other in); a cycle is a config error that names it. A name that is no module is accepted (as systemd's After= on a unit that does not exist): hal list marks it, hal doctor warns of it.",
        "[\"db\"]",
    ),
    key(
        Table::Module,
        "requires",
        "array of module names",
        "[] (plus what compose implies)",
        "Modules this one needs running (systemd's Requires= + After=): start starts them first, stop of one of them stops this module first. hal also infers these from compose: network_mode or volumes_from naming another module's container, an external network another module creates, external_links. A name that is no module is exit 2; a cycle is a config error that names it. hal watch reads the edges again when this file or a compose file changes, and at each resync.",
        "[\"db\"]",
    ),
    key(
        Table::Module,
        "on_failure",
        "array of strings",
        "[] (nothing runs)",
        "A program and its arguments (never a shell line) that hal watch runs once when it gives up on the module (its start limit is hit), with HAL_MODULE and HAL_REASON in its environment; killed after 60s, its output goes to the supervisor's log. It runs only if the config file and its directory belong to root or to the user running hal and nobody else may write them.",
        "[\"/usr/local/bin/notify-admin\", \"--urgent\"]",
    ),
    key(
        Table::Module,
        "auto_update",
        "boolean",
        "true",
        "false: hal watch's scheduled updates (the top-level auto_update) leave the module alone; hal update still updates it when asked.",
        "false",
    ),
    key(
        Table::Module,
        "checkpoint",
        "list of strings",
        "every local named volume and every bind mount inside the module's directory that the updated services mount",
        "What an update copies, with the services stopped, before it recreates them, and puts back byte for byte when it rolls back: compose volume keys and bind-mount sources relative to the module's directory. An entry that names no volume and no bind mount of the module is refused (exit 2). [] turns checkpoints off. The copy lives under the state directory's checkpoints/MODULE/ (docs/updates.md).",
        "[\"db-data\", \"./uploads\"]",
    ),
    key(
        Table::Module,
        "checkpoint_max",
        "size (2GiB, 500MB, or bytes)",
        "[defaults] checkpoint_max, else 8GiB",
        "The largest checkpoint an update of this module takes (see [defaults] checkpoint_max).",
        "\"20GiB\"",
    ),
    key(
        Table::Module,
        "pin",
        "boolean",
        "false",
        "true: the module keeps the images it runs. hal update --all and hal watch's scheduled updates leave it and say so; hal update naming it is refused (exit 2) unless --force is given.",
        "true",
    ),
    key(
        Table::Restart,
        "burst",
        "integer, at least 1",
        "5",
        "How many starts the window allows.",
        "4",
    ),
    key(
        Table::Restart,
        "interval",
        "duration, longer than 0s",
        "120s",
        "The window's length.",
        "\"10m\"",
    ),
];

/// The keys of one table, in the order documented.
pub fn of(table: Table) -> impl Iterator<Item = &'static Key> {
    KEYS.iter().filter(move |k| k.table == table)
}

#[cfg(test)]
mod tests;
