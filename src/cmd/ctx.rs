//! The context every command shares: the node, and the one printer that decides what a person or a script sees.

use crate::cli::{ColorChoice, Global};
use crate::error::HalError;
use crate::output::ui::{self, Asked, Ui};
use crate::run::node::Node;

pub struct Ctx {
    pub ui: Ui,
    pub node: Node,
}

impl Ctx {
    /// Decides the output and loads the node; touches no engine.
    pub fn new(g: &Global) -> Result<Ctx, HalError> {
        Ok(Ctx {
            ui: Ui::new(Asked {
                json: g.json,
                quiet: g.quiet,
                yes: g.yes,
                color: match g.color {
                    ColorChoice::Auto => ui::ColorChoice::Auto,
                    ColorChoice::Always => ui::ColorChoice::Always,
                    ColorChoice::Never => ui::ColorChoice::Never,
                },
            }),
            node: Node::load(
                g.config.as_deref(),
                g.services_dir.as_deref(),
                g.host.clone(),
            )?,
        })
    }
}
