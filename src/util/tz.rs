//! The local time zone, found as the C library finds it and read by `jiff`: `TZ`, or `/etc/localtime` as TZif, to turn local wall-clock times into instants.
//!
//! `TZ` unset means `/etc/localtime` (UTC when it is missing), `TZ=""` means
//! UTC, `TZ=:NAME` or `TZ=NAME` names a file under the zone database (`TZDIR`,
//! else `/usr/share/zoneinfo`) or an absolute path, and otherwise `TZ` is a
//! POSIX rule such as `CET-1CEST,M3.5.0,M10.5.0/3`. jiff reads the TZif file
//! (its footer rule after the last transition) and the POSIX rule.

use std::path::{Path, PathBuf};

use jiff::Timestamp;
use jiff::civil::{Date, DateTime};
use jiff::tz::TimeZone;

use crate::util::timefmt::Stamp;

/// A zone: UTC offsets by instant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Zone(TimeZone);

/// Why the local zone could not be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum ZoneError {
    /// A zone file that is there but does not read as TZif.
    #[error("{}: {why}", path.display())]
    File { path: PathBuf, why: String },
    #[error("TZ is not valid UTF-8")]
    NotUnicode,
    /// `TZ` names no zone file under `dir` and is no POSIX rule.
    #[error("TZ={tz:?}: no such zone file in {}, and not a time zone rule: {why}", dir.display())]
    Unknown {
        tz: String,
        dir: PathBuf,
        why: String,
    },
}

impl Zone {
    pub(crate) fn utc() -> Zone {
        Zone(TimeZone::UTC)
    }

    /// A zone always `offset` seconds east of UTC.
    #[cfg(test)]
    pub(crate) fn fixed(offset: i32) -> Zone {
        Zone(jiff::tz::Offset::from_seconds(offset).map_or(TimeZone::UTC, TimeZone::fixed))
    }

    /// The zone this process's local time is in (see the module's note).
    pub(crate) fn local() -> Result<Zone, ZoneError> {
        let dir = std::env::var_os("TZDIR")
            .filter(|d| !d.is_empty())
            .map_or_else(|| PathBuf::from("/usr/share/zoneinfo"), PathBuf::from);
        let file = |why: String| ZoneError::File {
            path: "/etc/localtime".into(),
            why,
        };
        match std::env::var("TZ") {
            Err(std::env::VarError::NotPresent) => match std::fs::read("/etc/localtime") {
                Ok(bytes) => TimeZone::tzif("/etc/localtime", &bytes)
                    .map(Zone)
                    .map_err(|e| file(e.to_string())),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Zone::utc()),
                Err(e) => Err(file(e.to_string())),
            },
            Err(std::env::VarError::NotUnicode(_)) => Err(ZoneError::NotUnicode),
            Ok(tz) => Zone::named(&tz, &dir),
        }
    }

    /// The zone `TZ` names, with the zone database in `dir`.
    pub(crate) fn named(tz: &str, dir: &Path) -> Result<Zone, ZoneError> {
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
                .map_err(|e| ZoneError::File {
                    path: file,
                    why: e.to_string(),
                });
        }
        let unknown = |why: String| ZoneError::Unknown {
            tz: tz.to_string(),
            dir: dir.to_path_buf(),
            why,
        };
        // Only the `Mm.w.d` edges tzdata writes, as hal has always read them.
        if name.split(',').skip(1).any(|edge| !edge.starts_with('M')) {
            return Err(unknown("an edge is not Mm.w.d".into()));
        }
        TimeZone::posix(name)
            .map(Zone)
            .map_err(|e| unknown(e.to_string()))
    }

    /// Seconds east of UTC at the instant `utc` (Unix seconds).
    #[cfg(test)]
    pub(crate) fn offset_at(&self, utc: i64) -> i32 {
        self.0.to_offset(Stamp::from_secs(utc).instant()).seconds()
    }

    /// The instant of a local wall-clock time. In a gap or an overlap (a
    /// clock change), read with the offset in force after the change: a time
    /// the clocks skip is the instant before the jump, one they show twice the
    /// later one (as hal has always read them; the schedule tests pin it).
    pub(crate) fn instant_of(&self, wall: DateTime) -> Stamp {
        use jiff::tz::AmbiguousOffset::{Fold, Gap, Unambiguous};
        let (Unambiguous { offset } | Gap { after: offset, .. } | Fold { after: offset, .. }) =
            self.0.to_ambiguous_timestamp(wall).offset();
        let t = offset.to_timestamp(wall);
        Stamp::from_instant(t.unwrap_or(if wall.year() < 0 {
            Timestamp::MIN
        } else {
            Timestamp::MAX
        }))
    }

    /// The local wall-clock time of an instant.
    pub(crate) fn wall(&self, t: Stamp) -> DateTime {
        self.0.to_datetime(t.instant())
    }

    /// The local date at `now`, `days` later (earlier if negative).
    pub(crate) fn date(&self, now: Stamp, days: i32) -> Date {
        let today = self.wall(now).date();
        today.saturating_add(jiff::Span::new().days(days))
    }
}

#[cfg(test)]
mod tests;
