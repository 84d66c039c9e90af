//! The rule that `module/` is plain data and pure rules: nothing in it reads a
//! file, the environment, the process's user or a clock, except its loader,
//! `module/load.rs`, the one reader of the node's own files (the config, the
//! services root, a stack's `.env`). Everything else in `module/` takes values
//! and is unit-tested on values (`Inventory::of`, `Config::parse`,
//! `compose_files::named`). Outside `module/` the rule says nothing.

use super::super::code::Source;
use super::{Rule, View, words_in};

/// The folder the rule holds.
const FOLDER: &str = "module/";

/// The names that read the world. `use std::{fs, env}` hides the first two
/// from the scanner; the calls made through them (`fs::`, `env::var`) do not.
pub(in crate::architecture) const MODULE_IO: Rule = Rule {
    name: "module/ reads no file, environment or clock outside module/load.rs (its loader)",
    words: &[
        "std::fs",
        "fs::",
        "File::",
        "OpenOptions",
        "read_dir",
        ".exists()",
        ".try_exists(",
        ".is_file()",
        ".is_dir()",
        "metadata(",
        "canonicalize(",
        "read_link(",
        "std::env",
        "env::var",
        "util::sys",
        "Command::new",
        "SystemTime::now",
        "Instant::now",
        "Stamp::now",
        "Zone::local",
    ],
    view: View::Code,
    whole: false,
    tail: false,
    allowed: &[(
        "module/load.rs",
        "",
        "the loader: the config file, the services root and a stack's .env, read once into values",
    )],
};

/// Every read of the world in `module/` outside its loader.
pub(in crate::architecture) fn reads_in_module(files: &[Source]) -> Vec<String> {
    files
        .iter()
        .filter(|s| s.path.starts_with(FOLDER))
        .flat_map(|s| words_in(&MODULE_IO, std::slice::from_ref(s)))
        .collect()
}

#[cfg(test)]
mod self_tests {
    use super::super::super::code::sources;
    use super::*;

    fn check(path: &str, text: &str) -> Vec<String> {
        reads_in_module(&sources(&[(path.to_string(), text.to_string())]))
    }

    #[test]
    fn a_read_of_the_world_in_module_outside_its_loader_is_reported() {
        for planted in [
            "let t = std::fs::read_to_string(&path)?;",
            "for e in fs::read_dir(root)? {}",
            "let f = File::open(p)?;",
            "if dir.exists() {}",
            "let p = dir.join(f); p.is_file()",
            "let v = std::env::var_os(\"HAL_CONFIG\");",
            "let v = env::var(\"X\");",
            "if crate::util::sys::is_root() {}",
            "let now = Stamp::now();",
            "let z = Zone::local()?;",
        ] {
            let v = check("module/config.rs", planted);
            assert_eq!(v.len(), 1, "{planted}: {v:?}");
            assert!(v[0].starts_with("src/module/config.rs:1: "), "{v:?}");
        }
        let read = "let t = std::fs::read_to_string(&path)?;";
        // The loader reads; outside module/ the rule says nothing.
        assert!(check("module/load.rs", read).is_empty());
        assert!(check("state/mod.rs", read).is_empty());
        // Comments, literals, test code and names that only contain a word are no read.
        for fine in [
            "// std::fs::read_to_string",
            "let s = \"dir.exists()\";",
            "fn f() {}\n#[cfg(test)]\nmod tests { fn t() { std::fs::write(p, \"\").unwrap(); } }",
            "let t = my_fs::x(); let n = Timestamp::now_in(z);",
        ] {
            assert!(check("module/inventory.rs", fine).is_empty(), "{fine}");
        }
    }
}
