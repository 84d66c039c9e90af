//! One file per command: each gathers its modules, calls the logic, and renders.

pub(crate) mod ctx;

pub(crate) mod adopt;
pub(crate) mod change;
pub(crate) mod completions;
pub(crate) mod doctor;
pub(crate) mod list;
pub(crate) mod logs;
pub(crate) mod plan;
pub(crate) mod rescue;
pub(crate) mod reset_failed;
pub(crate) mod status;
pub(crate) mod update;
pub(crate) mod watch;

use crate::cli::{Command, ModuleCommand};
use crate::cmd::ctx::Ctx;
use crate::error::Exit;

/// Runs the parsed command. The shortcuts (`hal start` …) are the `hal
/// module` verbs themselves, so they run exactly the same.
pub(crate) async fn dispatch(ctx: &Ctx, command: Command) -> anyhow::Result<Exit> {
    match command {
        Command::Module(verb) | Command::Verb(verb) => module_verb(ctx, verb).await,
        Command::Watch(a) => watch::run(ctx, a).await,
        Command::Adopt(a) => adopt::run(ctx, a).await,
        Command::Doctor => doctor::run(ctx).await,
        Command::Completions(a) => completions::run(&a.shell),
    }
}

async fn module_verb(ctx: &Ctx, verb: ModuleCommand) -> anyhow::Result<Exit> {
    match verb {
        ModuleCommand::List => list::run(ctx).await,
        ModuleCommand::Status(a) => status::run(ctx, &a).await,
        ModuleCommand::Start(a) => change::start(ctx, a).await,
        ModuleCommand::Stop(a) => change::stop(ctx, a).await,
        ModuleCommand::Restart(a) => change::restart(ctx, a).await,
        ModuleCommand::Logs(a) => logs::run(ctx, a).await,
        ModuleCommand::Rescue(a) => rescue::run(ctx, a).await,
        ModuleCommand::ResetFailed(a) => reset_failed::run(ctx, a).await,
        ModuleCommand::Update(a) => update::run(ctx, a).await,
    }
}
