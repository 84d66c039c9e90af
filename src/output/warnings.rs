//! How a verb's warnings ([`Warning`]) are worded, for people and in `--json`: the one place.

use std::fmt;

use serde::{Serialize, Serializer};

use crate::module::warning::Warning;

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Warning::State(said) | Warning::Said(said) => f.write_str(said),
            Warning::NotRecorded(cause) => {
                write!(f, "could not record the outcome in hal's state: {cause}")
            }
            Warning::RestartedAfter(of) => write!(
                f,
                "restarted after {}: it shares its network namespace or volumes",
                of.join(", ")
            ),
            Warning::RestartedWith { module, result } => match result {
                Ok(state) => write!(f, "restarted {module} with it: {}", state.as_str()),
                Err(cause) => write!(f, "restarted {module} with it: failed: {cause}"),
            },
        }
    }
}

/// A warning is published as its words.
impl Serialize for Warning {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}
