//! Small helpers with no knowledge of modules: durations, times and time zones, signals, the process's user.

pub mod duration;
pub mod signals;
pub mod sys;
pub mod timefmt;
pub mod trust;
pub mod tz;
pub mod when;
