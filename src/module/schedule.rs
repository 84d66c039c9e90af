//! `auto_update`'s schedule: its grammar (`daily 04:00`, `weekly sun 04:00`, `every 6h`, `off`) and the pure rule of when its next slot falls, in the node's local time zone.
//!
//! A slot is an instant: `daily HH:MM` is that wall-clock time on each local
//! day, `weekly DAY HH:MM` on that weekday, `every DURATION` each multiple of
//! the duration since the Unix epoch (`every 6h`: 00:00, 06:00, 12:00, 18:00
//! UTC). A wall-clock time that a clock change skips (02:30 on the night
//! clocks go forward) runs once that night, read with the offset after the
//! change (an hour early by the clock then); one that happens twice (the
//! night they go back) runs once, at the second. Only the next
//! slot after now is ever due: a slot missed while `hal watch` was not running
//! is not caught up (as cron does not).

use std::fmt;
use std::time::Duration;

use jiff::civil::Time;

use crate::util::timefmt::Stamp;
use crate::util::tz::Zone;

const WEEKDAYS: [&str; 7] = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"];
const WEEKDAY_NAMES: [&str; 7] = [
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
];

/// When `hal watch` updates the modules on its own.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Schedule {
    /// Never (`off`, or no `auto_update` key).
    #[default]
    Off,
    /// Each day at this many minutes after local midnight.
    Daily { minute: u32 },
    /// Each week on `weekday` (0 = Monday) at `minute` after local midnight.
    Weekly { weekday: u32, minute: u32 },
    /// At each multiple of this duration since the Unix epoch.
    Every(Duration),
}

/// Why an `auto_update` value is not a schedule.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum ScheduleError {
    #[error(
        "{0:?} is not a schedule: use \"daily HH:MM\", \"weekly DAY HH:MM\", \"every DURATION\" or \"off\""
    )]
    NotASchedule(String),
    #[error("{0:?} is not a time of day (HH:MM, 00:00 to 23:59)")]
    NotATime(String),
    #[error("{0:?} is not a day of the week (mon, tue, … sun)")]
    NotADay(String),
    #[error(transparent)]
    Duration(#[from] crate::util::duration::DurationError),
    /// `every` shorter than a second.
    #[error("every {0}: at least 1s")]
    TooOften(String),
}

impl Schedule {
    /// Reads `off`, `daily HH:MM`, `weekly DAY HH:MM` (DAY: `mon`…`sun` or
    /// the full name) or `every DURATION` (at least 1s).
    pub(crate) fn parse(text: &str) -> Result<Schedule, ScheduleError> {
        let words: Vec<&str> = text.split_whitespace().collect();
        let lower: Vec<String> = words.iter().map(|w| w.to_ascii_lowercase()).collect();
        let lower: Vec<&str> = lower.iter().map(String::as_str).collect();
        match lower.as_slice() {
            ["off"] => Ok(Schedule::Off),
            ["daily", at] => Ok(Schedule::Daily { minute: clock(at)? }),
            ["weekly", day, at] => Ok(Schedule::Weekly {
                weekday: weekday(day)?,
                minute: clock(at)?,
            }),
            ["every", d] => {
                let d = crate::util::duration::parse(d)?;
                if d < Duration::from_secs(1) {
                    return Err(ScheduleError::TooOften(words[1].to_string()));
                }
                Ok(Schedule::Every(d))
            }
            _ => Err(ScheduleError::NotASchedule(text.to_string())),
        }
    }

    /// The first slot strictly after `after`, local times read in `zone`;
    /// `None` when the schedule is off. A slot is a whole second.
    pub(crate) fn next_after(&self, after: Stamp, zone: &Zone) -> Option<Stamp> {
        let (minute, weekday) = match *self {
            Schedule::Off => return None,
            Schedule::Every(d) => {
                let n = i64::try_from(d.as_secs()).unwrap_or(i64::MAX).max(1);
                let slot = (after.secs().div_euclid(n) + 1).saturating_mul(n);
                return Some(Stamp::from_secs(slot));
            }
            Schedule::Daily { minute } => (minute, None),
            Schedule::Weekly { weekday, minute } => (minute, Some(weekday)),
        };
        // From the day before (a zone's offset may put today's slot's instant
        // on the local day before) to a week and a day on.
        let at = Time::new(
            i8::try_from(minute / 60).ok()?,
            i8::try_from(minute % 60).ok()?,
            0,
            0,
        )
        .ok()?;
        (-1..=8)
            .map(|k| zone.date(after, k))
            .filter(|d| {
                weekday
                    .is_none_or(|w| i64::from(d.weekday().to_monday_zero_offset()) == i64::from(w))
            })
            .map(|d| zone.instant_of(d.to_datetime(at)).whole_second())
            .find(|t| *t > after)
    }
}

/// `HH:MM` as minutes after midnight.
fn clock(text: &str) -> Result<u32, ScheduleError> {
    let bad = || ScheduleError::NotATime(text.to_string());
    let (h, m) = text.split_once(':').ok_or_else(bad)?;
    let num = |s: &str, max: u32| {
        (s.len() == 2 || (s.len() == 1 && max == 23))
            .then(|| s.parse::<u32>().ok())
            .flatten()
            .filter(|n| *n <= max)
            .ok_or_else(bad)
    };
    Ok(num(h, 23)? * 60 + num(m, 59)?)
}

fn weekday(text: &str) -> Result<u32, ScheduleError> {
    WEEKDAYS
        .iter()
        .position(|d| *d == text)
        .or_else(|| WEEKDAY_NAMES.iter().position(|d| *d == text))
        .map(|i| i as u32)
        .ok_or_else(|| ScheduleError::NotADay(text.to_string()))
}

impl fmt::Display for Schedule {
    /// As the config writes it: `daily 04:00`, `weekly sun 04:00`, `every 6h`, `off`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let hm = |m: u32| format!("{:02}:{:02}", m / 60, m % 60);
        match *self {
            Schedule::Off => write!(f, "off"),
            Schedule::Daily { minute } => write!(f, "daily {}", hm(minute)),
            Schedule::Weekly { weekday, minute } => {
                let day = WEEKDAYS.get(weekday as usize).copied().unwrap_or("?");
                write!(f, "weekly {day} {}", hm(minute))
            }
            Schedule::Every(d) => write!(f, "every {}", crate::util::duration::format(d)),
        }
    }
}

#[cfg(test)]
mod tests;
