//! Reading `systemctl show`: its property blocks and timestamps, parsed into [`UnitStatus`].

use crate::host::init::{Activity, Load, MainExit, UnitStatus};
use crate::util::timefmt::{self, Stamp};

/// The properties `show` asks for; see [`parse_show`].
pub(crate) const PROPERTIES: &str = "Id,Names,LoadState,LoadError,ActiveState,SubState,Result,\
ExecMainPID,ExecMainCode,ExecMainStatus,NRestarts,ActiveEnterTimestamp,StateChangeTimestamp,\
ExecMainExitTimestamp,Triggers,NextElapseUSecRealtime,LastTriggerUSec";

/// Parses `systemctl show -p PROPERTIES UNIT...`: one block per unit, in the
/// order asked, separated by blank lines. Blocks are matched to the units by
/// position, or by `Id`/`Names` if their count differs.
pub(crate) fn parse_show(text: &str, units: &[String]) -> Vec<UnitStatus> {
    let blocks: Vec<Vec<(&str, &str)>> = text
        .split("\n\n")
        .map(|b| {
            b.lines()
                .filter_map(|l| l.split_once('='))
                .collect::<Vec<_>>()
        })
        .filter(|b| !b.is_empty())
        .collect();
    units
        .iter()
        .enumerate()
        .map(|(i, unit)| {
            let named = |b: &&Vec<(&str, &str)>| {
                b.iter().any(|&(k, v)| {
                    (k == "Id" && v == unit) || (k == "Names" && v.split(' ').any(|n| n == unit))
                })
            };
            let block = if blocks.len() == units.len() {
                blocks.get(i)
            } else {
                blocks.iter().find(named)
            };
            match block {
                Some(b) => unit_status(unit, b),
                None => UnitStatus {
                    unit: unit.clone(),
                    load: Load::Error("systemctl show said nothing about it".into()),
                    activity: Activity::Other("unknown".into()),
                    words: "unknown".into(),
                    auto_restart: false,
                    result: None,
                    main_exit: None,
                    main_pid: None,
                    restarts: None,
                    active_since: None,
                    changed: None,
                    exited_at: None,
                    triggers: Vec::new(),
                    next_run: None,
                    last_trigger: None,
                },
            }
        })
        .collect()
}

fn unit_status(unit: &str, props: &[(&str, &str)]) -> UnitStatus {
    let get = |key: &str| {
        props
            .iter()
            .find(|(k, _)| *k == key)
            .map_or("", |(_, v)| v.trim())
    };
    let load = match get("LoadState") {
        "loaded" | "stub" | "merged" => Load::Loaded,
        "not-found" => Load::NotFound,
        "masked" => Load::Masked,
        other => Load::Error(load_error(get("LoadError")).unwrap_or_else(|| other.to_string())),
    };
    let active = get("ActiveState");
    let activity = Activity::from_word(active);
    let status = get("ExecMainStatus").parse::<i64>().ok();
    let main_exit = match (get("ExecMainCode"), status) {
        ("1", Some(s)) => Some(MainExit::Exited(s)),
        ("2" | "3", Some(s)) => Some(MainExit::Signal(s)),
        _ => None,
    };
    let result = Some(get("Result"))
        .filter(|r| !r.is_empty() && *r != "success")
        .map(str::to_string);
    UnitStatus {
        unit: unit.to_string(),
        load,
        activity,
        words: format!("{active}/{}", get("SubState")),
        auto_restart: active == "activating" && get("SubState") == "auto-restart",
        result,
        main_exit,
        main_pid: get("ExecMainPID").parse().ok().filter(|p| *p != 0),
        restarts: get("NRestarts").parse().ok(),
        active_since: parse_stamp(get("ActiveEnterTimestamp")),
        changed: parse_stamp(get("StateChangeTimestamp")),
        exited_at: parse_stamp(get("ExecMainExitTimestamp")),
        triggers: get("Triggers")
            .split_whitespace()
            .map(str::to_string)
            .collect(),
        next_run: parse_stamp(get("NextElapseUSecRealtime")),
        last_trigger: parse_stamp(get("LastTriggerUSec")),
    }
}

/// `org.freedesktop.systemd1.BadUnitSetting "Unit x.service has a bad unit file setting."` → the quoted part.
fn load_error(text: &str) -> Option<String> {
    let (_, rest) = text.split_once('"')?;
    let msg = rest.strip_suffix('"').unwrap_or(rest);
    (!msg.is_empty()).then(|| msg.to_string())
}

