//! Shell completion: the committed scripts are fresh, and real shells complete verbs, flag values and module names.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::rig::cli_tree::{self, verb};
use crate::rig::{self, fresh, guard};

/// Each shell, and the file its script is committed as.
const SCRIPTS: [(&str, &str); 3] = [("bash", "hal.bash"), ("zsh", "_hal"), ("fish", "hal.fish")];

/// Every verb that takes module names, as typed before the first name
/// (`module start`, …, `status`, `rescue`), read from the CLI.
fn module_verbs() -> Vec<Vec<String>> {
    let verbs: Vec<Vec<String>> = cli_tree::verbs()
        .into_iter()
        .filter(|v| v.takes_modules())
        .map(|v| v.path)
        .collect();
    assert!(verbs.len() >= 9, "too few module verbs found: {verbs:?}");
    verbs
}

fn hal() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_hal"));
    c.env_remove("HAL_COMPLETE")
        .env_remove("HAL_CONFIG")
        .env_remove("HAL_SERVICES_DIR")
        .stdin(Stdio::null());
    c
}

/// What `HAL_COMPLETE=SHELL hal` prints: the script that goes into completions/.
fn registration(shell: &str) -> Vec<u8> {
    let out = hal().env("HAL_COMPLETE", shell).output().unwrap();
    assert!(
        out.status.success(),
        "HAL_COMPLETE={shell} hal failed: {out:?}"
    );
    assert!(
        !out.stdout.is_empty(),
        "HAL_COMPLETE={shell} hal printed nothing"
    );
    out.stdout
}

#[test]
fn committed_scripts_are_fresh() {
    let files: Vec<(String, Vec<u8>)> = SCRIPTS
        .iter()
        .map(|(shell, file)| (file.to_string(), registration(shell)))
        .collect();
    fresh::check(&fresh::repo_dir("completions"), &files, |name| {
        SCRIPTS.iter().any(|(_, f)| *f == name)
    });
}

/// `COMPLETE` is generic enough to be set for something else; hal only
/// answers `HAL_COMPLETE`, so a stray `COMPLETE` changes nothing.
#[test]
fn a_stray_complete_variable_is_ignored() {
    let out = hal()
        .env("COMPLETE", "bash")
        .arg("--version")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stdout).starts_with("hal "),
        "hal printed something else than its version: {out:?}"
    );
}

/// A services root with stacks `alpha` and `beta`, a directory whose name is
/// not a module name, and a config declaring the host module `notifier`.
struct World {
    dir: PathBuf,
    root: PathBuf,
    config: PathBuf,
}

