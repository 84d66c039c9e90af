//! hal: one binary that gives every module on a node the same verbs.
//!
//! The binary (`main.rs`) only parses the command line and maps the result to
//! an exit code; everything else lives in these modules, private to the
//! library: what the binary and the integration tests reach is `paths`, so the
//! compiler sees every other item's use (or its death).

mod cli;
mod cmd;
mod docker;
mod error;
mod host;
mod logs;
mod module;
mod output;
mod run;
mod stack;
mod state;
mod util;
mod watch;

/// Every path into the library from outside it, and only these: `main.rs`'s
/// (parse, clap's errors in hal's colours) and the integration tests'
/// (`tests/integration/lib_paths.rs` re-exports them for the tests).
pub mod paths {
    pub use crate::cli::parse::{message, parse_from, wants_json};
    pub use crate::cli::{Cli, complete_from_env};
    pub use crate::logs::line::{Assembler, MAX_LINE, Stream};
    pub use crate::module::config::{
        Config, DEFAULT_PULL_TIMEOUT, DEFAULT_TIMEOUT, PullPolicy, RestartLimit,
    };
    pub use crate::module::keys::{self, KEYS, Table};
    pub use crate::module::name::is_valid as is_valid_name;
    pub use crate::output::color::{self, Colors};
    pub use crate::output::ui::error_document;
    pub use crate::state::records::parse_state;
    pub use crate::util::{duration, timefmt};
}

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
    let ui = cmd::ctx::printer(&cli);
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
