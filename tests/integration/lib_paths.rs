//! Every path into the hal library that the tests use, and only here: when a
//! module of `src/` moves, `hal::paths` (src/lib.rs) follows it and no test changes.

pub(crate) use hal::paths::{
    Assembler, Cli, Config, DEFAULT_PULL_TIMEOUT, DEFAULT_TIMEOUT, KEYS, MAX_LINE, PullPolicy,
    RestartLimit, Stream, Table, duration, is_valid_name, keys, parse_state, timefmt,
};
