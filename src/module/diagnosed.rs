//! A failure hal diagnosed (a start, an update, a rollback): its one-line summary, the detail lines said under it, and the causes it saw, typed, so that a status knows which of a module's live causes the failure already says.

use std::fmt;

use crate::module::recorded_causes::SeenCause;

/// An error whose one-line summary is followed by indented detail lines
/// (which service is not up, its last log lines).
#[derive(Debug, Clone)]
pub(crate) struct Detailed {
    pub summary: String,
    pub details: Vec<String>,
    /// What the failure saw of the module: the troubles its summary says.
    pub seen: Vec<SeenCause>,
}

impl fmt::Display for Detailed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.summary)
    }
}

impl std::error::Error for Detailed {}

/// The diagnosis carried anywhere in an error's chain.
pub(crate) fn diagnosis_of(err: &anyhow::Error) -> Option<&Detailed> {
    err.chain().find_map(|e| e.downcast_ref::<Detailed>())
}

/// The detail lines carried anywhere in an error's chain.
pub(crate) fn details_of(err: &anyhow::Error) -> &[String] {
    diagnosis_of(err).map_or(&[], |d| d.details.as_slice())
}
