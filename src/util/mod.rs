//! Small helpers with no knowledge of modules: durations, times and time zones, signals, the process's user.

pub(crate) mod atomic;
pub(crate) mod boot;
pub mod duration;
pub(crate) mod signals;
pub(crate) mod size;
pub(crate) mod stored;
pub(crate) mod sys;
pub mod timefmt;
pub(crate) mod trust;
pub(crate) mod tz;
pub(crate) mod when;
