//! Manual pages: `man/` holds hal(1) and one page per subcommand, generated from the CLI definition, and is fresh.

use std::io::Write;

use clap::CommandFactory;
use clap_mangen::Man;
use clap_mangen::roff::{Roff, bold, italic, roman};

use crate::lib_paths::Cli;
use crate::rig::{self, fresh, have};

/// Variables hal reads that no flag stands for, as `(name, meaning)`.
const MORE_ENVIRONMENT: [(&str, &str); 21] = [
    (
        "HAL_STATE_DIR",
        "Where hal keeps its state (start counts, desired states); see FILES.",
    ),
    (
        "HAL_COMPOSE",
        "The compose command to use, e.g. \"docker compose\" or \"docker-compose\". Default: the Docker Compose plugin (v2), run directly from where the docker CLI finds it (its cli-plugins directories), else \"docker compose\", else a docker-compose binary.",
    ),
    (
        "DOCKER_HOST",
        "The Docker endpoint when -H is not given, e.g. unix:///var/run/docker.sock or tcp://host:2375. Also passed on to compose.",
    ),
    (
        "DOCKER_CONTEXT",
        "The docker context to use when neither -H nor DOCKER_HOST is given; else the CLI config's currentContext. Its endpoint (and TLS) is handed to every compose child. An unknown context is exit 2.",
    ),
    (
        "DOCKER_TLS_VERIFY",
        "Talk TLS to a tcp:// endpoint and verify the engine's certificate, with ca.pem, cert.pem and key.pem from DOCKER_CERT_PATH.",
    ),
    (
        "DOCKER_CERT_PATH",
        "The folder of the TLS files for DOCKER_TLS_VERIFY. Default: ~/.docker.",
    ),
    (
        "DOCKER_TLS",
        "TLS without verifying the engine's certificate: refused (exit 2); set DOCKER_TLS_VERIFY=1 instead.",
    ),
    (
        "COMPOSE_FILE",
        "Read by compose, as from the stack's .env: the compose files of every stack. hal reads the same files for its change check (see also COMPOSE_PROFILES and COMPOSE_PATH_SEPARATOR).",
    ),
    (
        "COMPOSE_PROJECT_NAME",
        "Read by compose, as from the stack's .env. hal always runs a stack as its directory name (-p); hal module list and hal doctor warn when this (or a name: in the compose file) asks for another.",
    ),
    (
        "DOCKER_CONFIG",
        "The directory of the Docker CLI's config.json, whose stored logins (docker login) hal uses to pull images, and whose cli-plugins/ (with config.json's cliPluginsExtraDirs) is searched first for the compose plugin. Default: ~/.docker.",
    ),
    (
        "NO_COLOR",
        "When set and not empty, --color auto does not colour. --color always still does.",
    ),
    (
        "CLICOLOR_FORCE",
        "When set, not empty and not 0, --color auto colours even off a terminal (unless NO_COLOR is set). Tables, progress, log prefixes, errors and help all follow the one decision.",
    ),
    (
        "TERM",
        "When dumb, --color auto does not colour (unless CLICOLOR_FORCE is set) and no progress is drawn.",
    ),
    (
        "HOME",
        "Where ~ is: the per-user config, state and Docker config directories when their own variables are not set.",
    ),
    (
        "XDG_RUNTIME_DIR",
        "Needed to reach the user's systemd manager for host modules in the user scope (set by a login session, or by loginctl enable-linger).",
    ),
    (
        "XDG_CONFIG_HOME, XDG_STATE_HOME",
        "Where a non-root user's config lives, and the state of a user's own engine or of a user who may not use the system engine; the system engine's state is the node's, whoever drives it. See FILES.",
    ),
    (
        "USER, LOGNAME",
        "The user's name in messages (e.g. the loginctl enable-linger hint).",
    ),
    (
        "DBUS_SESSION_BUS_ADDRESS, SUDO_USER",
        "Read only to explain why the user manager cannot be reached (e.g. under sudo or cron).",
    ),
    (
        "TZ, TZDIR",
        "The local time zone for logs --since/--until dates and words like today (as the C library reads them: TZ names a zone or a rule, else /etc/localtime; TZDIR is where zones live).",
    ),
    (
        "CONTAINERS_CONF, CONTAINERS_CONF_OVERRIDE",
        "Read by hal doctor on a Podman engine, as Podman reads them (containers.conf(5)), to find its default_subnet_pools: CONTAINERS_CONF is the one file read instead of every other; CONTAINERS_CONF_OVERRIDE is read last, over them.",
    ),
    (
        "HAL_COMPLETE",
        "Set by the shell completion scripts when they call hal back. HAL_COMPLETE=bash hal (or zsh, fish) prints the script for that shell.",
    ),
];

