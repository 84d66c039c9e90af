//! When auto_update's slots fall: the next day, a slot just passed, a weekday, the clock changes of a zone with summer time, and the grammar's errors.

use std::path::Path;

use super::*;

const BERLIN: &str = "CET-1CEST,M3.5.0,M10.5.0/3";
const DAY: i64 = 86_400;

/// Unix seconds of a UTC date and time.
fn utc(y: i64, mo: i64, d: i64, h: i64, mi: i64, s: i64) -> i64 {
    let text = format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}Z");
    crate::util::timefmt::parse(&text).map_or(0, |t| t.secs())
}

fn berlin() -> Zone {
    Zone::named(BERLIN, Path::new("/nonexistent")).unwrap()
}

fn s(text: &str) -> Schedule {
    Schedule::parse(text).unwrap()
}

/// `next_after` in Unix seconds, as the slots below are pinned.
fn next(s: &Schedule, after: i64, zone: &Zone) -> Option<i64> {
    s.next_after(Stamp::from_secs(after), zone).map(Stamp::secs)
}

#[test]
fn daily_is_today_until_the_slot_then_tomorrow() {
    let z = Zone::utc();
    let daily = s("daily 04:00");
    let slot = utc(2026, 12, 3, 4, 0, 0);
    assert_eq!(next(&daily, slot - 1, &z), Some(slot));
    // A slot just passed (or that is now) is not due again: the next is tomorrow's.
    assert_eq!(next(&daily, slot, &z), Some(slot + DAY));
    assert_eq!(next(&daily, slot + 1, &z), Some(slot + DAY));
    // Late in the day: tomorrow, across a month's and a year's end.
    let eve = utc(2026, 12, 31, 23, 59, 0);
    assert_eq!(next(&daily, eve, &z), Some(utc(2027, 1, 1, 4, 0, 0)));
}

#[test]
fn daily_is_read_in_the_local_zone() {
    let z = berlin();
    // Winter (CET, UTC+1): 04:00 is 03:00 UTC; summer (CEST, UTC+2): 02:00 UTC.
    let daily = s("daily 04:00");
    let winter = utc(2026, 12, 3, 2, 0, 0);
    assert_eq!(next(&daily, winter, &z), Some(utc(2026, 12, 3, 3, 0, 0)));
    // 03:30 UTC is 04:30 local: today's slot has passed.
    let past = utc(2026, 12, 3, 3, 30, 0);
    assert_eq!(next(&daily, past, &z), Some(utc(2026, 12, 4, 3, 0, 0)));
    let summer = utc(2026, 7, 1, 0, 0, 0);
    assert_eq!(next(&daily, summer, &z), Some(utc(2026, 7, 1, 2, 0, 0)));
    // 23:30 UTC on Dec 3 is already Dec 4 in Berlin: its slot is Dec 4's.
    let late = utc(2026, 12, 3, 23, 30, 0);
    assert_eq!(next(&daily, late, &z), Some(utc(2026, 12, 4, 3, 0, 0)));
}

#[test]
fn a_slot_across_a_clock_change() {
    let z = berlin();
    // 2026-03-29: clocks go 02:00 CET → 03:00 CEST (01:00 UTC). 04:00 CEST is 02:00 UTC.
    let daily = s("daily 04:00");
    let before = utc(2026, 3, 28, 12, 0, 0);
    assert_eq!(next(&daily, before, &z), Some(utc(2026, 3, 29, 2, 0, 0)));
    // The day before, 04:00 CET was 03:00 UTC: the day of the change is an hour shorter.
    assert_eq!(
        next(&daily, utc(2026, 3, 27, 12, 0, 0), &z),
        Some(utc(2026, 3, 28, 3, 0, 0))
    );
    // 02:30 does not happen that night: it runs once, at 02:30 read with the
    // summer offset (00:30 UTC), and the next night at 02:30 CEST.
    let gap = s("daily 02:30");
    let first = next(&gap, before, &z).unwrap();
    assert_eq!(first, utc(2026, 3, 29, 0, 30, 0));
    assert_eq!(next(&gap, first, &z), Some(utc(2026, 3, 30, 0, 30, 0)));
    // 2026-10-25: clocks go 03:00 CEST → 02:00 CET (01:00 UTC); 02:30 happens twice, it runs once.
    let eve = utc(2026, 10, 24, 12, 0, 0);
    let once = next(&gap, eve, &z).unwrap();
    assert_eq!(once, utc(2026, 10, 25, 1, 30, 0));
    assert_eq!(next(&gap, once, &z), Some(utc(2026, 10, 26, 1, 30, 0)));
}

