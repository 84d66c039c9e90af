//! Reading the journal: which `journalctl` matches are a unit's, and its JSON entries as log lines.

use crate::host::init::JournalQuery;
use crate::logs::line::Line;
use crate::module::config::Scope;

/// The journalctl arguments for one unit.
///
/// A user unit is matched over every journal file the caller may read (no
/// `--user`/`--system`): root's user units log to the system journal, while a
/// normal user's may be split into a per-user file; both are read this way.
/// See [`user_unit_matches`] for which entries are the unit's.
pub(crate) fn journal_args(
    scope: Scope,
    unit: &str,
    uid: Option<u32>,
    q: JournalQuery,
) -> Vec<String> {
    let mut a: Vec<String> = Vec::new();
    match (scope, uid) {
        (Scope::System, _) => a.extend(["--unit".into(), unit.to_string()]),
        (Scope::User, Some(uid)) => a.extend(user_unit_matches(unit, uid, q.pid)),
        (Scope::User, None) => a.extend(["--user-unit".into(), unit.to_string()]),
    }
    a.extend(
        [
            "--no-pager",
            "--quiet",
            "--all",
            "--output",
            "json",
            "--output-fields",
            "MESSAGE,PRIORITY",
        ]
        .map(String::from),
    );
    match (q.tail, q.follow) {
        (Some(n), _) => a.extend(["--lines".into(), n.to_string()]),
        (None, true) => a.extend(["--lines".into(), "all".into()]),
        (None, false) => {}
    }
    if let Some(s) = q.since {
        a.extend(["--since".into(), format!("@{}", s.secs())]);
    }
    if let Some(u) = q.until {
        a.extend(["--until".into(), format!("@{}", u.secs())]);
    }
    if q.follow {
        a.push("--follow".into());
    }
    a
}

/// journalctl's own `--user-unit` matches, plus the lines of the unit's last
/// main process (`pid`, when known) filed under no unit at all.
///
/// journald learns a stream's unit from the writer's cgroup; when the process
/// is gone before journald looks (a service that fails at once, whose last
/// words matter most), a user unit's lines carry only `_PID` and `_UID`, and
/// `--user-unit` misses them. A system unit's lines still get `_SYSTEMD_UNIT`
/// from the system manager, so `--unit` needs no such help.
pub(crate) fn user_unit_matches(unit: &str, uid: u32, pid: Option<u32>) -> Vec<String> {
    let me = format!("_UID={uid}");
    let mut groups: Vec<Vec<String>> = vec![
        vec![format!("_SYSTEMD_USER_UNIT={unit}"), me.clone()],
        vec![format!("USER_UNIT={unit}"), me.clone()],
        vec![
            format!("COREDUMP_USER_UNIT={unit}"),
            me.clone(),
            "_UID=0".into(),
        ],
        vec![
            format!("OBJECT_SYSTEMD_USER_UNIT={unit}"),
            me.clone(),
            "_UID=0".into(),
        ],
    ];
    if let Some(pid) = pid {
        groups.push(vec![format!("_PID={pid}"), me]);
    }
    let mut out = Vec::new();
    for (i, g) in groups.into_iter().enumerate() {
        if i > 0 {
            out.push("+".to_string());
        }
        out.extend(g);
    }
    out
}

/// One journal entry (`journalctl -o json`) as log lines (the node's journal
/// reader's parser: `logs::journal`). Entries without a message give none.
pub(crate) fn parse_journal_line(json: &[u8]) -> Vec<Line> {
    match serde_json::from_slice(json) {
        Ok(serde_json::Value::Object(entry)) => crate::logs::journal::entry_lines(&entry),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::logs::line::Stream;

    #[test]
    fn journal_json_becomes_lines() {
        let l = parse_journal_line(
            br#"{"__REALTIME_TIMESTAMP":"1700000000123456","MESSAGE":"hello\n","PRIORITY":"6"}"#,
        );
        assert_eq!(l.len(), 1);
        assert_eq!(l[0].message, "hello");
        assert_eq!(l[0].stream, Stream::Stdout);
        assert_eq!(l[0].time.secs(), 1_700_000_000);
        assert_eq!(l[0].time.nanos(), 123_456_000);

        let l = parse_journal_line(
            br#"{"__REALTIME_TIMESTAMP":"1","MESSAGE":[104,105,255,10,111,107],"PRIORITY":"3"}"#,
        );
        assert_eq!(l.len(), 2);
        assert_eq!(l[0].message, "hi\u{fffd}");
        assert_eq!(l[1].message, "ok");
        assert_eq!(l[0].stream, Stream::Stderr);

        assert!(parse_journal_line(br#"{"MESSAGE":null}"#).is_empty());
        assert!(parse_journal_line(b"not json").is_empty());
    }

    #[test]
    fn journal_args_per_scope() {
        let q = JournalQuery {
            follow: true,
            tail: None,
            since: Some(crate::util::timefmt::Stamp::from_secs(42)),
            until: Some(crate::util::timefmt::Stamp::from_secs(50)),
            pid: None,
        };
        let a = journal_args(Scope::User, "n.service", Some(1000), q);
        assert_eq!(a[..2], ["_SYSTEMD_USER_UNIT=n.service", "_UID=1000"]);
        assert_eq!(a.iter().filter(|x| *x == "+").count(), 3);
        assert!(!a.iter().any(|x| x.starts_with("_PID=")));
        let with_pid = JournalQuery { pid: Some(77), ..q };
        let b = journal_args(Scope::User, "n.service", Some(1000), with_pid);
        assert!(b.windows(3).any(|w| w == ["+", "_PID=77", "_UID=1000"]));
        assert_eq!(b.iter().filter(|x| *x == "+").count(), 4);
        assert!(!a.contains(&"--user".to_string()));
        let a = journal_args(Scope::User, "n.service", None, q);
        assert_eq!(a[..2], ["--user-unit", "n.service"]);
        assert!(a.windows(2).any(|w| w == ["--lines", "all"]));
        assert!(a.windows(2).any(|w| w == ["--since", "@42"]));
        assert!(a.windows(2).any(|w| w == ["--until", "@50"]));
        assert!(a.contains(&"--follow".to_string()));
        let a = journal_args(
            Scope::System,
            "n.service",
            Some(0),
            JournalQuery {
                tail: Some(5),
                ..Default::default()
            },
        );
        assert_eq!(a[..2], ["--unit", "n.service"]);
        assert!(a.windows(2).any(|w| w == ["--lines", "5"]));
        assert!(!a.contains(&"--follow".to_string()));
    }
}