/// A systemctl timestamp: `Mon 2026-11-30 12:00:00 UTC` (optionally with
/// microseconds), or `@1700000000`. Empty or `n/a` is `None`; so is any zone
/// but UTC (hal runs systemctl with `TZ=UTC`).
pub(crate) fn parse_stamp(text: &str) -> Option<Stamp> {
    let t = text.trim();
    if let Some(secs) = t.strip_prefix('@') {
        let (whole, frac) = secs.split_once('.').unwrap_or((secs, ""));
        let secs: i64 = whole.parse().ok()?;
        let frac = timefmt::parse(&format!("1970-01-01T00:00:00.{frac}Z")).map_or(0, |s| s.nanos());
        return Some(Stamp::new(secs, frac));
    }
    let words: Vec<&str> = t.split_whitespace().collect();
    let (date, time, zone) = match words.as_slice() {
        [_, date, time, zone] => (date, time, zone),
        [date, time, zone] => (date, time, zone),
        _ => return None,
    };
    if !matches!(*zone, "UTC" | "GMT" | "Z") {
        return None;
    }
    timefmt::parse(&format!("{date}T{time}Z"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHOW: &str = "\
Id=notifier.service
Names=notifier.service
LoadState=loaded
LoadError=
ActiveState=failed
SubState=failed
Result=exit-code
ExecMainPID=4242
ExecMainCode=1
ExecMainStatus=3
NRestarts=2
ActiveEnterTimestamp=Mon 2026-11-30 12:00:00 UTC
StateChangeTimestamp=Mon 2026-11-30 12:00:01.250000 UTC

Id=ghost.service
Names=ghost.service
LoadState=not-found
LoadError=org.freedesktop.systemd1.NoSuchUnit \"Unit ghost.service not found.\"
ActiveState=inactive
SubState=dead
Result=success
ExecMainCode=0
ExecMainStatus=0
NRestarts=0
ActiveEnterTimestamp=
StateChangeTimestamp=

Id=real.service
Names=real.service alias.service
LoadState=loaded
ActiveState=active
SubState=running
Result=success
ExecMainCode=0
ExecMainStatus=0
NRestarts=0
ActiveEnterTimestamp=@1700000000
StateChangeTimestamp=@1700000000

Id=health.timer
Names=health.timer
LoadState=loaded
ActiveState=active
SubState=waiting
Result=success
Triggers=health.service
NextElapseUSecRealtime=Tue 2026-12-01 00:00:00 UTC
LastTriggerUSec=Mon 2026-11-30 00:00:00.5 UTC
ExecMainExitTimestamp=
";

    fn units(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn show_blocks_become_statuses_in_order() {
        let s = parse_show(
            SHOW,
            &units(&["notifier.service", "ghost.service", "alias.service"]),
        );
        assert_eq!(s.len(), 3);
        assert_eq!(s[0].activity, Activity::Failed);
        assert_eq!(s[0].words, "failed/failed");
        assert_eq!(s[0].result.as_deref(), Some("exit-code"));
        assert_eq!(s[0].main_exit, Some(MainExit::Exited(3)));
        assert_eq!(s[0].main_pid, Some(4242));
        assert_eq!(s[0].restarts, Some(2));
        assert_eq!(s[0].active_since.unwrap().rfc3339(), "2026-11-30T12:00:00Z");
        assert_eq!(s[0].changed.unwrap().nanos(), 250_000_000);
        assert_eq!(s[1].load, Load::NotFound);
        assert_eq!(s[1].result, None);
        assert_eq!(s[1].active_since, None);
        assert_eq!(s[2].unit, "alias.service");
        assert_eq!(s[2].activity, Activity::Active);
        assert_eq!(s[2].active_since.unwrap().secs(), 1_700_000_000);
    }

    #[test]
    fn timers_name_their_job_and_runs() {
        let s = parse_show(SHOW, &units(&["health.timer"]));
        assert_eq!(s[0].triggers, ["health.service"]);
        assert_eq!(s[0].next_run.unwrap().rfc3339(), "2026-12-01T00:00:00Z");
        assert_eq!(s[0].last_trigger.unwrap().nanos(), 500_000_000);
        assert_eq!(s[0].exited_at, None);
    }

    #[test]
    fn show_matches_by_name_when_counts_differ() {
        let s = parse_show(SHOW, &units(&["alias.service", "missing.service"]));
        assert_eq!(s[0].words, "active/running");
        assert!(matches!(s[1].load, Load::Error(_)));
    }

    #[test]
    fn load_errors_and_signals() {
        let props = [
            ("LoadState", "bad-setting"),
            (
                "LoadError",
                "org.freedesktop.systemd1.BadUnitSetting \"Unit x.service has a bad unit file setting.\"",
            ),
            ("ActiveState", "inactive"),
            ("ExecMainCode", "2"),
            ("ExecMainStatus", "9"),
        ];
        let s = unit_status("x.service", &props);
        assert_eq!(
            s.load,
            Load::Error("Unit x.service has a bad unit file setting.".into())
        );
        assert_eq!(s.main_exit, Some(MainExit::Signal(9)));
    }

    #[test]
    fn stamps_in_utc_only() {
        assert_eq!(
            parse_stamp("Tue 2024-01-02 03:04:05 UTC")
                .unwrap()
                .rfc3339(),
            "2024-01-02T03:04:05Z"
        );
        assert_eq!(parse_stamp("@1.5").unwrap().nanos(), 500_000_000);
        assert_eq!(parse_stamp(""), None);
        assert_eq!(parse_stamp("n/a"), None);
        assert_eq!(parse_stamp("Tue 2024-01-02 03:04:05 CET"), None);
    }
}
