//! The config file's parsing: the spec's example, errors that name the line and key, and auto_update.

use super::*;

fn parse(text: &str) -> Result<Config, String> {
    Config::parse(text, Path::new("/etc/hal/hal.toml")).map_err(|e| e.to_string())
}

#[test]
fn spec_example_parses() {
    let cfg = parse(
        r#"
services_dir = "/services"

[defaults]
pull = "always"
restart = { burst = 5, interval = "120s" }

[module.notifier]
unit = "desktop_notifications.service"
scope = "user"

[module.mailu]
pull = "missing"
restart = { burst = 3, interval = "300s" }
"#,
    )
    .unwrap();
    assert_eq!(cfg.services_dir.as_deref(), Some(Path::new("/services")));
    let m = cfg.settings("mailu");
    assert_eq!(m.pull, PullPolicy::Missing);
    assert_eq!(m.limit.burst, 3);
    assert_eq!(m.limit.interval, Duration::from_secs(300));
    let other = cfg.settings("web");
    assert_eq!(other.limit, RestartLimit::default());
    assert_eq!(cfg.modules["notifier"].scope, Some(Scope::User));
}

#[test]
fn errors_name_file_line_and_key() {
    let e = parse("[defaults]\npull = \"sometimes\"\n").unwrap_err();
    assert!(e.contains("/etc/hal/hal.toml"), "{e}");
    assert!(e.contains("line 2"), "{e}");
    assert!(e.contains("defaults.pull"), "{e}");

    let e = parse("[module.web]\nrestart = { burst = 3, interval = \"soon\" }\n").unwrap_err();
    assert!(
        e.contains("line 2") && e.contains("module.web.restart"),
        "{e}"
    );

    let e = parse("[module.web]\ncolour = 1\n").unwrap_err();
    assert!(e.contains("colour"), "{e}");

    let e = parse("[module.Web]\nunit = \"a.service\"\n").unwrap_err();
    assert!(e.contains("line 1") && e.contains("module.Web"), "{e}");

    let e = parse("[module.a]\nafter = [\"b\"]\n[module.b]\nafter = [\"a\"]\n").unwrap_err();
    assert!(
        e.contains("line 2") && e.contains("a cycle: a → b → a"),
        "{e}"
    );

    // A cycle through requires and after together, named at the key that starts it.
    let e = parse("[module.a]\nrequires = [\"b\"]\n[module.b]\nafter = [\"a\"]\n").unwrap_err();
    assert!(
        e.contains("line 2, key module.a.requires") && e.contains("a cycle: a → b → a"),
        "{e}"
    );
    let e = parse("[module.a]\nrequires = [\"../b\"]\n").unwrap_err();
    assert!(e.contains("line 2, key module.a.requires"), "{e}");

    let e = parse("[defaults]\nrestart = { burst = 0, interval = 5 }\n").unwrap_err();
    assert!(e.contains("line 2") && e.contains("burst"), "{e}");

    assert!(parse("not toml at all [").is_err());
}

#[test]
fn auto_update_is_a_schedule_and_a_module_may_opt_out() {
    let cfg = parse("auto_update = \"daily 04:00\"\n[module.db]\nauto_update = false\n").unwrap();
    assert_eq!(cfg.auto_update, Schedule::Daily { minute: 240 });
    assert!(!cfg.auto_update("db"));
    assert!(cfg.auto_update("web"));
    assert_eq!(parse("").unwrap().auto_update, Schedule::Off);
    let e = parse("services_dir = \"/s\"\nauto_update = \"daily 25:00\"\n").unwrap_err();
    assert!(
        e.contains("line 2") && e.contains("auto_update") && e.contains("25:00"),
        "{e}"
    );
    let e = parse("auto_update_max_failures = 0\n").unwrap_err();
    assert!(e.contains("line 1") && e.contains("at least 1"), "{e}");
}

#[test]
fn declared_edges_carry_their_key_and_line() {
    use crate::module::deps::{Origin, Strength};
    let c = Config::parse(
        "[module.app]\nafter = [\"cache\"]\nrequires = [\"db\", \"app\"]\n",
        Path::new("hal.toml"),
    )
    .unwrap();
    let edges = c.declared_edges();
    assert_eq!(edges.len(), 2, "a module never requires itself: {edges:?}");
    let db = edges.iter().find(|e| e.to == "db").unwrap();
    assert_eq!(db.strength, Strength::Requires);
    assert_eq!(
        db.origin,
        Origin::Config {
            key: "requires",
            line: Some(3)
        }
    );
    let cache = edges.iter().find(|e| e.to == "cache").unwrap();
    assert_eq!(cache.strength, Strength::After);
}
