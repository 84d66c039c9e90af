//! How a module's reason is worded: each cause of a status (a container's trouble, a requirement waited on, a failed start…) and their one line, beside the warnings' words.

use std::fmt;

use crate::module::container_trouble::{ContainerTrouble, Doing};

/// `service web exited with code 1`: the one wording of a container's trouble,
/// for `status` and the supervisor alike.
impl fmt::Display for ContainerTrouble {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "service {} ", self.container)?;
        match &self.doing {
            Doing::Running => f.write_str("is running"),
            Doing::Completed => f.write_str("completed"),
            Doing::HealthStarting => f.write_str("is starting (health: starting)"),
            Doing::Restarted { times, last_exit } => {
                write!(f, "restarted {times} times (last exit code {last_exit})")
            }
            Doing::Starting => f.write_str("is starting"),
            Doing::Unhealthy => f.write_str("is unhealthy"),
            Doing::Halted { code } => write!(
                f,
                "exited with code {code} and the engine is not restarting it"
            ),
            Doing::NotStarted { error } => write!(f, "was created but did not start: {error}"),
            Doing::Created => f.write_str("is created, not started"),
            Doing::Paused => f.write_str("is paused"),
            Doing::Stopped { code } => write!(f, "is stopped (exit code {code})"),
            Doing::RestartLoop { code, restarts } => write!(
                f,
                "is restarting in a loop (exit code {code}, {restarts} restarts)"
            ),
            Doing::Dead => f.write_str("is dead"),
            Doing::OutOfMemory => f.write_str("was killed: out of memory"),
            Doing::Exited { code } => write!(f, "exited with code {code}"),
        }
    }
}
