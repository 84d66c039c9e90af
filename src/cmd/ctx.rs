//! The context every command shares: the node, and the one printer that decides what a person or a script sees.

use crate::cli::{Cli, ColorWhen, Global};
use crate::error::HalError;
use crate::output::ui::{self, Asked, Ui};
use crate::run::Node;

pub(crate) struct Ctx {
    pub ui: Ui,
    pub node: Node,
}

/// The printer the flags ask for. Made before the node is loaded, so that an
/// error loading it (a bad config) is printed as the flags say too.
pub(crate) fn printer(cli: &Cli) -> Ui {
    let g = &cli.global;
    Ui::new(Asked {
        json: g.json,
        prometheus: cli.command.asks_prometheus(),
        quiet: g.quiet,
        yes: g.yes,
        color: match g.color {
            ColorWhen::Auto => ui::ColorChoice::Auto,
            ColorWhen::Always => ui::ColorChoice::Always,
            ColorWhen::Never => ui::ColorChoice::Never,
        },
    })
}

impl Ctx {
    /// Loads the node for the printer `ui`; touches no engine.
    pub(crate) fn new(ui: Ui, g: &Global) -> Result<Ctx, HalError> {
        Ok(Ctx {
            ui,
            node: Node::load(
                g.config.as_deref(),
                g.services_dir.as_deref(),
                g.host.clone(),
            )?,
        })
    }
}
