//! What compose's `config` said of a project, kept beside the model of what compose reads, so that a plan of an unchanged module runs no compose.

use std::path::Path;
use std::sync::PoisonError;

use super::{ComposeSaid, Models};

impl Models {
    /// What `compose` (its [`identity`]) said `config --format json` of
    /// `project` in `dir`, kept while nothing compose reads there changed;
    /// `None` when it must be asked.
    ///
    /// [`identity`]: crate::docker::compose::Compose::identity
    pub(crate) fn compose_said(&self, dir: &Path, compose: &str, project: &str) -> Option<String> {
        self.kept(dir)?;
        let now = self.now.lock().unwrap_or_else(PoisonError::into_inner);
        let said = now
            .get(dir)
            .and_then(|n| n.config.as_ref())
            .or_else(|| self.was(dir).and_then(|e| e.config.as_ref()))?;
        (said.compose == compose && said.project == project).then(|| said.text.clone())
    }

    /// Keeps what `compose` said of `project` in `dir`, when the model of
    /// `dir` is kept (the files it was asked under were stamped first, so a
    /// change since is seen as one).
    pub(crate) fn keep_compose_said(&self, dir: &Path, compose: &str, project: &str, text: String) {
        if self.inputs(dir).is_err() {
            return;
        }
        let stale = self
            .stale
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .contains(dir);
        let mut now = self.now.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(n) = now.get_mut(dir) else { return };
        let held =
            n.model.is_some() || (!stale && self.was(dir).is_some_and(|e| e.model.is_some()));
        if held {
            n.config = Some(ComposeSaid {
                compose: compose.to_string(),
                project: project.to_string(),
                text,
            });
        }
    }
}