/// The files hal reads and writes, as `(path, meaning)`.
const FILES: [(&str, &str); 5] = [
    (
        "/etc/hal/hal.toml",
        "The config file when hal runs as root (--config and HAL_CONFIG override it). A missing file is an empty config; one named by --config or HAL_CONFIG that is missing is exit 2.",
    ),
    (
        "~/.config/hal/hal.toml",
        "The config file of a non-root user ($XDG_CONFIG_HOME/hal/hal.toml when XDG_CONFIG_HOME is set).",
    ),
    (
        "/services/NAME/compose.yaml",
        "A stack module NAME: every directory under the services root with compose.yaml, compose.yml, docker-compose.yaml or docker-compose.yml.",
    ),
    (
        "/var/lib/hal/",
        "The node's state: start counts and desired states of the system engine and system units, one for every hal that drives them (root, hal-watch.service, the docker group), through a lock. Setgid and owned by the engine socket's group (docker), files group-writable; the package and make install set it up and hal keeps it so. A user who cannot write it is refused with the group to join; status still reads it. HAL_STATE_DIR overrides it.",
    ),
    (
        "$XDG_STATE_HOME/hal/",
        "The state of an engine that belongs to one user (rootless Docker or Podman: a socket under the user's runtime directory, or owned by the user), and of a user who may not use the system engine (their hal drives only their own user units); ~/.local/state/hal/ when XDG_STATE_HOME is not set. The system engine's state is /var/lib/hal/ whoever drives it: root, its units, a user in the engine socket's group. hal doctor fails when this holds records while the node's state drives the same engine.",
    ),
];

/// Variables the contract says hal(1) documents.
const DOCUMENTED_VARIABLES: [&str; 10] = [
    "HAL_CONFIG",
    "HAL_SERVICES_DIR",
    "HAL_STATE_DIR",
    "HAL_YES",
    "HAL_COMPOSE",
    "DOCKER_HOST",
    "DOCKER_CONFIG",
    "NO_COLOR",
    "CLICOLOR_FORCE",
    "XDG_RUNTIME_DIR",
];

/// Every page: `hal.1`, then `hal-module.1`, `hal-module-start.1`, … in CLI order.
fn pages() -> Vec<(String, Vec<u8>)> {
    let mut root = Cli::command().disable_help_subcommand(true);
    root.build();
    let mut out = Vec::new();
    let mut see_also = Vec::new();
    collect(&root, &mut see_also);
    render_pages(&root, &root, &see_also, &mut out);
    out
}

fn collect(cmd: &clap::Command, names: &mut Vec<String>) {
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        names.push(display_name(sub));
        collect(sub, names);
    }
}

fn display_name(cmd: &clap::Command) -> String {
    cmd.get_display_name()
        .unwrap_or_else(|| cmd.get_name())
        .to_string()
}

/// One page being written: clap_mangen's sections and ours, one roff preamble.
struct Page {
    man: Man,
    buf: Vec<u8>,
}

type Section = fn(&Man, &mut dyn Write) -> std::io::Result<()>;

impl Page {
    /// Starts the page with the preamble and `.TH NAME 1 "" "hal VERSION" "hal manual"`
    /// (clap_mangen would leave the empty date unquoted, shifting the fields).
    fn new(man: Man, name: &str) -> Page {
        let source = format!("hal {}", env!("CARGO_PKG_VERSION"));
        let title = name.to_uppercase();
        let mut roff = Roff::new();
        roff.control("TH", [title.as_str(), "1", "\"\"", &source, "hal manual"]);
        Page {
            man,
            buf: rendered(&roff),
        }
    }

    fn section(&mut self, render: Section) {
        let mut part = Vec::new();
        render(&self.man, &mut part).unwrap();
        self.buf.extend_from_slice(without_preamble(&part));
    }

    fn roff(&mut self, roff: &Roff) {
        self.buf
            .extend_from_slice(without_preamble(&rendered(roff)));
    }
}

