//! Every path into the hal library that the tests use, and only here: when a
//! module of `src/` moves, this file follows it and no test changes.

pub use hal::cli::Cli;
pub use hal::logs::line::{Assembler, MAX_LINE, Stream};
pub use hal::module::config::{
    Config, DEFAULT_PULL_TIMEOUT, DEFAULT_TIMEOUT, PullPolicy, RestartLimit,
};
pub use hal::module::keys::{self, KEYS, Table};
pub use hal::module::name::is_valid as is_valid_name;
pub use hal::state::records::parse_state;
pub use hal::util::duration;
pub use hal::util::timefmt;
