//! Every path into the hal library that the tests use, and only here: when a
//! module of `src/` moves, this file follows it and no test changes.

pub use hal::cli::Cli;
pub use hal::config::{Config, RestartLimit};
pub use hal::duration;
pub use hal::logline::{Assembler, MAX_LINE, Stream};
pub use hal::name::is_valid as is_valid_name;
pub use hal::store::parse_state;
pub use hal::timefmt;
