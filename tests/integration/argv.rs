//! Hundreds of generated command lines through the real binary: none may panic (exit 101), die by a signal, or hang.

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::rig::{Rig, cli_tree, run_with_timeout};

/// A small deterministic generator (xorshift), so a failure reproduces.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[(self.next() % items.len() as u64) as usize]
    }
}

/// Every verb, flag and named value of the CLI (read from its clap tree), then
/// values a parser must refuse cleanly.
fn words() -> Vec<OsString> {
    let odd = [
        "0",
        "1s",
        "-1",
        "99999999999999999999",
        "18446744073709551616",
        "1e9",
        "5x",
        "65",
        "10m",
        "@0",
        "2999-01-01T00:00:00Z",
        "/nonexistent/hal.toml",
        "/nonexistent",
        "--",
        "-",
        "",
        " ",
        "web",
        "ghost",
        "../etc",
        "a/b",
        "$(touch /tmp/x)",
        "a;b",
        "a\nb",
        "Web",
        "é",
        "--unknown-flag",
        "-Z",
    ];
    let mut w: Vec<OsString> = cli_tree::words().into_iter().map(OsString::from).collect();
    w.extend(odd.iter().map(OsString::from));
    w.push(OsString::from_vec(vec![0xff, 0xfe, b'x']));
    w.push(OsString::from_vec(b"mod\xc3ule".to_vec()));
    w.push(OsString::from("x".repeat(10_000)));
    w.push(OsString::from("9".repeat(400)));
    w
}

#[test]
fn the_words_come_from_the_cli() {
    let words = cli_tree::words();
    for w in [
        "module",
        "start",
        "reset-failed",
        "doctor",
        "--all",
        "--json",
        "-y",
        "--jobs",
        "-j",
        "--pull",
        "missing",
        "--tail",
        "-n",
        "--since",
        "--grace",
        "--dry-run",
        "always",
    ] {
        assert!(words.iter().any(|x| x == w), "{w} not in {words:?}");
    }
}

#[test]
fn no_command_line_panics_or_hangs() {
    let rig = Rig::new();
    let words = words();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut vectors: Vec<Vec<OsString>> = vec![
        vec![],
        vec!["".into()],
        vec!["--".into()],
        vec!["module".into(), "--".into(), "start".into()],
        vec!["module".into(), "start".into(), "--".into(), "--all".into()],
        vec![
            "module".into(),
            "logs".into(),
            "-n".into(),
            "99999999999999999999".into(),
            "x".into(),
        ],
    ];
    for _ in 0..300 {
        let len = 1 + (rng.next() % 6) as usize;
        let mut v: Vec<OsString> = Vec::with_capacity(len + 1);
        // Most vectors start like real use, so they get past the parser.
        if !rng.next().is_multiple_of(4) {
            v.push("module".into());
        }
        for _ in 0..len {
            v.push(rng.pick(&words).clone());
        }
        vectors.push(v);
    }
    for v in &vectors {
        // `watch` runs until stopped by design; it is covered by its own tests.
        if v.iter().any(|a| a == "watch") {
            continue;
        }
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_hal"));
        cmd.args(v)
            .env("HAL_SERVICES_DIR", &rig.root)
            .env("HAL_STATE_DIR", &rig.state)
            .env("HAL_CONFIG", &rig.config)
            .env_remove("HAL_YES")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let run = run_with_timeout(cmd, Duration::from_secs(20));
        assert!(run.code.is_some(), "killed by a signal: {v:?}: {run}");
        assert_ne!(run.code, Some(101), "panicked: {v:?}: {run}");
        assert!(!run.stderr.contains("panicked"), "panicked: {v:?}: {run}");
        assert!(!run.stderr.contains("RUST_BACKTRACE"), "{v:?}: {run}");
        let code = run.code.unwrap();
        assert!(
            matches!(code, 0..=6),
            "undocumented exit code {code}: {v:?}: {run}"
        );
    }
}