impl World {
    fn new() -> World {
        let dir = std::env::temp_dir().join(format!(
            "hal-compl-{}-{}",
            std::process::id(),
            guard::short_test_name()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        let root = dir.join("services");
        for stack in ["alpha", "beta", "Bad Name"] {
            std::fs::create_dir_all(root.join(stack)).unwrap();
            std::fs::write(root.join(stack).join("compose.yaml"), "services: {}\n").unwrap();
        }
        std::fs::create_dir_all(root.join("not-a-stack")).unwrap();
        let config = dir.join("hal.toml");
        std::fs::write(
            &config,
            "[module.notifier]\nunit = \"notifier.service\"\nscope = \"user\"\n",
        )
        .unwrap();
        World { dir, root, config }
    }

    /// A command with this world's environment, `hal`'s directory first on PATH
    /// (the scripts call `hal` back), and a Docker endpoint that cannot answer.
    fn shell(&self, program: &str) -> Command {
        let bin = Path::new(env!("CARGO_BIN_EXE_hal")).parent().unwrap();
        let path = std::env::var_os("PATH").unwrap_or_default();
        let mut paths = vec![bin.to_path_buf()];
        paths.extend(std::env::split_paths(&path));
        let mut c = Command::new(program);
        c.env("PATH", std::env::join_paths(paths).unwrap())
            .env("HAL_SERVICES_DIR", &self.root)
            .env("HAL_CONFIG", &self.config)
            .env("DOCKER_HOST", "unix:///nonexistent/docker.sock")
            .env_remove("HAL_COMPLETE")
            // Set for something else: must not matter.
            .env("COMPLETE", "fish")
            .current_dir(&self.dir)
            .stdin(Stdio::null());
        c
    }

    /// The candidates bash's completion function puts in COMPREPLY for `words`
    /// (the last one is the word under the cursor).
    fn bash(&self, words: &[&str]) -> Vec<String> {
        const DRIVER: &str = r#"
source "$1"; shift
spec=$(complete -p hal) || { echo "no completion registered for hal" >&2; exit 90; }
fn=${spec##*-F }; fn=${fn%% *}
COMP_WORDS=("$@")
COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
COMP_LINE="${COMP_WORDS[*]}"
COMP_POINT=${#COMP_LINE}
COMP_TYPE=9
"$fn" hal "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
printf '%s\n' "${COMPREPLY[@]}"
"#;
        let script = fresh::repo_dir("completions").join("hal.bash");
        let out = self
            .shell("bash")
            .args(["--norc", "--noprofile", "-c", DRIVER, "bash"])
            .arg(&script)
            .arg("hal")
            .args(words)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "bash completion of {words:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            out.stderr.is_empty(),
            "completion of {words:?} wrote on the terminal: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        lines(&out.stdout)
    }
}

impl Drop for World {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn lines(bytes: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(bytes)
        .lines()
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect()
}

fn has_all(got: &[String], want: &[impl AsRef<str>]) -> bool {
    want.iter().all(|w| got.iter().any(|g| g == w.as_ref()))
}

/// The visible subcommands of the command at `path`, without `help`.
fn subcommands(path: &[&str]) -> Vec<String> {
    verb(path)
        .subcommands()
        .into_iter()
        .filter(|s| s != "help")
        .collect()
}

#[test]
fn bash_completes_verbs_and_flags() {
    let w = World::new();
    let top = w.bash(&[""]);
    let mut want = subcommands(&[]);
    want.push("--json".into());
    assert!(has_all(&top, &want), "{want:?} in {top:?}");
    let module = w.bash(&["module", ""]);
    let want = subcommands(&["module"]);
    assert!(has_all(&module, &want), "{want:?} in {module:?}");
    assert!(want.len() >= 8, "{want:?}");
    let st: Vec<String> = want
        .iter()
        .filter(|v| v.starts_with("st"))
        .cloned()
        .collect();
    assert_eq!(w.bash(&["module", "st"]), st);
    assert_eq!(w.bash(&["mod"]), ["module"]);
    let flags = w.bash(&["module", "start", "--"]);
    let want: Vec<String> = verb(&["module", "start"])
        .long_flags()
        .into_iter()
        .filter(|f| f != "--help")
        .collect();
    assert!(has_all(&flags, &want), "{want:?} in {flags:?}");
}

#[test]
fn bash_completes_flag_values() {
    let w = World::new();
    let pull = verb(&["module", "start"]).values_of("pull");
    assert_eq!(pull, ["always", "missing", "never"]);
    assert_eq!(w.bash(&["module", "start", "--pull", ""]), pull);
    assert_eq!(
        w.bash(&["module", "restart", "--pull", "m"]),
        verb(&["module", "restart"])
            .values_of("pull")
            .into_iter()
            .filter(|v| v.starts_with('m'))
            .collect::<Vec<_>>()
    );
    assert_eq!(w.bash(&["--color", ""]), verb(&[]).values_of("color"));
}

#[test]
fn bash_completes_module_names_in_every_verb() {
    let w = World::new();
    let verbs = module_verbs();
    for verb in &verbs {
        let mut words: Vec<&str> = verb.iter().map(String::as_str).collect();
        words.push("");
        let got = w.bash(&words);
        assert!(
            has_all(&got, &["alpha", "beta", "notifier"]),
            "{words:?}: {got:?}"
        );
        assert!(!got.iter().any(|c| c.contains("Bad")), "{words:?}: {got:?}");
        assert!(
            !got.iter().any(|c| c == "not-a-stack"),
            "{words:?}: {got:?}"
        );

        *words.last_mut().unwrap() = "al";
        assert_eq!(w.bash(&words), ["alpha"], "{words:?}");
    }
    // After flags, and without repeating a name already given.
    let got = w.bash(&["module", "logs", "-f", "-n", "5", ""]);
    assert!(has_all(&got, &["alpha", "beta", "notifier"]), "{got:?}");
    let got = w.bash(&["module", "start", "alpha", ""]);
    assert!(has_all(&got, &["beta", "notifier"]), "{got:?}");
    assert!(!got.iter().any(|c| c == "alpha"), "{got:?}");
    // Verbs without module arguments offer none.
    let got = w.bash(&["module", "list", ""]);
    assert!(!got.iter().any(|c| c == "alpha"), "{got:?}");
}

#[test]
fn bash_honours_services_dir_and_config_on_the_line() {
    let w = World::new();
    let other = w.dir.join("other");
    std::fs::create_dir_all(other.join("gamma")).unwrap();
    std::fs::write(other.join("gamma/compose.yml"), "services: {}\n").unwrap();
    let empty = w.dir.join("empty.toml");
    std::fs::write(&empty, "").unwrap();
    let (other, empty) = (other.to_str().unwrap(), empty.to_str().unwrap());

    let got = w.bash(&["--services-dir", other, "module", "stop", ""]);
    assert!(has_all(&got, &["gamma", "notifier"]), "{got:?}");
    assert!(!got.iter().any(|c| c == "alpha"), "{got:?}");
    let got = w.bash(&["--config", empty, "status", ""]);
    assert!(has_all(&got, &["alpha", "beta"]), "{got:?}");
    assert!(!got.iter().any(|c| c == "notifier"), "{got:?}");
    // A config that does not load still leaves the stacks, and prints nothing.
    let broken = w.dir.join("broken.toml");
    std::fs::write(&broken, "[module.x\n").unwrap();
    let got = w.bash(&["--config", broken.to_str().unwrap(), "status", ""]);
    assert!(has_all(&got, &["alpha", "beta"]), "{got:?}");
}

#[test]
fn zsh_script_completes_module_names() {
    let Some(()) = rig::need("zsh", "--version") else {
        return;
    };
    let w = World::new();
    // No compinit: stub compdef, and print what the function hands _describe.
    const DRIVER: &str = r#"
compdef() { :; }
_describe() { print -rl -- "${(@P)3}"; }
source "$1"
words=(hal module start "")
CURRENT=4
_clap_dynamic_completer_hal
"#;
    let script = fresh::repo_dir("completions").join("_hal");
    let out = w
        .shell("zsh")
        .args(["-f", "-c", DRIVER, "zsh"])
        .arg(&script)
        .output()
        .unwrap();
    let got = lines(&out.stdout);
    assert!(
        has_all(&got, &["alpha:stack", "beta:stack"]),
        "{got:?} {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn fish_script_completes_module_names() {
    let Some(()) = rig::need("fish", "--version") else {
        return;
    };
    let w = World::new();
    let script = fresh::repo_dir("completions").join("hal.fish");
    let out = w
        .shell("fish")
        .args(["--no-config", "-c"])
        .arg(format!(
            "source '{}'; complete --do-complete 'hal module stop '; complete --do-complete 'hal module start --pull '",
            script.display()
        ))
        .output()
        .unwrap();
    let got = lines(&out.stdout);
    let names: Vec<String> = got
        .iter()
        .map(|l| l.split('\t').next().unwrap_or_default().to_string())
        .collect();
    assert!(
        has_all(
            &names,
            &["alpha", "beta", "notifier", "always", "missing", "never"]
        ),
        "{got:?} {}",
        String::from_utf8_lossy(&out.stderr)
    );
}
