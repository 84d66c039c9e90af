//! RFC 3339 timestamps as Docker and journald give them, parsed and printed without a date library.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// A point in time: seconds and nanoseconds since the Unix epoch (UTC).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Stamp {
    pub secs: i64,
    pub nanos: u32,
}

impl Stamp {
    pub fn now() -> Stamp {
        Stamp::from_system(SystemTime::now())
    }

    pub fn from_system(t: SystemTime) -> Stamp {
        match t.duration_since(UNIX_EPOCH) {
            Ok(d) => Stamp {
                secs: i64::try_from(d.as_secs()).unwrap_or(i64::MAX),
                nanos: d.subsec_nanos(),
            },
            Err(_) => Stamp::default(),
        }
    }

    pub fn from_micros(us: i64) -> Stamp {
        Stamp {
            secs: us.div_euclid(1_000_000),
            nanos: u32::try_from(us.rem_euclid(1_000_000) * 1000).unwrap_or(0),
        }
    }

    pub fn plus(self, d: Duration) -> Stamp {
        let total = u128::from(self.nanos) + u128::from(d.subsec_nanos());
        Stamp {
            secs: self
                .secs
                .saturating_add(i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
                .saturating_add(i64::try_from(total / 1_000_000_000).unwrap_or(0)),
            nanos: u32::try_from(total % 1_000_000_000).unwrap_or(0),
        }
    }

    /// How long after `earlier` this is (zero if before).
    pub fn since(self, earlier: Stamp) -> Duration {
        let a = i128::from(self.secs) * 1_000_000_000 + i128::from(self.nanos);
        let b = i128::from(earlier.secs) * 1_000_000_000 + i128::from(earlier.nanos);
        let d = (a - b).max(0);
        Duration::from_nanos(u64::try_from(d).unwrap_or(u64::MAX))
    }

    /// `2026-11-30T12:03:11Z` (seconds precision).
    pub fn rfc3339(self) -> String {
        let days = self.secs.div_euclid(86_400);
        let rem = self.secs.rem_euclid(86_400);
        let (y, m, d) = civil_from_days(days);
        format!(
            "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
            rem / 3600,
            (rem % 3600) / 60,
            rem % 60
        )
    }

    /// `2026-11-30T12:03:11.123456789Z` (nanosecond precision, as Docker prints).
    pub fn rfc3339_nanos(self) -> String {
        let base = self.rfc3339();
        format!("{}.{:09}Z", &base[..base.len() - 1], self.nanos)
    }

    /// `2026-11-30T12:03:11.1234Z`, as Go (and so Docker) prints a time: the
    /// fraction without its trailing zeros, none when the second is whole.
    pub fn rfc3339_trimmed(self) -> String {
        let base = self.rfc3339();
        if self.nanos == 0 {
            return base;
        }
        let frac = format!("{:09}", self.nanos);
        format!(
            "{}.{}Z",
            &base[..base.len() - 1],
            frac.trim_end_matches('0')
        )
    }

    /// The same time without its fraction of a second.
    pub fn whole_second(self) -> Stamp {
        Stamp { nanos: 0, ..self }
    }

    /// `12:03:11` in UTC, for short human messages.
    pub fn clock(self) -> String {
        let rem = self.secs.rem_euclid(86_400);
        format!("{:02}:{:02}:{:02}", rem / 3600, (rem % 3600) / 60, rem % 60)
    }
}

/// An engine's time: `None` for Go's zero time (`0001-01-01…`, the engine's
/// "never") or one that does not read.
pub fn parse_set(text: &str) -> Option<Stamp> {
    if text.starts_with("0001-") {
        return None;
    }
    parse(text)
}

/// Parses `YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM)`.
pub fn parse(text: &str) -> Option<Stamp> {
    let b = text.as_bytes();
    if b.len() < 20 {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let s = text.get(r)?;
        if !s.bytes().all(|c| c.is_ascii_digit()) {
            return None;
        }
        s.parse().ok()
    };
    if b[4] != b'-'
        || b[7] != b'-'
        || !(b[10] == b'T' || b[10] == b' ')
        || b[13] != b':'
        || b[16] != b':'
    {
        return None;
    }
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, s) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || s > 60 {
        return None;
    }
    let mut i = 19;
    let mut nanos: u32 = 0;
    if b.get(i) == Some(&b'.') {
        i += 1;
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        let frac = &text[start..i];
        if frac.is_empty() {
            return None;
        }
        let mut n: u32 = 0;
        for (k, c) in frac.bytes().take(9).enumerate() {
            n += u32::from(c - b'0') * 10u32.pow(8 - k as u32);
        }
        nanos = n;
    }
    let offset = match b.get(i)? {
        b'Z' | b'z' if i + 1 == b.len() => 0,
        sign @ (b'+' | b'-') if i + 6 == b.len() && b[i + 3] == b':' => {
            let oh = num(i + 1..i + 3)?;
            let om = num(i + 4..i + 6)?;
            let o = oh * 3600 + om * 60;
            if *sign == b'+' { o } else { -o }
        }
        _ => return None,
    };
    let secs = days_from_civil(y, mo, d) * 86_400 + h * 3600 + mi * 60 + s - offset;
    Some(Stamp { secs, nanos })
}

