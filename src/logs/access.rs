//! Whether this process may read the node's system journal, and the fix when it may not.
//!
//! `journalctl -o json` run by a user outside `systemd-journal`/`adm` says
//! nothing about the files it could not open when it opened some (the user's
//! own): it prints no line of a system unit and exits 0. So hal asks the files
//! themselves, as journalctl does: one system journal it may open is enough.

use std::path::Path;

/// Where journald keeps the system journal (persistent, then volatile), one folder per machine id.
const JOURNAL_DIRS: [&str; 2] = ["/var/log/journal", "/run/log/journal"];

/// Whether the system journal is readable: `Some(false)` when there is one
/// and none of its files may be opened, `None` when there is none to read.
pub(crate) fn system_journal_readable() -> Option<bool> {
    if crate::util::sys::is_root() {
        return Some(true);
    }
    readable_under(&JOURNAL_DIRS.map(Path::new))
}

fn readable_under(dirs: &[&Path]) -> Option<bool> {
    let mut denied = false;
    for dir in dirs {
        let Ok(machines) = std::fs::read_dir(dir) else {
            continue;
        };
        for machine in machines.flatten() {
            let files = match std::fs::read_dir(machine.path()) {
                Ok(files) => files,
                Err(e) => {
                    denied |= e.kind() == std::io::ErrorKind::PermissionDenied;
                    continue;
                }
            };
            for f in files.flatten() {
                let name = f.file_name();
                let name = name.to_string_lossy();
                if !(name.starts_with("system") && name.contains(".journal")) {
                    continue;
                }
                match std::fs::File::open(f.path()) {
                    Ok(_) => return Some(true),
                    Err(e) => denied |= e.kind() == std::io::ErrorKind::PermissionDenied,
                }
            }
        }
    }
    denied.then_some(false)
}

/// Why this process's user sees none of the system journal, and the fix.
pub(crate) fn denied() -> String {
    let user = crate::util::sys::name_of_uid(crate::util::sys::euid());
    format!(
        "cannot read the system journal as user {user}: add the user to the systemd-journal group (usermod -aG systemd-journal {user}), or run as root"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn one_system_file_that_opens_is_enough() {
        let d = std::env::temp_dir().join(format!("hal-journal-access-{}", std::process::id()));
        let m = d.join("0123abcd");
        std::fs::create_dir_all(&m).unwrap();
        assert_eq!(readable_under(&[&d]), None, "no journal: nothing to say");
        std::fs::write(m.join("user-1000.journal"), "").unwrap();
        assert_eq!(
            readable_under(&[&d]),
            None,
            "a user's own file is no system journal"
        );
        std::fs::write(m.join("system.journal"), "").unwrap();
        assert_eq!(readable_under(&[&d, Path::new("/nonexistent")]), Some(true));
        if !crate::util::sys::is_root() {
            // Root opens any file: the denial is seen only as someone else.
            std::fs::set_permissions(m.join("system.journal"), PermissionsExt::from_mode(0o000))
                .unwrap();
            assert_eq!(readable_under(&[&d]), Some(false));
            std::fs::write(m.join("system@0001-0002.journal"), "").unwrap();
            assert_eq!(readable_under(&[&d]), Some(true), "an archived file opens");
        }
        std::fs::remove_dir_all(&d).unwrap();
    }
}
