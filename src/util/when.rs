//! `--since`/`--until` values as journalctl and docker read them: durations back from now, `-1h`, `today`, local dates, RFC 3339, `@UNIX`, and a bare Unix time.

use std::time::Duration;

use jiff::civil::DateTime;

use crate::util::timefmt::{self, Stamp};
use crate::util::tz::{Zone, ZoneError};

/// What `--help` says a WHEN may be.
pub(crate) const FORMS: &str = "a duration back from now (10m, 1h30m, -1h, '5 minutes ago'), now, today, yesterday, \
YYYY-MM-DD[ HH:MM[:SS]] in local time, an RFC 3339 time (2026-11-30T12:00:00Z), or @UNIX; \
a bare number is a Unix time, as docker reads it";

/// Why a WHEN does not read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum WhenError {
    #[error("invalid time {0:?}: expected {FORMS}")]
    Invalid(String),
    /// A local-time form, and the local zone does not read.
    #[error(transparent)]
    Zone(#[from] ZoneError),
}

/// Parses a WHEN relative to `now`; `zone` is asked only for the local-time
/// forms (`today`, `YYYY-MM-DD …`).
pub(crate) fn parse(
    text: &str,
    now: Stamp,
    zone: impl FnOnce() -> Result<Zone, ZoneError>,
) -> Result<Stamp, WhenError> {
    let t = text.trim();
    let bad = || WhenError::Invalid(text.to_string());
    if t.is_empty() {
        return Err(bad());
    }
    if t == "now" {
        return Ok(now);
    }
    if let Some(unix) = t.strip_prefix('@') {
        return unix_time(unix).ok_or_else(bad);
    }
    if t.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        return unix_time(t).ok_or_else(bad);
    }
    let back = |dur: &str| span(dur).map(|d| now.minus(d));
    if let Some(d) = t.strip_prefix('-') {
        return back(d).ok_or_else(bad);
    }
    if let Some(d) = t.strip_prefix('+') {
        return span(d).map(|d| now.plus(d)).ok_or_else(bad);
    }
    if let Some(d) = t.strip_suffix(" ago") {
        return back(d.trim()).ok_or_else(bad);
    }
    if t.as_bytes().first().is_some_and(u8::is_ascii_digit)
        && let Some(s) = back(t)
    {
        return Ok(s);
    }
    if let Some(s) = timefmt::parse(t) {
        return Ok(s);
    }
    let days = match t {
        "today" => Some(0),
        "yesterday" => Some(-1),
        "tomorrow" => Some(1),
        _ => None,
    };
    if let Some(k) = days {
        let zone = zone()?;
        return Ok(zone.instant_of(zone.date(now, k).into()));
    }
    let local = local_time(t).ok_or_else(bad)?;
    Ok(zone()?.instant_of(local))
}

/// A time span as hal's flags write it (`10m`, `1h30m`) or as systemd does
/// (`5 minutes`, `1h 30min`, `2 days`, `-5min`'s `5min`): numbers, each
/// followed by a unit, spaces allowed between them. Kept by hand, not jiff's
/// friendly format: systemd's `M` and `y` are fixed lengths (30.44 and 365.25
/// days), not calendar units, and jiff would take more (`1.5h`, `PT1H`).
fn span(text: &str) -> Option<Duration> {
    let text = text.trim();
    if let Ok(d) = crate::util::duration::parse(text) {
        return Some(d);
    }
    if text.is_empty() {
        return None;
    }
    let mut total: u64 = 0;
    let mut rest = text;
    while !rest.is_empty() {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        let n: u64 = rest[..digits].parse().ok()?;
        let tail = rest[digits..].trim_start();
        let letters = tail.bytes().take_while(u8::is_ascii_alphabetic).count();
        let secs = unit_secs(&tail[..letters])?;
        total = total.checked_add(n.checked_mul(secs)?)?;
        rest = tail[letters..].trim_start();
    }
    // Ten years back is the most any log holds; beyond is a typo.
    (total <= 10 * 366 * 86_400).then(|| Duration::from_secs(total))
}

/// Seconds in one of systemd's time-span units (`systemd.time(7)`), whole seconds and up.
fn unit_secs(unit: &str) -> Option<u64> {
    Some(match unit {
        "s" | "sec" | "secs" | "second" | "seconds" => 1,
        "m" | "min" | "mins" | "minute" | "minutes" => 60,
        "h" | "hr" | "hrs" | "hour" | "hours" => 3_600,
        "d" | "day" | "days" => 86_400,
        "w" | "week" | "weeks" => 7 * 86_400,
        "M" | "month" | "months" => 2_629_800,
        "y" | "year" | "years" => 31_557_600,
        _ => return None,
    })
}

