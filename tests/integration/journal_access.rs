//! A user who may not read the system journal (issue 33): `hal logs` says so once,
//! naming the fix; the lines that user may read are still shown; with none at all
//! it is exit 1; root still gets every line.
//!
//! Runs as ana (uid 1000, in no journal group) in the shared systemd machine
//! (`rig/systemd.rs`), whose journal is persistent and split per user: ana may
//! read her own units' lines, not a system unit's.

use std::time::Duration;

use crate::rig::systemd::{self, Scope};
use crate::rig::{Run, eventually};

/// Prints `<word> N` every 0.2 s.
fn ticker(word: &str) -> String {
    format!(
        "ExecStart=/bin/sh -c 'i=0; while :; do i=$$((i+1)); echo \"{word} $$i\"; sleep 0.2; done'"
    )
}

/// How many lines of `r`'s stdout are `word N` lines.
fn count(r: &Run, word: &str) -> usize {
    let tag = format!("| {word} ");
    r.stdout.lines().filter(|l| l.contains(&tag)).count()
}

#[test]
fn a_user_who_cannot_read_the_system_journal_is_told_the_fix() {
    let Some(s) = systemd::scene() else { return };
    let sys = s.unit(Scope::System, "tick", &ticker("sys"));
    let mine = format!("{}-anatick.service", s.id);
    let dir = "/home/ana/.config/systemd/user";
    let reload =
        "runuser -u ana -- env XDG_RUNTIME_DIR=/run/user/1000 systemctl --user daemon-reload";
    s.m.write(
        &format!("{dir}/{mine}"),
        &format!("[Service]\n{}\n", ticker("ana")),
    );
    s.m.sh_ok(&format!("chown -R ana:ana /home/ana/.config && {reload}"));
    s.config(&format!(
        "[module.sysmod]\nunit = \"{sys}\"\nscope = \"system\"\n\n[module.mine]\nunit = \"{mine}\"\nscope = \"user\"\n"
    ));
    let as_ana = [
        "runuser",
        "-u",
        "ana",
        "--",
        "env",
        "XDG_RUNTIME_DIR=/run/user/1000",
        "HAL_STATE_DIR=/tmp/ana-journal",
    ];
    s.hal(&["module", "start", "sysmod"]).expect(0);
    s.hal_with(&as_ana, &["module", "start", "mine"]).expect(0);
    let limit = Duration::from_secs(30);

    // Root reads the system unit's lines and is told nothing.
    let mut last = None;
    let seen = eventually(limit, || {
        let r = s.hal(&["module", "logs", "sysmod", "-n", "3"]);
        let ok = count(&r, "sys") == 3;
        last = Some(r);
        ok
    });
    let r = last.take().unwrap();
    assert!(seen, "root sees no lines of the system unit: {r:#?}");
    r.expect(0);
    assert!(!r.stderr.contains("system journal"), "{r:#?}");

    let fix = "cannot read the system journal as user ana: add the user to the systemd-journal group (usermod -aG systemd-journal ana), or run as root";
    // Nothing ana may read: exit 1, with the fix.
    let r = s.hal_with(&as_ana, &["module", "logs", "sysmod", "-n", "3"]);
    r.expect(1);
    assert_eq!(r.stderr, format!("hal: logs sysmod: {fix}\n"), "{r:#?}");
    assert!(r.stdout.is_empty(), "{r:#?}");

    // Her own unit's lines are shown, the system unit's absence said once; exit 0.
    let seen = eventually(limit, || {
        let r = s.hal_with(&as_ana, &["module", "logs", "sysmod", "mine", "-n", "3"]);
        let ok = count(&r, "ana") == 3;
        last = Some(r);
        ok
    });
    let r = last.take().unwrap();
    assert!(seen, "ana's own unit's lines are not shown: {r:#?}");
    r.expect(0);
    assert_eq!(r.stderr, format!("hal: logs sysmod: {fix}\n"), "{r:#?}");
    assert_eq!(count(&r, "sys"), 0, "{r:#?}");

    s.hal_with(&as_ana, &["module", "stop", "mine"]).expect(0);
    s.hal(&["module", "stop", "sysmod"]).expect(0);
    s.m.sh(&format!("rm -rf {dir}/{mine} /tmp/ana-journal; {reload}"));
}
