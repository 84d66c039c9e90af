//! How the causes hal's state keeps are worded: a failed start's ([`StartCause`]), a rollback's ([`RollbackCause`]) and a hold's ([`HoldCause`]).

use std::fmt;

use crate::module::recorded_causes::{HoldCause, RollbackCause, StartCause};

impl fmt::Display for StartCause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StartCause::Diagnosed { summary, .. } => f.write_str(summary),
            StartCause::Summary(said) | StartCause::Error(said) | StartCause::Words(said) => {
                f.write_str(said)
            }
        }
    }
}

impl fmt::Display for RollbackCause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RollbackCause::NewImage(cause) => write!(f, "new image {cause}"),
            RollbackCause::Words(said) => f.write_str(said),
        }
    }
}

impl fmt::Display for HoldCause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HoldCause::Refused { trouble, refusal } => write!(f, "{trouble}; {refusal}"),
            HoldCause::Said(said) => f.write_str(said),
        }
    }
}
