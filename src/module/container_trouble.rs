//! What one container is doing that keeps its module from `active`, typed: a status's reason and a failed start's record name it alike, and compare it as a value (its words: `output/reason_words.rs`).

use serde::{Deserialize, Serialize};

/// One container's trouble: which (its service, `service-N` of several) and what it is doing.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContainerTrouble {
    /// `service`, or `service-N` when the service runs more than one container.
    pub container: String,
    pub doing: Doing,
}

/// What a container is doing, as its reason says it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Doing {
    Running,
    Completed,
    /// Running, its healthcheck still starting.
    HealthStarting,
    /// Running again, not yet settled after `times` restarts.
    Restarted {
        times: i64,
        last_exit: i64,
    },
    Starting,
    Unhealthy,
    /// Exited under a restart policy that keeps it running, and not restarted.
    Halted {
        code: i64,
    },
    /// Created, and starting it failed with the engine's error.
    NotStarted {
        error: String,
    },
    /// Created, never started.
    Created,
    Paused,
    Stopped {
        code: i64,
    },
    RestartLoop {
        code: i64,
        restarts: i64,
    },
    Dead,
    OutOfMemory,
    Exited {
        code: i64,
    },
}
