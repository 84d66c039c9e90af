//! An update's transaction as the state remembers it (issue 48): the step it reached, written before the step is taken, so that the next hal can roll an interrupted update back or forward; and the module's checkpoint (where, how big, when).

use serde::{Deserialize, Serialize};

use crate::util::stored;
use crate::util::timefmt::Stamp;

/// Where an update is, written to the state before each step is taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TxnStep {
    /// The new images are pulled; the services are being stopped.
    Pulled,
    /// The services are stopped; their data is being copied.
    Stopped,
    /// The checkpoint is complete; the services are being recreated.
    Checkpointed,
    /// The services run the new images; the gate is waiting for `active`.
    Recreated,
    /// The gate passed: what is left is to say so.
    Passed,
}

impl TxnStep {
    pub fn as_str(self) -> &'static str {
        match self {
            TxnStep::Pulled => "pulled",
            TxnStep::Stopped => "stopped",
            TxnStep::Checkpointed => "checkpointed",
            TxnStep::Recreated => "recreated",
            TxnStep::Passed => "passed",
        }
    }

    /// Whether the data may have been written by the new images: a rollback
    /// restores it from this update's (complete) checkpoint.
    pub fn data_at_risk(self) -> bool {
        matches!(self, TxnStep::Checkpointed | TxnStep::Recreated)
    }
}

/// One service the update moves to a new image.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TxnSwap {
    pub service: String,
    /// The reference the service names.
    pub image: String,
    /// The image id it ran before.
    pub previous: String,
    /// The image id the reference names now.
    pub new: String,
}

/// An update in progress.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TxnRecord {
    pub step: TxnStep,
    /// When the update began.
    #[serde(with = "stored::unix_ms")]
    pub since: Stamp,
    /// The hal process that runs it.
    pub pid: u32,
    pub swaps: Vec<TxnSwap>,
    /// Whether this update takes a checkpoint (false: `--no-checkpoint`, or nothing to copy).
    pub checkpoint: bool,
    /// How long the module has to become active.
    pub timeout_ms: u64,
}

/// One thing a checkpoint holds: a named volume or a bind-mount source.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckpointEntry {
    /// How the module names it: the volume's compose key, or the bind mount's source as written.
    pub name: String,
    /// Where it is on the host (a volume's mountpoint, a bind mount's source).
    pub path: std::path::PathBuf,
}

/// A module's checkpoint: complete, under the state directory's `checkpoints/MODULE/`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckpointRecord {
    /// When it was taken.
    #[serde(with = "stored::unix_ms")]
    pub at: Stamp,
    /// How much disk it holds (allocated blocks; a reflinked copy may share them).
    pub bytes: u64,
    /// What it holds, in order: entry `i` is kept in `checkpoints/MODULE/i`.
    pub entries: Vec<CheckpointEntry>,
}
