//! One stack as a verb sees it, and the one way a layer above makes it from a module.

use std::path::Path;

use crate::docker::compose::Project;
use crate::module::Module;

/// One stack as a verb sees it: its compose project, and the one service a
/// `MODULE/SERVICE` names (`None`: the whole project).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Stack<'a> {
    pub name: &'a str,
    pub dir: &'a Path,
    pub service: Option<&'a str>,
}

impl<'a> Stack<'a> {
    /// The stack a module is, with the one service a `MODULE/SERVICE`
    /// names: `None` for a host unit or an invalid module. The one way a
    /// layer above makes a `Stack` from a module.
    pub(crate) fn of(m: &'a Module, service: Option<&'a str>) -> Option<Stack<'a>> {
        let dir = m.stack_dir()?;
        Some(Stack {
            name: &m.name,
            dir,
            service,
        })
    }

    pub(crate) fn project(&self) -> Project<'a> {
        Project {
            name: self.name,
            dir: self.dir,
        }
    }
}
