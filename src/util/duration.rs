//! Human durations ("120s", "5m", "1h30m", "500ms") for the config and flags.

use std::time::Duration;

/// Why a text is not a duration; each says what is wrong with the text as written.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DurationError {
    #[error("empty duration")]
    Empty,
    #[error("invalid duration {0:?}: expected a number followed by ms, s, m, h or d")]
    NoNumber(String),
    #[error("invalid duration {text:?}: a unit (ms, s, m, h, d) must follow {number}")]
    NoUnit { text: String, number: String },
    #[error("invalid duration {text:?}: unknown unit {unit:?} (use ms, s, m, h or d)")]
    UnknownUnit { text: String, unit: String },
    #[error("duration {0:?} is too large")]
    TooLarge(String),
}

/// Parses `120`, `120s`, `5m`, `1h30m`, `250ms`, `2d`. A bare number is seconds.
pub fn parse(text: &str) -> Result<Duration, DurationError> {
    let too_large = || DurationError::TooLarge(text.to_string());
    let s = text.trim();
    if s.is_empty() {
        return Err(DurationError::Empty);
    }
    if s.bytes().all(|b| b.is_ascii_digit()) {
        return s
            .parse::<u64>()
            .map(Duration::from_secs)
            .map_err(|_| too_large());
    }
    let mut total: u128 = 0;
    let mut rest = s;
    while !rest.is_empty() {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return Err(DurationError::NoNumber(text.to_string()));
        }
        let (num, tail) = rest.split_at(digits);
        let unit_len = tail.bytes().take_while(u8::is_ascii_alphabetic).count();
        let (unit, tail) = tail.split_at(unit_len);
        let n: u128 = num.parse().map_err(|_| too_large())?;
        let millis_per: u128 = match unit {
            "ms" => 1,
            "s" | "sec" | "secs" => 1_000,
            "m" | "min" | "mins" => 60_000,
            "h" | "hr" | "hrs" => 3_600_000,
            "d" => 86_400_000,
            "" => {
                return Err(DurationError::NoUnit {
                    text: text.to_string(),
                    number: num.to_string(),
                });
            }
            other => {
                return Err(DurationError::UnknownUnit {
                    text: text.to_string(),
                    unit: other.to_string(),
                });
            }
        };
        total = n
            .checked_mul(millis_per)
            .and_then(|v| total.checked_add(v))
            .ok_or_else(too_large)?;
        rest = tail;
    }
    // Ten years is plenty for any timeout or window; beyond that is a typo.
    if total > 10 * 365 * 86_400_000 {
        return Err(too_large());
    }
    u64::try_from(total)
        .map(Duration::from_millis)
        .map_err(|_| too_large())
}

/// Renders a duration compactly: `120s`, `5m`, `1h30m`, `250ms`.
pub fn format(d: Duration) -> String {
    let ms = d.as_millis();
    if ms == 0 {
        return "0s".into();
    }
    if !ms.is_multiple_of(1000) {
        return format!("{ms}ms");
    }
    let mut secs = ms / 1000;
    let mut out = String::new();
    for (unit, size) in [("d", 86_400), ("h", 3_600), ("m", 60), ("s", 1)] {
        if secs >= size {
            out.push_str(&format!("{}{unit}", secs / size));
            secs %= size;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_units() {
        assert_eq!(parse("120").unwrap(), Duration::from_secs(120));
        assert_eq!(parse("120s").unwrap(), Duration::from_secs(120));
        assert_eq!(parse("5m").unwrap(), Duration::from_secs(300));
        assert_eq!(parse("1h30m").unwrap(), Duration::from_secs(5400));
        assert_eq!(parse("250ms").unwrap(), Duration::from_millis(250));
        assert_eq!(parse(" 2d ").unwrap(), Duration::from_secs(172_800));
    }

    #[test]
    fn rejects_garbage() {
        for bad in [
            "",
            "s",
            "5x",
            "1.5s",
            "-3s",
            "99999999999999999999999s",
            "5m3",
            "999999999d",
        ] {
            assert!(parse(bad).is_err(), "{bad:?} should fail");
        }
    }

    #[test]
    fn errors_say_what_is_wrong() {
        let e = |s: &str| parse(s).unwrap_err().to_string();
        assert_eq!(e(" "), "empty duration");
        assert_eq!(
            e("s"),
            "invalid duration \"s\": expected a number followed by ms, s, m, h or d"
        );
        assert_eq!(
            e("5m3"),
            "invalid duration \"5m3\": a unit (ms, s, m, h, d) must follow 3"
        );
        assert_eq!(
            e("5x"),
            "invalid duration \"5x\": unknown unit \"x\" (use ms, s, m, h or d)"
        );
        assert_eq!(e("999999999d"), "duration \"999999999d\" is too large");
    }

    #[test]
    fn formats_round_trip() {
        for s in ["120s", "5m", "1h30m", "250ms", "2d"] {
            let d = parse(s).unwrap();
            assert_eq!(parse(&format(d)).unwrap(), d);
        }
        assert_eq!(format(Duration::from_secs(120)), "2m");
    }
    #[test]
    fn the_documented_forms_are_pinned() {
        let secs = |s: &str| parse(s).map(|d| d.as_millis()).ok();
        for (text, ms) in [
            ("0", 0),
            ("90s", 90_000),
            ("1sec", 1_000),
            ("2secs", 2_000),
            ("1min", 60_000),
            ("3mins", 180_000),
            ("1hr", 3_600_000),
            ("2hrs", 7_200_000),
            ("1d2h3m4s5ms", 93_784_005),
            ("1s1s", 2_000),
            ("0ms", 0),
        ] {
            assert_eq!(secs(text), Some(ms), "{text}");
        }
        for bad in [
            "1h 30m", "1H", "5 min", "1w", "5mn", "+5s", "1e3s", "1_000s",
        ] {
            assert!(parse(bad).is_err(), "{bad:?} should fail");
        }
        for (ms, text) in [
            (0, "0s"),
            (1_500, "1500ms"),
            (3_600_000, "1h"),
            (90_061_000, "1d1h1m1s"),
            (172_800_000, "2d"),
            (5_400_000, "1h30m"),
        ] {
            assert_eq!(format(Duration::from_millis(ms)), text);
        }
    }
}