/// Renders `cmd`'s page, then its subcommands' pages.
fn render_pages(
    root: &clap::Command,
    cmd: &clap::Command,
    see_also: &[String],
    out: &mut Vec<(String, Vec<u8>)>,
) {
    let is_root = std::ptr::eq(root, cmd);
    let mut shown = cmd.clone();
    if !is_root {
        // A subcommand's page shows its own options; the global ones are in hal(1).
        shown = shown.mut_args(|a| if a.is_global_set() { a.hide(true) } else { a });
    }
    let mut page = Page::new(Man::new(shown.clone()), &display_name(cmd));
    page.section(Man::render_name_section);
    page.section(Man::render_synopsis_section);
    page.section(Man::render_description_section);
    if shown.get_arguments().any(|a| !a.is_hide_set()) {
        page.section(Man::render_options_section);
    }
    if !is_root {
        let mut roff = Roff::new();
        global_options_note(root, &mut roff);
        page.roff(&roff);
    }
    if shown.get_subcommands().any(|s| !s.is_hide_set()) {
        page.section(Man::render_subcommands_section);
    }
    let mut roff = Roff::new();
    examples(cmd, &mut roff);
    if is_root {
        exit_status(cmd, &mut roff);
        environment(cmd, &mut roff);
        files(&mut roff);
        let mut names: Vec<String> = see_also.iter().map(|n| format!("{n}(1)")).collect();
        names.extend(
            [
                "hal.toml(5)",
                "docker(1)",
                "docker-compose(1)",
                "systemctl(1)",
            ]
            .map(String::from),
        );
        see_also_section(&names, &mut roff);
    } else {
        let parent = display_name(cmd)
            .rsplit_once('-')
            .map_or_else(|| "hal".to_string(), |(p, _)| p.to_string());
        let mut names = vec!["hal(1)".to_string()];
        if parent != "hal" {
            names.push(format!("{parent}(1)"));
        }
        see_also_section(&names, &mut roff);
    }
    page.roff(&roff);
    page.section(Man::render_version_section);
    out.push((page.man.get_filename(), page.buf));

    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        render_pages(root, sub, see_also, out);
    }
}

fn rendered(roff: &Roff) -> Vec<u8> {
    let mut v = Vec::new();
    roff.to_writer(&mut v).unwrap();
    v
}

/// A section rendered on its own, without the preamble the title already wrote.
fn without_preamble(part: &[u8]) -> &[u8] {
    let preamble = rendered(&Roff::new());
    part.strip_prefix(preamble.as_slice()).unwrap_or(part)
}

fn global_options_note(root: &clap::Command, roff: &mut Roff) {
    let globals: Vec<String> = root
        .get_arguments()
        .filter(|a| a.is_global_set() && !a.is_hide_set())
        .filter_map(|a| a.get_long().map(|l| format!("--{l}")))
        .collect();
    roff.control("SH", ["GLOBAL OPTIONS"]);
    roff.text([
        roman("The options of "),
        bold("hal"),
        roman("(1) apply too: "),
        roman(globals.join(", ")),
        roman("."),
    ]);
}

/// EXAMPLES from the `Examples:` part of the help: each line without the
/// help's indent of two, so that an example's output (indented further) keeps
/// its columns.
fn examples(cmd: &clap::Command, roff: &mut Roff) {
    let Some(text) = cmd.get_after_help().map(|t| t.to_string()) else {
        return;
    };
    let lines: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("Examples:"))
        .skip(1)
        .map(|l| l.strip_prefix("  ").unwrap_or(l).trim_end())
        .filter(|l| !l.trim().is_empty())
        .collect();
    if lines.is_empty() {
        return;
    }
    roff.control("SH", ["EXAMPLES"]);
    roff.control("PP", [])
        .control("RS", ["4"])
        .control("nf", []);
    for line in lines {
        roff.text([roman(line)]);
    }
    roff.control("fi", []).control("RE", []);
}

/// The exit codes of the long help (`  0  success …`) as a tagged list: a code's
/// meaning is its line and every indented line after it, up to the next code.
fn exit_codes(cmd: &clap::Command) -> Vec<(String, String)> {
    let text = cmd
        .get_after_long_help()
        .map(|t| t.to_string())
        .unwrap_or_default();
    let mut codes: Vec<(String, String)> = Vec::new();
    for line in text
        .lines()
        .skip_while(|l| !l.starts_with("Exit codes:"))
        .skip(1)
    {
        let line = line.trim();
        let coded = line
            .split_once(char::is_whitespace)
            .filter(|(code, _)| code.parse::<u8>().is_ok());
        match (coded, codes.last_mut()) {
            (Some((code, meaning)), _) => {
                codes.push((code.to_string(), meaning.trim().to_string()))
            }
            (None, Some((_, meaning))) if !line.is_empty() => {
                meaning.push(' ');
                meaning.push_str(line);
            }
            _ => {}
        }
    }
    codes
}

fn exit_status(cmd: &clap::Command, roff: &mut Roff) {
    roff.control("SH", ["EXIT STATUS"]);
    for (code, meaning) in exit_codes(cmd) {
        roff.control("TP", [])
            .text([bold(code)])
            .text([roman(meaning)]);
    }
}