#[test]
fn weekly_finds_its_weekday() {
    let z = Zone::utc();
    // 2026-12-03 is a Thursday; the next Sunday is the 6th.
    let weekly = s("weekly sun 04:00");
    let thu = utc(2026, 12, 3, 12, 0, 0);
    let sun = utc(2026, 12, 6, 4, 0, 0);
    assert_eq!(next(&weekly, thu, &z), Some(sun));
    assert_eq!(next(&weekly, sun, &z), Some(sun + 7 * DAY));
    // Its own weekday, before the time: today.
    let thursday = s("weekly Thursday 13:00");
    assert_eq!(next(&thursday, thu, &z), Some(thu + 3600));
}

#[test]
fn every_falls_on_multiples_since_the_epoch() {
    let z = berlin();
    let every = s("every 30s");
    assert_eq!(next(&every, 100, &z), Some(120));
    assert_eq!(next(&every, 120, &z), Some(150));
    let six = s("every 6h");
    let t = utc(2026, 12, 3, 5, 0, 0);
    assert_eq!(next(&six, t, &z), Some(utc(2026, 12, 3, 6, 0, 0)));
    assert_eq!(next(&s("off"), t, &z), None);
}

#[test]
fn a_slot_is_a_whole_second_whatever_the_fraction_of_now() {
    let z = berlin();
    let at = |secs, nanos| Some(Stamp::new(secs, nanos));
    let every = s("every 30s");
    assert_eq!(
        every.next_after(Stamp::new(119, 999_999_999), &z),
        at(120, 0)
    );
    assert_eq!(every.next_after(Stamp::new(120, 1), &z), at(150, 0));
    let daily = s("daily 04:00");
    let slot = utc(2026, 12, 3, 3, 0, 0);
    let just_before = Stamp::new(slot - 1, 500_000_000);
    assert_eq!(daily.next_after(just_before, &z), at(slot, 0));
    let just_after = Stamp::new(slot, 500_000_000);
    assert_eq!(daily.next_after(just_after, &z), at(slot + DAY, 0));
}

#[test]
fn the_grammar_and_its_errors() {
    assert_eq!(s("daily 04:00"), Schedule::Daily { minute: 240 });
    assert_eq!(s(" Daily  4:05 "), Schedule::Daily { minute: 245 });
    assert_eq!(
        s("weekly SUN 23:59"),
        Schedule::Weekly {
            weekday: 6,
            minute: 23 * 60 + 59
        }
    );
    for text in [
        "off",
        "daily 04:00",
        "weekly sun 04:00",
        "every 6h",
        "every 30s",
    ] {
        assert_eq!(s(text).to_string(), text);
    }
    for (bad, says) in [
        ("daily 4", "not a time of day"),
        ("daily 24:00", "not a time of day"),
        ("daily 04:60", "not a time of day"),
        ("daily 04:5", "not a time of day"),
        ("weekly funday 04:00", "not a day of the week"),
        ("weekly sun", "not a schedule"),
        ("every 0s", "at least 1s"),
        ("every soon", "invalid duration"),
        ("hourly", "not a schedule"),
        ("", "not a schedule"),
    ] {
        let e = Schedule::parse(bad).unwrap_err().to_string();
        assert!(e.contains(says), "{bad:?}: {e}");
    }
}
