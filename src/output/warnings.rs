//! How a verb's warnings ([`Warning`]) are worded, for people and in `--json`: the one place.

use std::fmt;

use serde::{Serialize, Serializer};

use crate::module::warning::Warning;

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Warning::State(said) => f.write_str(said),
            Warning::OutcomeNotRecorded(cause) => {
                write!(f, "could not record the outcome in hal's state: {cause}")
            }
            Warning::UpdateNotRecorded(cause) => {
                write!(f, "could not record the update in hal's state: {cause}")
            }
            Warning::LedgerNotRecorded(cause) => {
                write!(f, "could not record its containers for `hal logs`: {cause}")
            }
            Warning::PullFailed { image, cause } => {
                write!(f, "pull failed, running cached image {image}: {cause}")
            }
            Warning::DirectoryGone(dir) => write!(
                f,
                "its directory {} is gone: removed its containers through the engine",
                dir.display()
            ),
            Warning::DownFellBack(line) => write!(
                f,
                "compose down failed ({line}); removed the project's containers and networks \
                 through the engine, volumes kept"
            ),
            Warning::RepairFellBack {
                fix,
                cause,
                service,
            } => write!(f, "{fix} failed ({cause}); recreating service {service}"),
            Warning::Unfinished(said) => f.write_str(said),
            Warning::RestartedAfter(of) => write!(
                f,
                "restarted after {}: it shares its network namespace or volumes",
                of.join(", ")
            ),
            Warning::RestartedWith { module, result } => match result {
                Ok(state) => write!(f, "restarted {module} with it: {}", state.as_str()),
                Err(cause) => write!(f, "restarted {module} with it: failed: {cause}"),
            },
            Warning::Quarantined {
                service,
                digest,
                at,
                reason,
            } => write!(
                f,
                "{service}: kept the running image: {digest} was rolled back at {} ({reason}) and is quarantined; `hal update --force` tries it once more",
                at.rfc3339()
            ),
            Warning::Pinned => f.write_str(
                "pinned (pin = true): left as it is; `hal update --force MODULE` updates it",
            ),
        }
    }
}

/// A warning is published as its words.
impl Serialize for Warning {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::module::recorded_causes::{RollbackCause, StartCause};
    use crate::module::status::State;

    /// The words each warning had when it was a string made where it happened.
    #[test]
    fn each_warning_says_what_it_always_said() {
        let cause = || "boom".to_string();
        let image = || "nginx:1".to_string();
        for (w, said) in [
            (
                Warning::State("state file x is corrupt".into()),
                "state file x is corrupt",
            ),
            (
                Warning::OutcomeNotRecorded(cause()),
                "could not record the outcome in hal's state: boom",
            ),
            (
                Warning::UpdateNotRecorded(cause()),
                "could not record the update in hal's state: boom",
            ),
            (
                Warning::LedgerNotRecorded(cause()),
                "could not record its containers for `hal logs`: boom",
            ),
            (
                Warning::PullFailed {
                    image: image(),
                    cause: cause(),
                },
                "pull failed, running cached image nginx:1: boom",
            ),
            (
                Warning::DirectoryGone("/srv/web".into()),
                "its directory /srv/web is gone: removed its containers through the engine",
            ),
            (
                Warning::DownFellBack("no such network".into()),
                "compose down failed (no such network); removed the project's containers and \
                 networks through the engine, volumes kept",
            ),
            (
                Warning::RepairFellBack {
                    fix: "start web-1".into(),
                    cause: cause(),
                    service: "web".into(),
                },
                "start web-1 failed (boom); recreating service web",
            ),
            (
                Warning::RestartedAfter(vec!["gw".into(), "db".into()]),
                "restarted after gw, db: it shares its network namespace or volumes",
            ),
            (
                Warning::RestartedWith {
                    module: "tun".into(),
                    result: Ok(State::Active),
                },
                "restarted tun with it: active",
            ),
            (
                Warning::RestartedWith {
                    module: "tun".into(),
                    result: Err(cause()),
                },
                "restarted tun with it: failed: boom",
            ),
            (
                Warning::Quarantined {
                    service: "api".into(),
                    digest: "sha256:2b".into(),
                    at: crate::util::timefmt::Stamp::from_secs(1_764_900_000),
                    reason: RollbackCause::NewImage(StartCause::Diagnosed {
                        summary: "did not start: exited".into(),
                        seen: Vec::new(),
                    }),
                },
                "api: kept the running image: sha256:2b was rolled back at 2025-12-05T02:00:00Z (new image did not start: exited) and is quarantined; `hal update --force` tries it once more",
            ),
            (
                Warning::Pinned,
                "pinned (pin = true): left as it is; `hal update --force MODULE` updates it",
            ),
        ] {
            assert_eq!(w.to_string(), said);
            assert_eq!(serde_json::to_value(&w).unwrap(), said);
        }
    }
}
