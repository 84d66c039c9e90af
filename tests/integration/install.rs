//! Install in one step, proven on a clean systemd machine: the Debian package and `make install` place the same files, run, supervise, and leave nothing of hal's behind when removed.
//!
//! `cargo deb` builds the package once per test binary (the release build, as
//! shipped). Each test boots its own `hal-install:bookworm` machine
//! (scripts/provision.sh: the `hal-systemd:bookworm` minbase + systemd image
//! plus man-db, so `man hal` runs as a user would run it, and make), unprivileged,
//! with the host's Docker socket, docker CLI and compose plugin mounted in. The
//! package goes in with `apt-get install ./hal_*.deb`: its only hard dependency
//! (libc6) is in the image and the image holds no package lists, so apt installs
//! the local file alone and downloads nothing (the recommended Docker packages are
//! named, not fetched). Outside CI, a missing Docker, image or cargo-deb skips
//! with a visible notice; with CI=true it fails instead.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

use crate::rig::guard::Lease;
use crate::rig::machine::{self, Machine, Spec};
use crate::rig::{docker, eventually, stack};

pub(crate) const IMAGE: &str = "hal-install:bookworm";
/// Where the machine sees the source tree (make's working directory), read-only.
const SRC: &str = "/src";
/// Where the machine sees the release binary `make install` copies.
const BUILT: &str = "/opt/hal-build/hal";
/// Paths left out of the before/after file lists: kernel and runtime file
/// systems, dpkg's and apt's own records, caches, logs, systemd's bookkeeping,
/// and the test's own scaffolding (/srv) and mounts.
const UNWATCHED: [&str; 13] = [
    "/proc",
    "/sys",
    "/dev",
    "/run",
    "/tmp",
    "/var/lib/dpkg",
    "/var/lib/apt",
    "/var/cache",
    "/var/log",
    "/var/lib/systemd",
    "/srv",
    SRC,
    "/opt/hal-build",
];
/// What hal may leave behind after a removal: the administrator's config and hal's state.
const KEPT: [&str; 2] = ["/etc/hal/", "/var/lib/hal/"];

fn manifest_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

// ---------------------------------------------------------------- prerequisites

/// Why these tests cannot run here, if they cannot.
pub(crate) fn missing() -> Option<String> {
    if let Some(why) = machine::missing(IMAGE) {
        return Some(why);
    }
    let ok = |program: &str, args: &[&str]| {
        Command::new(program)
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    if !ok(&cargo(), &["deb", "--version"]) {
        return Some("cargo-deb is not installed".into());
    }
    for (program, arg) in [("make", "--version"), ("dpkg-deb", "--version")] {
        if !ok(program, &[arg]) {
            return Some(format!("{program} is not installed"));
        }
    }
    None
}

/// A shared lease on the engine when the test may run; otherwise a skip
/// notice (a failure in CI) and `None`.
#[track_caller]
fn ready() -> Option<Lease> {
    match missing() {
        None => Some(Lease::shared()),
        Some(why) => crate::rig::missing(&why, "run scripts/provision.sh"),
    }
}

fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".into())
}

/// The package, built once per test binary with `cargo deb --locked` (the fleet test installs it too).
pub(crate) fn deb() -> &'static Path {
    static DEB: OnceLock<PathBuf> = OnceLock::new();
    DEB.get_or_init(|| {
        let out = Command::new(cargo())
            .args(["deb", "--locked"])
            .current_dir(manifest_dir())
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "cargo deb --locked failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        // cargo deb prints the package's path as its last line.
        let stdout = String::from_utf8_lossy(&out.stdout);
        let path = stdout
            .lines()
            .rev()
            .map(str::trim)
            .find(|l| l.ends_with(".deb"))
            .unwrap_or_else(|| panic!("cargo deb named no .deb: {stdout}"));
        let name = Path::new(path).file_name().unwrap().to_string_lossy();
        assert!(
            name.starts_with(&format!("hal_{}-", env!("CARGO_PKG_VERSION"))),
            "{name}"
        );
        PathBuf::from(path)
    })
}

/// The release binary the package holds (cargo deb built it).
fn release_binary() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| manifest_dir().join("target"));
    let bin = target.join("release/hal");
    assert!(
        bin.is_file(),
        "{} is missing after cargo deb",
        bin.display()
    );
    bin
}

/// The package's files and symlinks, as absolute paths.
fn deb_files() -> BTreeSet<String> {
    let out = Command::new("dpkg-deb")
        .arg("-c")
        .arg(deb())
        .output()
        .unwrap();
    assert!(out.status.success(), "dpkg-deb -c: {out:?}");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.starts_with('d'))
        .map(|l| {
            let path = l.split_whitespace().nth(5).unwrap();
            path.trim_start_matches('.').to_string()
        })
        .collect()
}

