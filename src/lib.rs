//! hal: one binary that gives every module on a node the same verbs.
//!
//! The binary (`main.rs`) only parses the command line and maps the result to
//! an exit code; everything else lives in these modules so tests can reach it.

pub mod cli;
pub mod cmd;
pub mod error;
pub mod host;
pub mod logs;
pub mod module;
pub mod output;
pub mod run;
pub mod stack;
pub mod state;
pub mod util;
pub mod watch;

use error::{Exit, exit_of, report};

/// Runs hal with parsed arguments and returns the exit code.
pub async fn run(cli: cli::Cli) -> Exit {
    // A completion script needs no config, inventory or engine: a broken config must not stop it.
    if let cli::Command::Completions(a) = &cli.command {
        return cmd::completions::run(&a.shell).unwrap_or_else(|e| {
            report(&e);
            exit_of(&e)
        });
    }
    let ui = cmd::ctx::printer(&cli.global);
    let ctx = match cmd::ctx::Ctx::new(ui.clone(), &cli.global) {
        Ok(c) => c,
        // A bad config: no command ran, and the printer says so as asked.
        Err(e) => return ui.error(&anyhow::Error::new(e)),
    };
    // `logs -f` and `watch` end on Ctrl-C or SIGTERM by design; every other
    // command is interrupted (exit 130, or 143 for SIGTERM), dropping its
    // futures: child processes are killed and locks released.
    let own_interrupt = cli.command.ends_on_interrupt();
    let work = cmd::dispatch(&ctx, cli.command);
    let result = if own_interrupt {
        work.await
    } else {
        tokio::select! {
            r = work => r,
            e = util::signals::stop_requested() => Err(e.into()),
        }
    };
    match result {
        Ok(code) => code,
        // A command returns an error only when it stopped before its own
        // report (no such module, engine unreachable, a usage error hal
        // found): under --json, scripts get the error document instead.
        Err(e) => ctx.ui.error(&e),
    }
}
