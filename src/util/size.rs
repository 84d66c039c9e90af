//! Sizes as the config writes them (`2GiB`, `500MB`, `1048576`) and as hal says them (`1.5 GiB`): `checkpoint_max` and a checkpoint's size.

/// Parses `N`, `N B`, `NKiB|MiB|GiB|TiB` (powers of 1024) or `NkB|MB|GB|TB` (powers of 1000); `N` may have a fraction.
pub(crate) fn parse(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: f64 = num
        .parse()
        .map_err(|_| format!("{text:?} is not a size (e.g. 2GiB, 500MB, 1048576)"))?;
    let scale: u64 = match unit.trim() {
        "" | "B" => 1,
        "KiB" | "K" => 1 << 10,
        "MiB" | "M" => 1 << 20,
        "GiB" | "G" => 1 << 30,
        "TiB" | "T" => 1 << 40,
        "kB" | "KB" => 1_000,
        "MB" => 1_000_000,
        "GB" => 1_000_000_000,
        "TB" => 1_000_000_000_000,
        other => {
            return Err(format!(
                "{text:?}: unknown unit {other:?} (B, KiB, MiB, GiB, TiB, kB, MB, GB, TB)"
            ));
        }
    };
    let bytes = n * scale as f64;
    if !bytes.is_finite() || bytes < 0.0 || bytes > u64::MAX as f64 {
        return Err(format!("{text:?} is too large a size"));
    }
    Ok(bytes.round() as u64)
}

/// A size in words: `512 B`, `3.2 MiB`, `1.0 GiB`.
pub(crate) fn format(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut v = bytes as f64 / 1024.0;
    let mut unit = UNITS[0];
    for u in &UNITS[1..] {
        if v < 1024.0 {
            break;
        }
        v /= 1024.0;
        unit = u;
    }
    format!("{v:.1} {unit}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_the_config_writes_them() {
        assert_eq!(parse("2GiB"), Ok(2 << 30));
        assert_eq!(parse("1.5 MiB"), Ok(3 << 19));
        assert_eq!(parse("500MB"), Ok(500_000_000));
        assert_eq!(parse("4096"), Ok(4096));
        assert!(parse("lots").is_err());
        assert!(parse("2 parsecs").is_err());
    }

    #[test]
    fn sizes_said_in_binary_units() {
        assert_eq!(format(512), "512 B");
        assert_eq!(format(3 << 19), "1.5 MiB");
        assert_eq!(format(1 << 30), "1.0 GiB");
    }
}
