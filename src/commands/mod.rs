//! One file per command: each gathers its modules, calls the logic, and renders.

pub mod change;
pub mod list;
pub mod logs;
pub mod status;

use crate::app::Ctx;
use crate::cli::{Command, ModuleCommand};
use crate::error::Exit;

/// Runs the parsed command.
pub async fn dispatch(ctx: &Ctx, command: Command) -> anyhow::Result<Exit> {
    match command {
        Command::Status(a) => status::run(ctx, &a.modules).await,
        Command::Module(m) => match m {
            ModuleCommand::List => list::run(ctx),
            ModuleCommand::Status(a) => status::run(ctx, &a.modules).await,
            ModuleCommand::Start(a) => change::start(ctx, a).await,
            ModuleCommand::Stop(a) => change::stop(ctx, a).await,
            ModuleCommand::Restart(a) => change::restart(ctx, a).await,
            ModuleCommand::Logs(a) => logs::run(ctx, a).await,
        },
    }
}
