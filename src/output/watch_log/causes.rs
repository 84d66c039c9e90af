//! How the watch's causes ([`Cause`], [`Escalation`]) and a repair's deeds ([`Repaired`]) are worded in its log: the one place.

use std::fmt;

use super::event::{Cause, Escalation, Repaired};
use crate::module::fix::Fix;

impl fmt::Display for Cause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Cause::Status(r) => write!(f, "{r}"),
            Cause::Reasons(r) => write!(f, "{r}"),
            Cause::Container(said) | Cause::Said(said) => f.write_str(said),
            Cause::NotUp { service, state } => write!(f, "service {service} is {state}"),
            Cause::Unit { name, state } => write!(f, "unit {name} is {state}"),
            Cause::Unhealthy { service, for_ } => {
                write!(f, "service {service} unhealthy for {}s", for_.as_secs())
            }
            Cause::AndMore { first, of } => match of {
                0 | 1 => write!(f, "{first}"),
                2 => write!(f, "{first} (and 1 more container)"),
                n => write!(f, "{first} (and {} more containers)", n - 1),
            },
            Cause::RequirementBack(c) => write!(f, "its requirement is back; {c}"),
            Cause::RunAgain(failed) => write!(f, "{failed}; its containers run again"),
            Cause::Then(first, then) => write!(f, "{first}; {then}"),
            Cause::WaitingOn(on) => write!(f, "waiting on {}", on.join(", ")),
            Cause::RestartedBut { state, reason } => {
                write!(f, "restarted but {}: {reason}", state.as_str())
            }
            Cause::StoppedByRequest => f.write_str("stopped by request"),
            Cause::NoLongerWanted => f.write_str("no longer wanted up"),
            Cause::ActiveAgain => f.write_str("active again"),
        }
    }
}

impl fmt::Display for Repaired {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Repaired::Containers(fixes) => f.write_str(&fixes_said(fixes, true)),
            Repaired::Recreated => f.write_str("recreated the module"),
            Repaired::Restarted => f.write_str("restarted the module"),
        }
    }
}

impl fmt::Display for Escalation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Escalation::RepairFailed => {
                f.write_str("the repair of its containers did not bring it back")
            }
            Escalation::FailedAgain {
                service,
                after,
                whole,
            } => {
                let what = if *whole {
                    "the module was recreated"
                } else {
                    "its repair"
                };
                write!(
                    f,
                    "service {service} failed again {}s after {what}",
                    after.as_secs()
                )
            }
        }
    }
}

/// Every fix in words, done or about to be: `started container web-app-1 again, then …`.
pub(super) fn fixes_said(fixes: &[Fix], done: bool) -> String {
    let all: Vec<String> = fixes.iter().map(|f| f.describe(done)).collect();
    all.join(", then ")
}
