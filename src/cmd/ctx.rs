//! The context every command shares: the node, and the one printer that decides what a person or a script sees.

use crate::cli::Global;
use crate::error::HalError;
use crate::output::ui::Ui;
use crate::run::node::Node;

pub struct Ctx {
    pub ui: Ui,
    pub node: Node,
}

impl Ctx {
    /// Decides the output and loads the node; touches no engine.
    pub fn new(g: &Global) -> Result<Ctx, HalError> {
        Ok(Ctx {
            ui: Ui::new(g),
            node: Node::load(
                g.config.as_deref(),
                g.services_dir.as_deref(),
                g.host.clone(),
            )?,
        })
    }
}
