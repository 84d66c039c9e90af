//! Human durations ("120s", "5m", "1h30m", "500ms") for the config and flags.

use std::time::Duration;

/// Parses `120`, `120s`, `5m`, `1h30m`, `250ms`, `2d`. A bare number is seconds.
pub fn parse(text: &str) -> Result<Duration, String> {
    let s = text.trim();
    if s.is_empty() {
        return Err("empty duration".into());
    }
    if s.bytes().all(|b| b.is_ascii_digit()) {
        return s
            .parse::<u64>()
            .map(Duration::from_secs)
            .map_err(|_| format!("duration {text:?} is too large"));
    }
    let mut total: u128 = 0;
    let mut rest = s;
    while !rest.is_empty() {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return Err(format!(
                "invalid duration {text:?}: expected a number followed by ms, s, m, h or d"
            ));
        }
        let (num, tail) = rest.split_at(digits);
        let unit_len = tail.bytes().take_while(u8::is_ascii_alphabetic).count();
        let (unit, tail) = tail.split_at(unit_len);
        let n: u128 = num
            .parse()
            .map_err(|_| format!("duration {text:?} is too large"))?;
        let millis_per: u128 = match unit {
            "ms" => 1,
            "s" | "sec" | "secs" => 1_000,
            "m" | "min" | "mins" => 60_000,
            "h" | "hr" | "hrs" => 3_600_000,
            "d" => 86_400_000,
            "" => {
                return Err(format!(
                    "invalid duration {text:?}: a unit (ms, s, m, h, d) must follow {num}"
                ));
            }
            other => {
                return Err(format!(
                    "invalid duration {text:?}: unknown unit {other:?} (use ms, s, m, h or d)"
                ));
            }
        };
        total = n
            .checked_mul(millis_per)
            .and_then(|v| total.checked_add(v))
            .ok_or_else(|| format!("duration {text:?} is too large"))?;
        rest = tail;
    }
    // Ten years is plenty for any timeout or window; beyond that is a typo.
    if total > 10 * 365 * 86_400_000 {
        return Err(format!("duration {text:?} is too large"));
    }
    u64::try_from(total)
        .map(Duration::from_millis)
        .map_err(|_| format!("duration {text:?} is too large"))
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
    fn formats_round_trip() {
        for s in ["120s", "5m", "1h30m", "250ms", "2d"] {
            let d = parse(s).unwrap();
            assert_eq!(parse(&format(d)).unwrap(), d);
        }
        assert_eq!(format(Duration::from_secs(120)), "2m");
    }
}
