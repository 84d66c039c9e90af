//! hal's one time type in memory, `Stamp` (an instant, on `jiff::Timestamp`), and RFC 3339 as Docker and journald give it.

use std::time::{Duration, SystemTime};

use jiff::Timestamp;

/// A point in time (UTC), to the nanosecond.
///
/// A thin wrapper on `jiff::Timestamp` rather than the type itself: it keeps
/// hal's arithmetic (saturating, with `std::time::Duration` as the one span
/// type), hal's printed shapes (`rfc3339`, Go's trimmed fraction, `clock`) and
/// leaves how a time is stored to the `serde(with = …)` helpers in
/// `util::stored`, so no jiff shape reaches a file or a JSON document by accident.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Stamp(Timestamp);

impl Stamp {
    /// The Unix epoch, 1970-01-01T00:00:00Z.
    pub const EPOCH: Stamp = Stamp(Timestamp::UNIX_EPOCH);

    pub fn now() -> Stamp {
        Stamp::from_system(SystemTime::now())
    }

    /// A system time; one before the epoch reads as the epoch.
    pub fn from_system(t: SystemTime) -> Stamp {
        match t.duration_since(SystemTime::UNIX_EPOCH) {
            Ok(d) => Stamp::EPOCH.plus(d),
            Err(_) => Stamp::EPOCH,
        }
    }

    /// Whole Unix seconds (clamped to the years jiff holds, -9999 to 9999).
    pub fn from_secs(secs: i64) -> Stamp {
        Stamp::new(secs, 0)
    }

    /// Unix seconds and nanoseconds past them.
    pub fn new(secs: i64, nanos: u32) -> Stamp {
        let s = secs.clamp(Timestamp::MIN.as_second(), Timestamp::MAX.as_second());
        Stamp(
            Timestamp::new(s, i32::try_from(nanos.min(999_999_999)).unwrap_or(0))
                .unwrap_or(Timestamp::MAX),
        )
    }

    pub fn from_micros(us: i64) -> Stamp {
        Stamp::new(
            us.div_euclid(1_000_000),
            u32::try_from(us.rem_euclid(1_000_000) * 1000).unwrap_or(0),
        )
    }

    /// Unix milliseconds.
    pub fn from_millis(ms: i64) -> Stamp {
        Stamp::from_micros(ms.saturating_mul(1000))
    }

    /// The jiff instant, for civil and zone arithmetic.
    pub fn instant(self) -> Timestamp {
        self.0
    }

    pub fn from_instant(t: Timestamp) -> Stamp {
        Stamp(t)
    }

    /// Whole Unix seconds (rounded down).
    pub fn secs(self) -> i64 {
        self.0.as_second() - i64::from(self.0.subsec_nanosecond() < 0)
    }

    /// Nanoseconds past [`Stamp::secs`].
    pub fn nanos(self) -> u32 {
        u32::try_from(self.0.subsec_nanosecond().rem_euclid(1_000_000_000)).unwrap_or(0)
    }

    /// Unix milliseconds (rounded down).
    pub fn millis(self) -> i64 {
        self.secs().saturating_mul(1000) + i64::from(self.nanos() / 1_000_000)
    }

    /// The same time to the millisecond (rounded down), as the state file keeps it.
    pub fn whole_milli(self) -> Stamp {
        Stamp::from_millis(self.millis())
    }

    /// `d` later (saturating).
    pub fn plus(self, d: Duration) -> Stamp {
        Stamp(self.0.saturating_add(d).unwrap_or(Timestamp::MAX))
    }

    /// `d` earlier, never before the epoch.
    pub fn minus(self, d: Duration) -> Stamp {
        Stamp(self.0.saturating_sub(d).unwrap_or(Timestamp::MIN)).max(Stamp::EPOCH)
    }

    /// How long after `earlier` this is (zero if before).
    pub fn since(self, earlier: Stamp) -> Duration {
        Duration::try_from(self.0.duration_since(earlier.0)).unwrap_or(Duration::ZERO)
    }

    /// `2026-11-30T12:03:11Z` (seconds precision).
    pub fn rfc3339(self) -> String {
        format!("{:.0}", self.whole_second().0)
    }

    /// `2026-11-30T12:03:11.123456789Z` (nanosecond precision, as Docker prints).
    pub fn rfc3339_nanos(self) -> String {
        format!("{:.9}", self.0)
    }

    /// `2026-11-30T12:03:11.1234Z`, as Go (and so Docker) prints a time: the
    /// fraction without its trailing zeros, none when the second is whole.
    pub fn rfc3339_trimmed(self) -> String {
        self.0.to_string()
    }

    /// The same time without its fraction of a second.
    pub fn whole_second(self) -> Stamp {
        Stamp::from_secs(self.secs())
    }

    /// `12:03:11` in UTC, for short human messages.
    pub fn clock(self) -> String {
        self.0.strftime("%H:%M:%S").to_string()
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

/// Parses `YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM)` (a space may stand for the
/// `T`). hal's shape is checked here; jiff reads the value.
pub fn parse(text: &str) -> Option<Stamp> {
    let b = text.as_bytes();
    let digits =
        |r: std::ops::Range<usize>| b.get(r).is_some_and(|s| s.iter().all(u8::is_ascii_digit));
    let shaped = b.len() >= 20
        && [(4, b'-'), (7, b'-'), (13, b':'), (16, b':')]
            .iter()
            .all(|&(i, c)| b[i] == c)
        && matches!(b[10], b'T' | b' ')
        && [0..4, 5..7, 8..10, 11..13, 14..16, 17..19]
            .into_iter()
            .all(digits);
    if !shaped {
        return None;
    }
    let frac = if b[19] == b'.' {
        let n = b[20..].iter().take_while(|c| c.is_ascii_digit()).count();
        if n == 0 {
            return None;
        }
        n + 1
    } else {
        0
    };
    let zone = 19 + frac;
    let zoned = match &b[zone..] {
        [b'Z' | b'z'] => true,
        [b'+' | b'-', _, _, b':', _, _] => digits(zone + 1..zone + 3) && digits(zone + 4..zone + 6),
        _ => false,
    };
    if !zoned {
        return None;
    }
    // jiff reads at most nine digits of a fraction; hal drops the rest.
    let text = match frac {
        0..=10 => std::borrow::Cow::Borrowed(text),
        _ => format!("{}{}", &text[..29], &text[zone..]).into(),
    };
    text.parse::<Timestamp>().ok().map(Stamp)
}

#[cfg(test)]
mod tests;