/// Days since 1970-01-01 for a proleptic Gregorian date (Howard Hinnant's algorithm).
pub fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The (year, month, day) of a day counted from 1970-01-01.
pub fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_docker_nanos_with_trimmed_zeros() {
        let a = parse("2024-01-01T00:00:00.12345Z").unwrap();
        let b = parse("2024-01-01T00:00:00.123456789Z").unwrap();
        assert!(a < b);
        assert_eq!(a.nanos, 123_450_000);
        assert_eq!(a.secs, 1_704_067_200);
    }

    #[test]
    fn offsets_and_round_trip() {
        let a = parse("2026-11-30T13:03:11+01:00").unwrap();
        assert_eq!(a.rfc3339(), "2026-11-30T12:03:11Z");
        assert_eq!(parse(&a.rfc3339_nanos()).unwrap(), a);
        assert_eq!(
            Stamp { secs: 0, nanos: 0 }.rfc3339(),
            "1970-01-01T00:00:00Z"
        );
        assert_eq!(
            parse("2000-02-29T00:00:00Z").unwrap().rfc3339(),
            "2000-02-29T00:00:00Z"
        );
    }

    #[test]
    fn trimmed_as_docker_prints() {
        for text in [
            "2024-01-01T00:00:00.12345Z",
            "2024-01-01T00:00:00.123456789Z",
            "2024-01-01T00:00:00Z",
            "2024-01-01T00:00:00.1Z",
        ] {
            assert_eq!(parse(text).unwrap().rfc3339_trimmed(), text);
        }
        let t = parse("2024-01-01T00:00:00.5Z").unwrap();
        assert_eq!(t.whole_second().rfc3339_trimmed(), "2024-01-01T00:00:00Z");
    }

    #[test]
    fn rejects_garbage() {
        for bad in [
            "",
            "2024-01-01",
            "2024-13-01T00:00:00Z",
            "2024-01-01T00:00:00",
            "abcd-ef-ghTij:kl:mnZ",
            "2024-01-01T00:00:00.Z",
        ] {
            assert!(parse(bad).is_none(), "{bad}");
        }
    }
    #[test]
    fn the_accepted_shape_is_pinned() {
        let same = |a: &str, b: &str| assert_eq!(parse(a).unwrap(), parse(b).unwrap(), "{a}");
        same("2024-01-01 00:00:00z", "2024-01-01T00:00:00Z");
        same("2026-11-30T11:03:11-01:00", "2026-11-30T12:03:11Z");
        same(
            "2024-01-01T00:00:00.1234567891Z",
            "2024-01-01T00:00:00.123456789Z",
        );
        same("2024-02-29T23:59:59+00:00", "2024-02-29T23:59:59Z");
        for bad in [
            "2024-01-01T00:00Z",
            "2024-01-01T00:00:00+0100",
            "2024-01-01T00:00:00+01",
            "2024-01-01T00:00:00Z[UTC]",
            "+002024-01-01T00:00:00Z",
            "2024-01-01T00:00:00 Z",
            "2024-01-01t00:00:00Z",
            "2024-01-01T24:00:00Z",
            "2024-01-01T00:00:00.5",
            " 2024-01-01T00:00:00Z",
        ] {
            assert!(parse(bad).is_none(), "{bad}");
        }
        assert!(parse_set("0001-01-01T00:00:00Z").is_none());
        assert!(parse_set("2024-01-01T00:00:00Z").is_some());
    }

    #[test]
    fn printed_shapes_and_arithmetic_are_pinned() {
        let t = parse("2026-11-30T12:03:11.9Z").unwrap();
        assert_eq!(t.rfc3339(), "2026-11-30T12:03:11Z");
        assert_eq!(t.rfc3339_nanos(), "2026-11-30T12:03:11.900000000Z");
        assert_eq!(t.rfc3339_trimmed(), "2026-11-30T12:03:11.9Z");
        assert_eq!(t.clock(), "12:03:11");
        let later = t.plus(Duration::from_millis(1200));
        assert_eq!(later.rfc3339_nanos(), "2026-11-30T12:03:13.100000000Z");
        assert_eq!(later.since(t), Duration::from_millis(1200));
        assert_eq!(t.since(later), Duration::ZERO);
        assert_eq!(Stamp::default().rfc3339(), "1970-01-01T00:00:00Z");
        assert_eq!(
            Stamp::from_micros(-1).rfc3339_nanos(),
            "1969-12-31T23:59:59.999999000Z"
        );
        let sys = std::time::UNIX_EPOCH + Duration::new(1_700_000_000, 5);
        assert_eq!(
            Stamp::from_system(sys).rfc3339_nanos(),
            "2023-11-14T22:13:20.000000005Z"
        );
        let before = std::time::UNIX_EPOCH - Duration::from_secs(5);
        assert_eq!(Stamp::from_system(before), Stamp::default());
    }
}