fn environment(root: &clap::Command, roff: &mut Roff) {
    roff.control("SH", ["ENVIRONMENT"]);
    for arg in root.get_arguments().filter(|a| a.get_env().is_some()) {
        let (Some(var), Some(long)) = (arg.get_env(), arg.get_long()) else {
            continue;
        };
        let help = arg.get_help().map(|h| h.to_string()).unwrap_or_default();
        roff.control("TP", [])
            .text([bold(var.to_string_lossy())])
            .text([
                roman("Stands for "),
                bold(format!("--{long}")),
                roman(format!(": {help}")),
            ]);
    }
    for (var, meaning) in MORE_ENVIRONMENT {
        roff.control("TP", [])
            .text([bold(var)])
            .text([roman(meaning)]);
    }
}

fn files(roff: &mut Roff) {
    roff.control("SH", ["FILES"]);
    for (path, meaning) in FILES {
        roff.control("TP", [])
            .text([italic(path)])
            .text([roman(meaning)]);
    }
}

fn see_also_section(names: &[String], roff: &mut Roff) {
    roff.control("SH", ["SEE ALSO"]);
    let mut line = Vec::new();
    for (i, name) in names.iter().enumerate() {
        if i > 0 {
            line.push(roman(", "));
        }
        let (page, section) = name.split_once('(').unwrap_or((name, ""));
        line.push(bold(page));
        line.push(roman(format!("({section}")));
    }
    roff.text(line);
}

#[test]
fn committed_pages_are_fresh() {
    let pages = pages();
    fresh::check(&fresh::repo_dir("man"), &pages, |name| name.ends_with(".1"));
}

#[test]
fn every_subcommand_has_a_page() {
    let names: Vec<String> = pages().into_iter().map(|(n, _)| n).collect();
    for want in [
        "hal.1",
        "hal-module.1",
        "hal-module-list.1",
        "hal-module-start.1",
        "hal-module-stop.1",
        "hal-module-restart.1",
        "hal-module-status.1",
        "hal-module-logs.1",
        "hal-module-rescue.1",
        "hal-module-reset-failed.1",
        "hal-module-update.1",
        "hal-update.1",
        "hal-status.1",
        "hal-rescue.1",
        "hal-watch.1",
        "hal-doctor.1",
    ] {
        assert!(names.iter().any(|n| n == want), "{want} missing: {names:?}");
    }
}

#[test]
fn hal_1_documents_exit_codes_environment_and_files() {
    let root = Cli::command();
    let codes: Vec<String> = exit_codes(&root).into_iter().map(|(c, _)| c).collect();
    for code in ["0", "1", "2", "3", "4", "5", "6"] {
        assert!(
            codes.iter().any(|c| c == code),
            "exit code {code}: {codes:?}"
        );
    }
    let (_, hal1) = pages().into_iter().next().unwrap();
    let text = String::from_utf8(hal1).unwrap();
    assert!(text.contains(".TH HAL 1 \"\" \"hal "), "no .TH");
    for section in [
        "NAME",
        "SYNOPSIS",
        "OPTIONS",
        "EXIT STATUS",
        "ENVIRONMENT",
        "FILES",
    ] {
        let quoted = format!(".SH \"{section}\"\n");
        let plain = format!(".SH {section}\n");
        assert!(
            text.contains(&plain) || text.contains(&quoted),
            "no {section}"
        );
    }
    for var in DOCUMENTED_VARIABLES {
        assert!(
            text.contains(&format!("\\fB{var}\\fR")),
            "{var} undocumented"
        );
    }
    for path in ["/etc/hal/hal.toml", "/var/lib/hal/", "$XDG_STATE_HOME/hal/"] {
        assert!(text.contains(path), "{path} undocumented");
    }
}

/// Every committed page is roff that man(1) renders without a warning.
/// Without man-db here, the structural checks above are what runs.
#[test]
fn pages_render_with_man() {
    let Some(()) = rig::need_that(
        have("man", "--version"),
        "man is not installed; the pages were only checked structurally",
        "apt-get install man-db; scripts/provision.sh installs it",
    ) else {
        return;
    };
    for (name, text) in pages() {
        let (ok, stderr, rendered) = fresh::render_man(&name, &text);
        assert!(ok, "man -l {name}: {stderr}");
        assert!(stderr.trim().is_empty(), "man -l {name} warns: {stderr}");
        assert!(rendered.contains("NAME"), "man -l {name} rendered nothing");
    }
}