// ---------------------------------------------------------------- the machine

/// One clean machine (rig/machine.rs) with the source tree and the release
/// binary mounted; removed, with the stacks it started, when dropped.
fn boot(test: &str) -> Machine {
    let run = format!("{}{test}", crate::rig::unique("hi"));
    Machine::boot(Spec {
        name: &run,
        run: &run,
        label: "install",
        image: IMAGE,
        mounts: vec![
            format!("{}:{SRC}:ro", manifest_dir().display()),
            format!("{}:{BUILT}:ro", release_binary().display()),
        ],
        env: vec!["NO_COLOR=1".into()],
    })
}

/// Every file and symlink outside [`UNWATCHED`].
fn files(m: &Machine) -> BTreeSet<String> {
    let prune = UNWATCHED
        .iter()
        .map(|p| format!("-path {p}"))
        .collect::<Vec<_>>()
        .join(" -o ");
    m.sh_ok(&format!(
        "find / -xdev \\( {prune} \\) -prune -o \\( -type f -o -type l \\) -print"
    ))
    .lines()
    .map(str::to_string)
    .collect()
}

/// The config and one stack, `<run>-app`, as an administrator would set them up.
fn admin_stack(m: &Machine) -> String {
    let services = format!("/srv/{}/services", m.run);
    let app = format!("{}-app", m.run);
    m.write(
        &format!("{services}/{app}/compose.yaml"),
        &stack()
            .service("app")
            .runs("sleep 100000")
            .restart("unless-stopped")
            .to_string(),
    );
    m.write(
        "/etc/hal/hal.toml",
        &format!("services_dir = \"{services}\"\n\n[defaults]\npull = \"never\"\n"),
    );
    app
}

// ---------------------------------------------------------------- the checks

/// Where one way of installing puts things.
struct Layout {
    /// `/usr` for the package, `/usr/local` for `make install`.
    prefix: &'static str,
}

impl Layout {
    fn bin(&self) -> String {
        format!("{}/bin/hal", self.prefix)
    }

    /// A package path moved under this layout's prefix, as the Makefile places it.
    fn place(&self, deb_path: &str) -> String {
        if self.prefix == "/usr" {
            return deb_path.to_string();
        }
        let moved = deb_path.replacen("/usr/", &format!("{}/", self.prefix), 1);
        moved.replace("/zsh/vendor-completions/", "/zsh/site-functions/")
    }
}