/// `1700000000` or `1700000000.5`.
fn unix_time(text: &str) -> Option<Stamp> {
    let (whole, frac) = text.split_once('.').unwrap_or((text, ""));
    if whole.is_empty() || !whole.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    if !frac.bytes().all(|b| b.is_ascii_digit()) || frac.len() > 9 {
        return None;
    }
    let nanos = if frac.is_empty() {
        0
    } else {
        format!("{frac:0<9}").parse().ok()?
    };
    Some(Stamp::new(whole.parse().ok()?, nanos))
}

/// `YYYY-MM-DD`, `YYYY-MM-DD HH:MM` or `YYYY-MM-DD HH:MM:SS` (a `T` may join
/// them): hal's shape is checked here, jiff reads the date and time.
fn local_time(text: &str) -> Option<DateTime> {
    let (date, time) = match text.split_once([' ', 'T']) {
        Some((d, t)) => (d, t.trim()),
        None => (text, "00:00"),
    };
    let fits = |s: &str, shape: &str| {
        s.len() == shape.len()
            && s.bytes().zip(shape.bytes()).all(|(c, p)| match p {
                b'd' => c.is_ascii_digit(),
                p => c == p,
            })
    };
    let time_fits = fits(time, "dd:dd") || fits(time, "dd:dd:dd");
    if !fits(date, "dddd-dd-dd") || !time_fits {
        return None;
    }
    format!("{date}T{time}").parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now() -> Stamp {
        // 2026-07-15T12:30:00.5Z, a Wednesday.
        Stamp::new(1_784_118_600, 500_000_000)
    }

    fn utc() -> Result<Zone, ZoneError> {
        Ok(Zone::utc())
    }

    fn berlin() -> Result<Zone, ZoneError> {
        Zone::named("CET-1CEST,M3.5.0,M10.5.0/3", std::path::Path::new("/x"))
    }

    fn p(text: &str) -> String {
        parse(text, now(), utc).unwrap().rfc3339()
    }

    #[test]
    fn durations_go_back_from_now() {
        assert_eq!(p("10m"), "2026-07-15T12:20:00Z");
        assert_eq!(p("1h30m"), "2026-07-15T11:00:00Z");
        assert_eq!(p("-1h"), "2026-07-15T11:30:00Z");
        assert_eq!(p("2h ago"), "2026-07-15T10:30:00Z");
        assert_eq!(p("+1h"), "2026-07-15T13:30:00Z");
        assert_eq!(parse("10m", now(), utc).unwrap().nanos(), 500_000_000);
        assert_eq!(p("now"), "2026-07-15T12:30:00Z");
    }

    #[test]
    fn journalctl_spans_are_taken() {
        assert_eq!(p("5 minutes ago"), "2026-07-15T12:25:00Z");
        assert_eq!(p("5 min ago"), "2026-07-15T12:25:00Z");
        assert_eq!(p("5min ago"), "2026-07-15T12:25:00Z");
        assert_eq!(p("-5min"), "2026-07-15T12:25:00Z");
        assert_eq!(p("-5 minutes"), "2026-07-15T12:25:00Z");
        assert_eq!(p("1 hour 30 minutes ago"), "2026-07-15T11:00:00Z");
        assert_eq!(p("1h 30min ago"), "2026-07-15T11:00:00Z");
        assert_eq!(p("2 days ago"), "2026-07-13T12:30:00Z");
        assert_eq!(p("1 week ago"), "2026-07-08T12:30:00Z");
        assert_eq!(p("+1 hour"), "2026-07-15T13:30:00Z");
        assert_eq!(p("30 seconds ago"), "2026-07-15T12:29:30Z");
        for bad in [
            "5 minutes ago ago",
            "minutes ago",
            "5 parsecs ago",
            "5 5 ago",
        ] {
            assert!(parse(bad, now(), utc).is_err(), "{bad}");
        }
    }

    #[test]
    fn bare_numbers_are_unix_times_as_docker_reads_them() {
        assert_eq!(
            parse("1700000000", now(), utc).unwrap().secs(),
            1_700_000_000
        );
        assert_eq!(parse("@42", now(), utc).unwrap().secs(), 42);
        let s = parse("@1.25", now(), utc).unwrap();
        assert_eq!((s.secs(), s.nanos()), (1, 250_000_000));
        assert_eq!(
            parse("1700000000.5", now(), utc).unwrap().nanos(),
            500_000_000
        );
    }

    #[test]
    fn days_and_dates_are_local() {
        assert_eq!(p("today"), "2026-07-15T00:00:00Z");
        assert_eq!(p("yesterday"), "2026-07-14T00:00:00Z");
        assert_eq!(p("tomorrow"), "2026-07-16T00:00:00Z");
        assert_eq!(p("2026-01-01"), "2026-01-01T00:00:00Z");
        assert_eq!(p("2026-01-01 12:00"), "2026-01-01T12:00:00Z");
        assert_eq!(p("2026-01-01 12:00:07"), "2026-01-01T12:00:07Z");
        assert_eq!(p("2026-01-01T12:00:07"), "2026-01-01T12:00:07Z");
        let b = |t: &str| parse(t, now(), berlin).unwrap().rfc3339();
        // Summer in Berlin is UTC+2, winter UTC+1.
        assert_eq!(b("today"), "2026-07-14T22:00:00Z");
        assert_eq!(b("yesterday"), "2026-07-13T22:00:00Z");
        assert_eq!(b("2026-01-01 12:00"), "2026-01-01T11:00:00Z");
        assert_eq!(b("2026-07-01 12:00"), "2026-07-01T10:00:00Z");
        // An explicit offset wins over the local zone.
        assert_eq!(b("2026-07-01T12:00:00Z"), "2026-07-01T12:00:00Z");
        assert_eq!(b("2026-07-01T12:00:00+01:00"), "2026-07-01T11:00:00Z");
    }

    #[test]
    fn the_zone_is_read_only_when_needed() {
        let broken = || Err(ZoneError::NotUnicode);
        assert!(parse("10m", now(), broken).is_ok());
        assert!(parse("@5", now(), broken).is_ok());
        assert_eq!(
            parse("today", now(), broken).unwrap_err(),
            WhenError::Zone(ZoneError::NotUnicode)
        );
    }

    #[test]
    fn garbage_says_what_is_accepted() {
        for bad in [
            "",
            "soon",
            "10x",
            "-",
            "2026-13-01",
            "2026-01-01 25:00",
            "1.2.3",
            "@x",
            "12:00",
            "2026-1-1",
        ] {
            let e = parse(bad, now(), utc).unwrap_err().to_string();
            assert!(e.contains("a bare number is a Unix time"), "{bad}: {e}");
        }
    }
    #[test]
    fn every_documented_word_is_pinned() {
        assert_eq!(p(" 10m "), "2026-07-15T12:20:00Z");
        assert_eq!(p("+5min"), "2026-07-15T12:35:00Z");
        assert_eq!(p("2 weeks ago"), "2026-07-01T12:30:00Z");
        assert_eq!(p("1w ago"), "2026-07-08T12:30:00Z");
        assert_eq!(p("1M ago"), "2026-06-15T02:00:00Z");
        assert_eq!(p("1 month ago"), "2026-06-15T02:00:00Z");
        assert_eq!(p("1y ago"), "2025-07-15T06:30:00Z");
        assert_eq!(p("2 years ago"), "2024-07-15T00:30:00Z");
        assert_eq!(p("90s ago"), "2026-07-15T12:28:30Z");
        assert_eq!(p("250ms ago"), "2026-07-15T12:30:00Z");
        assert_eq!(p("1d"), "2026-07-14T12:30:00Z");
        assert_eq!(p("2026-01-01T12:00"), "2026-01-01T12:00:00Z");
        assert_eq!(p("2026-07-15T12:00:00+02:00"), "2026-07-15T10:00:00Z");
        let n = |t: &str| parse(t, now(), utc).unwrap().rfc3339_nanos();
        assert_eq!(n("1700000000.123456789"), "2023-11-14T22:13:20.123456789Z");
        assert_eq!(n("250ms ago"), "2026-07-15T12:30:00.250000000Z");
        assert_eq!(n("today"), "2026-07-15T00:00:00.000000000Z");
        assert_eq!(n("2026-01-01"), "2026-01-01T00:00:00.000000000Z");
        let east = || Ok(Zone::fixed(5 * 3600 + 1800));
        let e = |t: &str| parse(t, now(), east).unwrap().rfc3339();
        assert_eq!(e("today"), "2026-07-14T18:30:00Z");
        assert_eq!(e("tomorrow"), "2026-07-15T18:30:00Z");
        assert_eq!(e("2026-07-15 23:59:59"), "2026-07-15T18:29:59Z");
        let west = || Ok(Zone::fixed(-10 * 3600));
        assert_eq!(
            parse("today", now(), west).unwrap().rfc3339(),
            "2026-07-15T10:00:00Z"
        );
        for bad in [
            "@1.1234567891",
            "1.2.3",
            "2026-01-01 12",
            "2026-01-01 12:00:00:00",
            "2026-01-01 1:00",
            "-2026-01-01",
            "today ago",
            "1 fortnight ago",
            "11y",
            // A date that does not exist (read as days past the month's end before jiff).
            "2026-02-30",
            "2026-04-31 12:00",
        ] {
            let e = parse(bad, now(), utc).unwrap_err().to_string();
            assert!(e.contains("a bare number is a Unix time"), "{bad}: {e}");
        }
    }
}
