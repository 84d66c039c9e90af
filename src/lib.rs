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

/// Runs hal with parsed arguments and returns the exit code.
pub async fn run(cli: cli::Cli) -> error::Exit {
    cmd::run(cli).await
}
