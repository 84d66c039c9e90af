//! `hal.toml(5)`: generated from the config's own key table, every key in it
//! taken by the parser and every key the parser takes in it, fresh in man/,
//! and rendered by man without a warning.

use std::collections::BTreeSet;
use std::path::Path;

use clap_mangen::roff::{Roff, bold, italic, roman};

use crate::lib_paths::{
    Config, DEFAULT_PULL_TIMEOUT, DEFAULT_TIMEOUT, KEYS, PullPolicy, Table, duration, keys,
};
use crate::rig::{self, fresh};

// ---------------------------------------------------------------- hal.toml(5)

/// The field names serde expects in `table`, from its own refusal of an unknown one.
fn fields_of(table: Table) -> BTreeSet<String> {
    let probe = match table {
        Table::Top => "zz_probe = 1\n",
        Table::Defaults => "[defaults]\nzz_probe = 1\n",
        Table::Module => "[module.x]\nzz_probe = 1\n",
        Table::Restart => "[defaults]\nrestart = { zz_probe = 1 }\n",
    };
    let err = Config::parse(probe, Path::new("probe.toml"))
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(err.contains("unknown field `zz_probe`"), "{table:?}: {err}");
    let (_, expected) = err
        .split_once("expected")
        .unwrap_or_else(|| panic!("{err}"));
    expected
        .split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

#[test]
fn every_config_key_is_documented_and_every_documented_key_is_taken() {
    for table in Table::ALL {
        let mut documented: BTreeSet<String> =
            keys::of(table).map(|k| k.name.to_string()).collect();
        if table == Table::Top {
            // The two tables, each with its own part of the manual.
            documented.extend(["defaults".to_string(), "module".to_string()]);
        }
        assert_eq!(
            fields_of(table),
            documented,
            "{}: the structs in src/module/config.rs and the table in src/module/keys.rs differ",
            table.header()
        );
    }

    // A config that sets every documented key to its example parses.
    let restart = format!(
        "{{ {} }}",
        keys::of(Table::Restart)
            .map(|k| format!("{} = {}", k.name, k.example))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let mut text = String::new();
    for (table, header) in [
        (Table::Top, ""),
        (Table::Defaults, "[defaults]\n"),
        (Table::Module, "[module.x]\n"),
    ] {
        text.push_str(header);
        for k in keys::of(table) {
            let value = if k.name == "restart" && table == Table::Defaults {
                restart.as_str()
            } else {
                k.example
            };
            text.push_str(&format!("{} = {value}\n", k.name));
        }
    }
    let cfg =
        Config::parse(&text, Path::new("every-key.toml")).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert!(cfg.modules["x"].critical, "{text}");
    assert_eq!(cfg.defaults.restart.unwrap().burst, 4, "{text}");

    // The documented defaults are hal's.
    let default_of = |table: Table, name: &str| {
        keys::of(table)
            .find(|k| k.name == name)
            .map(|k| k.default)
            .unwrap()
    };
    let none = Config::default().settings("x");
    let duration = |s: &str| duration::parse(s).unwrap();
    assert_eq!(none.pull, PullPolicy::Always);
    assert_eq!(default_of(Table::Defaults, "pull"), none.pull.as_str());
    assert_eq!(
        duration(default_of(Table::Defaults, "timeout")),
        DEFAULT_TIMEOUT
    );
    assert_eq!(none.timeout, DEFAULT_TIMEOUT);
    assert_eq!(
        duration(default_of(Table::Defaults, "pull_timeout")),
        DEFAULT_PULL_TIMEOUT
    );
    assert_eq!(
        default_of(Table::Restart, "burst"),
        none.limit.burst.to_string()
    );
    assert_eq!(
        duration(default_of(Table::Restart, "interval")),
        none.limit.interval
    );
}

const EXAMPLE: &str = r#"services_dir = "/services"

[defaults]
pull = "always"
restart = { burst = 5, interval = "120s" }
timeout = "120s"

[module.notifier]
unit = "desktop_notifications.service"
scope = "user"

[module.mailu]
pull = "missing"
restart = { burst = 3, interval = "300s" }
critical = true
after = ["meshware"]
on_failure = ["/usr/local/bin/notify-admin", "--urgent"]"#;

fn rendered(roff: &Roff) -> Vec<u8> {
    let mut v = Vec::new();
    roff.to_writer(&mut v).unwrap();
    v
}

/// `man/hal.toml.5`, from the key table.
fn config_page() -> Vec<u8> {
    let source = format!("hal {}", env!("CARGO_PKG_VERSION"));
    let mut r = Roff::new();
    r.control("TH", ["HAL.TOML", "5", "\"\"", &source, "hal manual"]);
    r.control("SH", ["NAME"]);
    r.text([roman("hal.toml - the configuration file of hal")]);
    r.control("SH", ["SYNOPSIS"]);
    r.text([
        italic("/etc/hal/hal.toml"),
        roman(" (root), "),
        italic("~/.config/hal/hal.toml"),
        roman(" (other users), or the file named by "),
        bold("--config"),
        roman(" or "),
        bold("HAL_CONFIG"),
        roman("."),
    ]);
    r.control("SH", ["DESCRIPTION"]);
    r.text([roman(
        "The config file is TOML. It says where the stacks are, declares host modules \
(init units), and holds settings for every module or for one. A missing file is an empty \
config, unless it was named with --config or HAL_CONFIG. A malformed file, an unknown \
key or a bad value is an error that names the file, the line and the key, and hal exits 2.",
    )]);
    r.control("PP", []);
    r.text([roman(
        "A module's setting comes from its own [module.NAME] section, else from [defaults], \
else from hal's default. A [module.NAME] section with unit is a host module; without it, the \
section holds settings for the stack NAME found under the services root.",
    )]);
    r.control("PP", []);
    r.text([roman(
        "Durations are written 250ms, 90s, 5m, 1h30m or 2d, or as a bare number of seconds.",
    )]);
    r.control("SH", ["KEYS"]);
    for table in Table::ALL {
        r.control("SS", [table.header()]);
        for k in keys::of(table) {
            r.control("TP", []);
            r.text([
                bold(k.name),
                roman(" ("),
                italic(k.kind),
                roman(format!("; default: {})", k.default)),
            ]);
            r.text([roman(k.meaning)]);
        }
    }
    r.control("SH", ["EXAMPLE"]);
    r.control("PP", []).control("RS", ["4"]).control("nf", []);
    for line in EXAMPLE.lines() {
        r.text([roman(line)]);
    }
    r.control("fi", []).control("RE", []);
    r.control("SH", ["FILES"]);
    r.control("TP", []);
    r.text([italic("/etc/hal/hal.toml")]);
    r.text([roman("The config file when hal runs as root.")]);
    r.control("TP", []);
    r.text([italic("~/.config/hal/hal.toml")]);
    r.text([roman(
        "The config file of other users ($XDG_CONFIG_HOME/hal/hal.toml when XDG_CONFIG_HOME is set).",
    )]);
    r.control("SH", ["SEE ALSO"]);
    r.text([
        bold("hal"),
        roman("(1), "),
        bold("hal-watch"),
        roman("(1), "),
        bold("hal-rescue"),
        roman("(1), "),
        bold("systemd.unit"),
        roman("(5)"),
    ]);
    r.control("SH", ["VERSION"]);
    r.text([roman(format!("v{}", env!("CARGO_PKG_VERSION")))]);
    rendered(&r)
}

#[test]
fn the_config_manual_is_fresh() {
    fresh::check(
        &fresh::repo_dir("man"),
        &[("hal.toml.5".to_string(), config_page())],
        |name| name.ends_with(".5"),
    );
    let text = String::from_utf8(config_page()).unwrap();
    for k in KEYS {
        assert!(
            text.contains(&format!("\\fB{}\\fR", k.name)),
            "{} missing",
            k.name
        );
    }
}

#[test]
fn the_config_manual_renders_with_man() {
    let Some(()) = rig::need("man", "--version") else {
        return;
    };
    let (ok, stderr, page) = fresh::render_man("hal.toml.5", &config_page());
    assert!(ok && stderr.trim().is_empty(), "{stderr}");
    for want in ["on_failure", "pull_timeout", "[module.NAME]", "interval"] {
        assert!(page.contains(want), "{want} not in\n{page}");
    }
}

/// hal.toml(5), hal(1) and docs/configuration.md: a missing default file is an empty
/// config, but a file named by `--config` or `HAL_CONFIG` must be there (exit 2).
#[test]
fn a_named_config_file_that_is_missing_is_exit_2() {
    let rig = rig::Rig::new();
    let missing = rig.dir.join("not-there.toml");
    let by_flag = rig::hal(&rig)
        .arg("--config")
        .arg(&missing)
        .arg("list")
        .code(2);
    let by_env = rig::hal(&rig)
        .env("HAL_CONFIG", &missing)
        .arg("list")
        .code(2);
    for run in [by_flag, by_env] {
        assert!(
            run.stderr
                .contains(&format!("hal: config {}: no such file", missing.display())),
            "{run}"
        );
    }
}