/// What an installed node must offer: the binary, the manual, bash completion of
/// a module name, the units (enabled and started by hand), a killed container
/// brought back by hal watch, and a clean doctor.
fn check_installed(m: &Machine, layout: &Layout, app: &str) {
    // Installing enabled and started nothing.
    for unit in ["hal-watch.service", "hal-rescue.timer"] {
        let enabled = m.sh(&format!("systemctl is-enabled {unit}")).stdout;
        let active = m.sh(&format!("systemctl is-active {unit}")).stdout;
        assert_eq!(
            (enabled.trim(), active.trim()),
            ("disabled", "inactive"),
            "{unit} after the install"
        );
    }

    let bin = layout.bin();
    assert_eq!(m.sh_ok("command -v hal").trim(), bin);
    assert_eq!(
        m.sh_ok("hal --version").trim(),
        format!("hal {}", env!("CARGO_PKG_VERSION"))
    );

    // `man hal` finds the installed page and renders it; the units' Documentation= too.
    assert_eq!(
        // (Debian's /usr/local/man is a link to /usr/local/share/man.)
        m.sh_ok("readlink -f \"$(man -w hal)\"").trim(),
        layout.place("/usr/share/man/man1/hal.1.gz")
    );
    let page = m.sh_ok("MANPAGER=cat MANWIDTH=80 man hal 2>&1");
    assert!(
        page.starts_with("HAL(1)") && page.contains("SYNOPSIS") && page.contains("EXIT STATUS"),
        "{page}"
    );
    assert!(
        m.sh_ok("MANPAGER=cat man hal-watch 2>&1")
            .contains("hal-watch")
    );
    // The config file's manual, hal.toml(5).
    let config_page = m.sh_ok("MANPAGER=cat MANWIDTH=80 man 5 hal.toml 2>&1");
    assert!(config_page.contains("restart"), "{config_page}");

    // bash completes a module name after sourcing the installed script.
    let script = layout.place("/usr/share/bash-completion/completions/hal");
    let typed = &app[..app.len() - 2];
    let words = m.sh_ok(&format!(
        r#"bash --norc --noprofile -c 'source {script}
COMP_WORDS=(hal module start {typed}); COMP_CWORD=3
COMP_LINE="hal module start {typed}"; COMP_POINT=${{#COMP_LINE}}; COMP_TYPE=9
_clap_complete_hal hal {typed} start
printf "%s\n" "${{COMPREPLY[@]}}"'"#
    ));
    assert!(
        words.lines().any(|w| w.trim() == app),
        "bash offered {words:?} for {typed}"
    );

    // The units name the installed binary, in both scopes.
    let exec = m.sh_ok("systemctl show -p ExecStart --value hal-watch.service");
    assert!(exec.contains(&format!("path={bin} ")), "{exec}");
    let user_unit = layout.place("/usr/lib/systemd/user/hal-watch.service");
    m.sh_ok(&format!("grep -qx 'ExecStart={bin} watch' {user_unit}"));

    // Enabled by hand, both run.
    m.sh_ok("systemctl enable --now hal-watch.service hal-rescue.timer");
    for unit in ["hal-watch.service", "hal-rescue.timer"] {
        assert_eq!(
            m.sh_ok(&format!("systemctl is-active {unit}")).trim(),
            "active",
            "{unit}"
        );
    }

    // A started stack's killed container is brought back by hal watch.
    m.sh_ok(&format!("hal module start {app}"));
    let journal = || {
        m.sh("journalctl -u hal-watch.service -o cat --no-pager")
            .stdout
    };
    assert!(
        eventually(Duration::from_secs(30), || journal()
            .contains("watching 1 module")),
        "hal watch did not start watching:\n{}",
        journal()
    );
    let container = format!("{app}-app-1");
    docker(&["kill", &container]);
    let back = eventually(Duration::from_secs(60), || {
        docker(&["inspect", "-f", "{{.State.Status}}", &container]).trim() == "running"
            && m.sh(&format!("hal --json status {app}")).state_of(app) == "active"
    });
    assert!(
        back && eventually(Duration::from_secs(20), || journal()
            .contains(&format!("{app}: restarted, active"))),
        "the stack did not come back:\n{}",
        journal()
    );

    // The doctor is all ✓: this machine lacks nothing hal checks (Docker and
    // compose come from the host, the units run).
    let doc: serde_json::Value = serde_json::from_str(&m.sh("hal --json doctor").stdout).unwrap();
    let failed: Vec<&serde_json::Value> = doc["checks"]
        .as_array()
        .unwrap()
        .iter()
        // The host's engine keeps logs per container; history.rs tests that check.
        .filter(|c| c["ok"] != true && c["name"] != "history")
        .collect();
    assert!(failed.is_empty(), "doctor: {failed:#?}");
    let names: Vec<&str> = doc["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["name"].as_str())
        .collect();
    assert!(names.contains(&"automatic-rescue"), "{names:?}");
}

/// After a removal: no process of hal's, no unit, and no file but config and state;
/// nothing that was there before the install is gone.
fn check_removed(m: &Machine, before: &BTreeSet<String>) {
    assert_ne!(m.sh("command -v hal").code, Some(0), "hal is still on PATH");
    for unit in ["hal-watch.service", "hal-rescue.timer"] {
        // A unit still running from a deleted binary would stay loaded and active.
        let state = m
            .sh(&format!(
                "systemctl show -p LoadState -p ActiveState --value {unit}"
            ))
            .stdout;
        assert_eq!(
            state.split_whitespace().collect::<Vec<_>>(),
            ["not-found", "inactive"],
            "{unit}"
        );
    }
    let after = files(m);
    let left: Vec<&String> = after
        .difference(before)
        .filter(|p| !KEPT.iter().any(|k| p.starts_with(k)))
        .collect();
    assert!(left.is_empty(), "left behind: {left:#?}");
    let lost: Vec<&String> = before.difference(&after).collect();
    assert!(lost.is_empty(), "removed what was not hal's: {lost:#?}");
}

// ---------------------------------------------------------------- the tests

#[test]
fn the_debian_package_installs_runs_and_goes_cleanly() {
    let Some(_engine) = ready() else { return };
    let deb = deb();
    let m = boot("deb");
    let app = admin_stack(&m);
    let dir = format!("/srv/{}", m.run);
    let cp = Command::new("docker")
        .arg("cp")
        .arg(deb)
        .arg(format!("{}:{dir}/", m.name))
        .output()
        .unwrap();
    assert!(cp.status.success(), "{cp:?}");
    let before = files(&m);

    // As the issue says; the image has no package lists, so nothing is downloaded.
    let apt = m.sh_ok(&format!(
        "cd {dir} && DEBIAN_FRONTEND=noninteractive apt-get install -y ./hal_*.deb 2>&1"
    ));
    assert!(
        apt.contains("0 upgraded, 1 newly installed, 0 to remove"),
        "{apt}"
    );
    let installed: BTreeSet<String> = files(&m).difference(&before).cloned().collect();
    assert_eq!(installed, deb_files(), "the package placed other files");

    check_installed(&m, &Layout { prefix: "/usr" }, &app);

    let apt = m.sh_ok("DEBIAN_FRONTEND=noninteractive apt-get remove -y hal 2>&1");
    assert!(apt.contains("Removing hal"), "{apt}");
    check_removed(&m, &before);
    // Remove is not purge: hal's state stays.
    assert!(m.sh_ok("ls /var/lib/hal").contains("state"));

    // Purge drops the state; the administrator's config stays.
    m.sh_ok("DEBIAN_FRONTEND=noninteractive apt-get purge -y hal >/dev/null 2>&1");
    m.sh_ok("test ! -e /var/lib/hal && test -f /etc/hal/hal.toml");
}

#[test]
fn make_install_places_the_package_files_and_uninstalls_cleanly() {
    let Some(_engine) = ready() else { return };
    let deb = deb();
    let want = deb_files();

    // Staged with PREFIX=/usr, the tree is the package's, file for file and byte for byte.
    let scratch = std::env::temp_dir().join(format!("hal-install-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    let unpacked = scratch.join("deb");
    let staged = scratch.join("make");
    std::fs::create_dir_all(&scratch).unwrap();
    let x = Command::new("dpkg-deb")
        .arg("-x")
        .arg(deb)
        .arg(&unpacked)
        .output()
        .unwrap();
    assert!(x.status.success(), "{x:?}");
    let make = |target: &str, dest: &Path| {
        let out = Command::new("make")
            .args([
                "-C",
                &manifest_dir().to_string_lossy(),
                target,
                "PREFIX=/usr",
            ])
            .arg(format!("DESTDIR={}", dest.display()))
            .arg(format!("BIN={}", release_binary().display()))
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(out.status.success(), "make {target}: {out:?}");
    };
    make("install", &staged);
    let tree = |root: &Path| -> BTreeSet<String> {
        walk(root)
            .into_iter()
            .map(|p| format!("/{}", p.strip_prefix(root).unwrap().display()))
            .collect()
    };
    assert_eq!(tree(&staged), want, "make install PREFIX=/usr DESTDIR=…");
    for path in &want {
        let (a, b) = (unpacked.join(&path[1..]), staged.join(&path[1..]));
        assert_eq!(mode(&a), mode(&b), "mode of {path}");
        assert!(same_content(&a, &b), "{path} differs");
    }
    make("uninstall", &staged);
    assert!(
        walk(&staged).is_empty(),
        "make uninstall left {:?}",
        walk(&staged)
    );
    let _ = std::fs::remove_dir_all(&scratch);

    // On the live machine, with the default PREFIX=/usr/local.
    let m = boot("make");
    let app = admin_stack(&m);
    let before = files(&m);
    m.sh_ok(&format!("make -C {SRC} install BIN={BUILT} >/dev/null"));
    let layout = Layout {
        prefix: "/usr/local",
    };
    let installed: BTreeSet<String> = files(&m).difference(&before).cloned().collect();
    let expected: BTreeSet<String> = want.iter().map(|p| layout.place(p)).collect();
    assert_eq!(installed, expected, "make install placed other files");

    check_installed(&m, &layout, &app);

    m.sh_ok(&format!("make -C {SRC} uninstall >/dev/null"));
    check_removed(&m, &before);
}

/// Every file and symlink under `root`.
fn walk(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries {
            let path = e.unwrap().path();
            if std::fs::symlink_metadata(&path).unwrap().is_dir() {
                stack.push(path);
            } else {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::symlink_metadata(path)
        .unwrap()
        .permissions()
        .mode()
        & 0o7777
}

/// Equal bytes, or for gzipped manuals equal text (gzip headers may differ).
fn same_content(a: &Path, b: &Path) -> bool {
    let read = |p: &Path| -> Vec<u8> {
        if p.extension().is_some_and(|e| e == "gz") {
            let out = Command::new("gzip").arg("-dc").arg(p).output().unwrap();
            assert!(out.status.success(), "gzip -dc {}", p.display());
            out.stdout
        } else {
            std::fs::read(p).unwrap()
        }
    };
    read(a) == read(b)
}
