//! The zone rules checked: POSIX `TZ` rules, TZif files built here (transitions, then the footer rule), and the system database when present.

use super::*;
use crate::util::timefmt::parse;

fn at(s: &str) -> i64 {
    parse(s).unwrap().secs
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
    assert_eq!(
        z.to_utc(at("2026-07-15T14:00:00Z")),
        at("2026-07-15T12:00:00Z")
    );
    assert_eq!(
        z.to_utc(at("2026-01-15T13:00:00Z")),
        at("2026-01-15T12:00:00Z")
    );
    assert_eq!(
        z.to_local(at("2026-01-15T12:00:00Z")),
        at("2026-01-15T13:00:00Z")
    );
    assert_eq!(Zone::fixed(-3600).to_utc(0), 3600);
}

/// A TZif v2 file: two transitions, three types, and `footer` after the data.
fn tzif(footer: &str) -> Vec<u8> {
    let types: [(i32, u8); 3] = [(3600, 0), (7200, 1), (3600, 0)];
    let times: [i64; 2] = [at("2000-03-26T01:00:00Z"), at("2000-10-29T01:00:00Z")];
    let block = |wide: bool| {
        let mut b = b"TZif2".to_vec();
        b.extend([0u8; 15]);
        for n in [0u32, 0, 0, times.len() as u32, types.len() as u32, 4] {
            b.extend(n.to_be_bytes());
        }
        for t in times {
            if wide {
                b.extend(t.to_be_bytes());
            } else {
                b.extend((t as i32).to_be_bytes());
            }
        }
        b.extend([1u8, 2]);
        for (off, dst) in types {
            b.extend(off.to_be_bytes());
            b.extend([dst, 0]);
        }
        b.extend(b"CET\0");
        b
    };
    let mut all = block(false);
    all.extend(block(true));
    all.extend(format!("\n{footer}\n").bytes());
    all
}

#[test]
fn tzif_transitions_then_the_footer() {
    let z = Zone::from_tzif(&tzif(BERLIN)).unwrap();
    assert_eq!(z.offset_at(at("1999-01-01T00:00:00Z")), 3600);
    assert_eq!(z.offset_at(at("2000-06-01T00:00:00Z")), 7200);
    assert_eq!(z.offset_at(at("2026-07-15T12:00:00Z")), 7200);
    assert_eq!(z.offset_at(at("2026-12-15T12:00:00Z")), 3600);
    let plain = Zone::from_tzif(&tzif("")).unwrap();
    assert_eq!(plain.offset_at(at("2026-07-15T12:00:00Z")), 3600);
    assert!(Zone::from_tzif(b"TZif").is_err());
    assert!(Zone::from_tzif(&tzif(BERLIN)[..60]).is_err());
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
fn errors_say_what_is_wrong() {
    let dir = Path::new("/x");
    assert_eq!(
        Zone::named("CET-1CEST", dir).unwrap_err(),
        "TZ=\"CET-1CEST\": no such zone file in /x, and \"CET-1CEST\": a daylight-saving zone needs its rules (,Mm.w.d,Mm.w.d)"
    );
    assert_eq!(
        Zone::named("1", dir).unwrap_err(),
        "TZ=\"1\": no such zone file in /x, and \"1\" is not a time zone rule"
    );
    assert_eq!(Zone::from_tzif(b"TZif"), Err(ZoneError::TooShort));
    assert_eq!(Zone::from_tzif(&[b'x'; 44]), Err(ZoneError::NotTzif));
    // A version 1 header that promises one transition, and no data.
    let mut cut = b"TZif".to_vec();
    cut.resize(44, 0);
    cut[35] = 1;
    assert_eq!(
        Zone::from_tzif(&cut).unwrap_err().to_string(),
        "TZif file is cut short"
    );
}
