//! hal: one binary that gives every module on a node the same verbs.
//!
//! The binary (`main.rs`) only parses the command line and maps the result to
//! an exit code; everything else lives in these modules so tests can reach it.

pub mod app;
pub mod cli;
pub mod commands;
pub mod complete;
pub mod compose;
pub mod config;
pub mod credentials;
pub mod digest;
pub mod discovery;
pub mod docker;
pub mod duration;
pub mod error;
pub mod fastpath;
pub mod hosts;
pub mod init;
pub mod logline;
pub mod logstream;
pub mod model;
pub mod name;
pub mod node;
pub mod ops;
pub mod order;
pub mod pull;
pub mod render;
pub mod signals;
pub mod stack;
pub mod stacks;
pub mod store;
pub mod supervisor;
pub mod sys;
pub mod timefmt;
pub mod trust;
pub mod ui;

use error::{Exit, exit_of, report};

/// Runs hal with parsed arguments and returns the exit code.
pub async fn run(cli: cli::Cli) -> Exit {
    // A completion script needs no config, inventory or engine: a broken config must not stop it.
    if let cli::Command::Completions(a) = &cli.command {
        return commands::completions::run(&a.shell).unwrap_or_else(|e| {
            report(&e);
            exit_of(&e)
        });
    }
    let ctx = match app::Ctx::new(&cli.global) {
        Ok(c) => c,
        Err(e) => {
            let e = anyhow::Error::new(e);
            report(&e);
            return exit_of(&e);
        }
    };
    // `logs -f` and `watch` end on Ctrl-C or SIGTERM by design; every other
    // command is interrupted (exit 130, or 143 for SIGTERM), dropping its
    // futures: child processes are killed and locks released.
    let own_interrupt = cli.command.ends_on_interrupt();
    let work = commands::dispatch(&ctx, cli.command);
    let result = if own_interrupt {
        work.await
    } else {
        tokio::select! {
            r = work => r,
            e = signals::stop_requested() => Err(e.into()),
        }
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            report(&e);
            exit_of(&e)
        }
    }
}
