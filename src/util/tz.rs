//! The local time zone, found as the C library finds it and read by `jiff`: `TZ`, or `/etc/localtime` as TZif, to turn local wall-clock times into instants.
//!
//! `TZ` unset means `/etc/localtime` (UTC when it is missing), `TZ=""` means
//! UTC, `TZ=:NAME` or `TZ=NAME` names a file under the zone database (`TZDIR`,
//! else `/usr/share/zoneinfo`) or an absolute path, and otherwise `TZ` is a
//! POSIX rule such as `CET-1CEST,M3.5.0,M10.5.0/3`. jiff reads the TZif file
//! (its footer rule after the last transition) and the POSIX rule.

use std::path::{Path, PathBuf};

use jiff::Timestamp;
use jiff::tz::TimeZone;

/// A zone: UTC offsets by instant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Zone(TimeZone);

impl Zone {
    pub(crate) fn utc() -> Zone {
        Zone(TimeZone::UTC)
    }

    /// A zone always `offset` seconds east of UTC.
    #[cfg(test)]
    pub(crate) fn fixed(offset: i32) -> Zone {
        Zone(jiff::tz::Offset::from_seconds(offset).map_or(TimeZone::UTC, TimeZone::fixed))
    }

    /// The zone this process's local time is in (see the module's note). The
    /// error is text, as `when::parse`'s zone argument takes it.
    pub(crate) fn local() -> Result<Zone, String> {
        let dir = std::env::var_os("TZDIR")
            .filter(|d| !d.is_empty())
            .map_or_else(|| PathBuf::from("/usr/share/zoneinfo"), PathBuf::from);
        match std::env::var("TZ") {
            Err(std::env::VarError::NotPresent) => match std::fs::read("/etc/localtime") {
                Ok(bytes) => TimeZone::tzif("/etc/localtime", &bytes)
                    .map(Zone)
                    .map_err(|e| format!("/etc/localtime: {e}")),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Zone::utc()),
                Err(e) => Err(format!("/etc/localtime: {e}")),
            },
            Err(std::env::VarError::NotUnicode(_)) => Err("TZ is not valid UTF-8".into()),
            Ok(tz) => Zone::named(&tz, &dir),
        }
    }

    /// The zone `TZ` names, with the zone database in `dir`.
    pub(crate) fn named(tz: &str, dir: &Path) -> Result<Zone, String> {
        let name = tz.strip_prefix(':').unwrap_or(tz);
        if name.is_empty() || name == "UTC" || name == "UTC0" {
            return Ok(Zone::utc());
        }
        let file = if name.starts_with('/') {
            PathBuf::from(name)
        } else {
            dir.join(name)
        };
        if !name.contains("..")
            && let Ok(bytes) = std::fs::read(&file)
        {
            return TimeZone::tzif(name, &bytes)
                .map(Zone)
                .map_err(|e| format!("{}: {e}", file.display()));
        }
        let not_rule = |why: String| {
            format!(
                "TZ={tz:?}: no such zone file in {}, and not a time zone rule: {why}",
                dir.display()
            )
        };
        // Only the `Mm.w.d` edges tzdata writes, as hal has always read them.
        if name.split(',').skip(1).any(|edge| !edge.starts_with('M')) {
            return Err(not_rule("an edge is not Mm.w.d".into()));
        }
        TimeZone::posix(name)
            .map(Zone)
            .map_err(|e| not_rule(e.to_string()))
    }

    /// Seconds east of UTC at the instant `utc` (Unix seconds).
    pub(crate) fn offset_at(&self, utc: i64) -> i32 {
        let t = Timestamp::from_second(
            utc.clamp(Timestamp::MIN.as_second(), Timestamp::MAX.as_second()),
        )
        .unwrap_or(Timestamp::UNIX_EPOCH);
        self.0.to_offset(t).seconds()
    }

    /// The instant of a local wall-clock time (given as seconds, as if it were
    /// UTC). In a gap or an overlap (a clock change), one of the near instants.
    pub(crate) fn to_utc(&self, local: i64) -> i64 {
        let guess = local - i64::from(self.offset_at(local));
        let t = local - i64::from(self.offset_at(guess));
        local - i64::from(self.offset_at(t))
    }

    /// The local wall-clock seconds (as if UTC) of an instant.
    pub(crate) fn to_local(&self, utc: i64) -> i64 {
        utc + i64::from(self.offset_at(utc))
    }
}

#[cfg(test)]
mod tests;
