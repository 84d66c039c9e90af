//! The zone rules checked: POSIX `TZ` rules, the system database when present, and errors that name the zone.

use super::*;
use crate::util::timefmt::parse;

fn at(s: &str) -> i64 {
    parse(s).unwrap().secs()
}

const BERLIN: &str = "CET-1CEST,M3.5.0,M10.5.0/3";

#[test]
fn posix_rules() {
    let z = Zone::named(BERLIN, Path::new("/nonexistent")).unwrap();
    assert_eq!(z.offset_at(at("2026-01-15T12:00:00Z")), 3600);
    assert_eq!(z.offset_at(at("2026-07-15T12:00:00Z")), 7200);
    // 2026-03-29 01:00 UTC is when Berlin moves to summer time.
    assert_eq!(z.offset_at(at("2026-03-29T00:59:59Z")), 3600);
    assert_eq!(z.offset_at(at("2026-03-29T01:00:00Z")), 7200);
    // 2026-10-25 01:00 UTC, back to winter time.
    assert_eq!(z.offset_at(at("2026-10-25T00:59:59Z")), 7200);
    assert_eq!(z.offset_at(at("2026-10-25T01:00:00Z")), 3600);
    let south = Zone::named("AEST-10AEDT,M10.1.0,M4.1.0/3", Path::new("/x")).unwrap();
    assert_eq!(south.offset_at(at("2026-01-15T00:00:00Z")), 11 * 3600);
    assert_eq!(south.offset_at(at("2026-07-15T00:00:00Z")), 10 * 3600);
    assert_eq!(
        Zone::named("<+0530>-5:30", Path::new("/x"))
            .unwrap()
            .offset_at(0),
        19_800
    );
    assert_eq!(
        Zone::named("EST5", Path::new("/x")).unwrap().offset_at(0),
        -18_000
    );
    for bad in ["Nowhere/City", "CET-1CEST", "X1", "CET-1CEST,J60,J300"] {
        assert!(Zone::named(bad, Path::new("/x")).is_err(), "{bad}");
    }
    for utc in ["", ":UTC", "UTC", "UTC0"] {
        assert_eq!(Zone::named(utc, Path::new("/x")).unwrap(), Zone::utc());
    }
}

#[test]
fn local_times_become_instants() {
    let z = Zone::named(BERLIN, Path::new("/x")).unwrap();
    let wall = |s: &str| s.parse::<DateTime>().unwrap();
    let utc = |w: &str| z.instant_of(wall(w)).secs();
    assert_eq!(utc("2026-07-15T14:00:00"), at("2026-07-15T12:00:00Z"));
    assert_eq!(utc("2026-01-15T13:00:00"), at("2026-01-15T12:00:00Z"));
    assert_eq!(
        z.wall(Stamp::from_secs(at("2026-01-15T12:00:00Z"))),
        wall("2026-01-15T13:00:00")
    );
    assert_eq!(
        Zone::fixed(-3600)
            .instant_of(wall("1970-01-01T00:00:00"))
            .secs(),
        3600
    );
}

#[test]
fn the_system_database_reads_if_present() {
    let dir = Path::new("/usr/share/zoneinfo");
    if let Ok(z) = Zone::named("Europe/Berlin", dir) {
        assert_eq!(z.offset_at(at("2026-07-15T12:00:00Z")), 7200);
        assert_eq!(z.offset_at(at("2026-01-15T12:00:00Z")), 3600);
    }
    if let Ok(z) = Zone::named("Etc/UTC", dir) {
        assert_eq!(z.offset_at(at("2026-07-15T12:00:00Z")), 0);
    }
}

#[test]
fn errors_name_the_zone() {
    let dir = Path::new("/x");
    for bad in ["CET-1CEST", "1"] {
        let e = Zone::named(bad, dir).unwrap_err().to_string();
        assert!(
            e.starts_with(&format!("TZ={bad:?}: no such zone file in /x")),
            "{e}"
        );
    }
}
