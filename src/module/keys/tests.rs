//! `dist/hal.toml`, the commented example config the packages ship, agrees with [`KEYS`]: the top and `[defaults]` keys at their defaults, every `[module.NAME]` key in a commented-out example, and no other key.

use std::collections::BTreeSet;
use std::path::Path;

use super::{KEYS, Table, of};
use crate::module::config::Config;

const DIST: &str = include_str!("../../../dist/hal.toml");

/// The example with its commented-out settings (`# key = …`, `# [module.X]`) turned on.
fn uncommented() -> String {
    DIST.lines()
        .map(|line| match line.strip_prefix("# ") {
            Some(rest) if is_setting(rest) => rest,
            _ => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn is_setting(line: &str) -> bool {
    if line.starts_with("[module.") {
        return true;
    }
    line.split_once(" = ").is_some_and(|(key, _)| {
        !key.is_empty() && key.chars().all(|c| c.is_ascii_lowercase() || c == '_')
    })
}

/// A key's documented default as a TOML value (a bare word is a string).
fn default_value(default: &str) -> toml::Value {
    match toml::from_str::<toml::Table>(&format!("v = {default}")) {
        Ok(mut t) => t.remove("v").unwrap(),
        Err(_) => toml::Value::String(default.to_string()),
    }
}

fn names(table: Table) -> BTreeSet<&'static str> {
    of(table).map(|k| k.name).collect()
}

fn keys_of(t: &toml::Table) -> BTreeSet<&str> {
    t.keys().map(String::as_str).collect()
}

#[test]
fn dist_config_sets_the_top_and_defaults_keys_to_their_defaults() {
    let doc: toml::Table = toml::from_str(DIST).unwrap();
    // A top key that is off unless set (default `none`) is a commented-out example.
    let mut top: BTreeSet<&str> = of(Table::Top)
        .filter(|k| k.default != "none")
        .map(|k| k.name)
        .collect();
    top.insert("defaults");
    assert_eq!(keys_of(&doc), top, "the top of dist/hal.toml");
    let defaults = doc["defaults"].as_table().unwrap();
    assert_eq!(keys_of(defaults), names(Table::Defaults), "[defaults]");
    for k in KEYS {
        let set = match k.table {
            Table::Top if k.default == "none" => continue,
            Table::Top => &doc,
            Table::Defaults => defaults,
            Table::Restart => defaults["restart"].as_table().unwrap(),
            Table::Module => continue,
        };
        assert_eq!(
            set[k.name],
            default_value(k.default),
            "dist/hal.toml: {} {} is not its default {}",
            k.table.header(),
            k.name,
            k.default
        );
    }
    assert_eq!(
        keys_of(defaults["restart"].as_table().unwrap()),
        names(Table::Restart),
        "[defaults] restart"
    );
}

#[test]
fn dist_config_examples_show_every_module_key_and_parse() {
    let text = uncommented();
    Config::parse(&text, Path::new("dist/hal.toml")).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let doc: toml::Table = toml::from_str(&text).unwrap();
    let shown: BTreeSet<&str> = doc["module"]
        .as_table()
        .unwrap()
        .values()
        .flat_map(|m| m.as_table().unwrap().keys().map(String::as_str))
        .collect();
    assert_eq!(shown, names(Table::Module), "the [module.NAME] examples");
    for k in of(Table::Top).filter(|k| k.default == "none") {
        assert!(
            doc.contains_key(k.name),
            "dist/hal.toml shows no example of {}",
            k.name
        );
    }
}
