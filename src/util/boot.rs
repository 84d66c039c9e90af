//! When the host last booted (`btime` in `/proc/stat`): where a node's `starting` window begins when its engine is older.

use crate::util::timefmt::Stamp;

/// The host's boot time, or `None` where `/proc/stat` cannot say (not Linux, no procfs).
pub(crate) fn boot_time() -> Option<Stamp> {
    let text = std::fs::read_to_string("/proc/stat").ok()?;
    btime(&text)
}

/// The `btime` line of a `/proc/stat` text.
fn btime(text: &str) -> Option<Stamp> {
    let secs = text
        .lines()
        .find_map(|l| l.strip_prefix("btime "))?
        .trim()
        .parse()
        .ok()?;
    Some(Stamp::from_secs(secs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn btime_is_read_from_its_line() {
        let text = "cpu  1 2 3\nintr 5\nbtime 1764835200\nprocesses 9\n";
        assert_eq!(btime(text).map(|s| s.secs()), Some(1_764_835_200));
        assert_eq!(btime("cpu 1\n"), None);
    }
}
