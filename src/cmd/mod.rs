//! One file per command: each gathers its modules, calls the logic, and renders.

mod ctx;

mod adopt;
mod change;
mod completions;
mod doctor;
mod list;
mod logs;
mod plan;
mod plan_start;
mod rescue;
mod reset_failed;
mod status;
mod update;
mod watch;

use crate::cli::{Cli, Command, Global, ModuleCommand};
use crate::cmd::ctx::Ctx;
use crate::error::Exit;
use crate::output::ui::Ui;

/// Runs the parsed command with the printer its flags ask for, and maps how
/// it ended to the exit code.
pub(crate) async fn run(cli: Cli) -> Exit {
    let ui = ctx::printer(&cli);
    // `logs -f` and `watch` end on Ctrl-C or SIGTERM by design; every other
    // command is interrupted (exit 130, or 143 for SIGTERM), dropping its
    // futures: child processes are killed and locks released.
    let own_interrupt = cli.command.ends_on_interrupt();
    let work = dispatch(&ui, &cli.global, cli.command);
    let result = if own_interrupt {
        work.await
    } else {
        tokio::select! {
            r = work => r,
            e = crate::util::signals::stop_requested() => Err(e.into()),
        }
    };
    match result {
        Ok(code) => code,
        // A command returns an error only when it stopped before its own
        // report (a bad config, no such module, engine unreachable, a usage
        // error hal found): under --json, scripts get the error document instead.
        Err(e) => ui.error(&e),
    }
}

/// The one dispatch: each command's `run` with its arguments. Every command
/// but `completions` runs on the node, loaded here; a completion script needs
/// no config, inventory or engine, so a broken config cannot stop it. The
/// shortcuts (`hal start` …) are the `hal module` verbs themselves, so they
/// run exactly the same.
async fn dispatch(ui: &Ui, g: &Global, command: Command) -> anyhow::Result<Exit> {
    let node = || Ctx::new(ui.clone(), g);
    match command {
        Command::Completions(a) => completions::run(a),
        Command::Module(verb) | Command::Verb(verb) => module_verb(&node()?, verb).await,
        Command::Watch(a) => watch::run(&node()?, a).await,
        Command::Adopt(a) => adopt::run(&node()?, a).await,
        Command::Doctor => doctor::run(&node()?).await,
    }
}

async fn module_verb(ctx: &Ctx, verb: ModuleCommand) -> anyhow::Result<Exit> {
    match verb {
        ModuleCommand::List => list::run(ctx).await,
        ModuleCommand::Status(a) => status::run(ctx, a).await,
        ModuleCommand::Start(a) => change::start(ctx, a).await,
        ModuleCommand::Stop(a) => change::stop(ctx, a).await,
        ModuleCommand::Restart(a) => change::restart(ctx, a).await,
        ModuleCommand::Logs(a) => logs::run(ctx, a).await,
        ModuleCommand::Rescue(a) => rescue::run(ctx, a).await,
        ModuleCommand::ResetFailed(a) => reset_failed::run(ctx, a).await,
        ModuleCommand::Update(a) => update::run(ctx, a).await,
        ModuleCommand::Plan(a) => plan_start::run(ctx, a).await,
    }
}
