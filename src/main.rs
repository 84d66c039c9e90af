//! The `hal` binary: parse, run on tokio, exit with the spec's code.

use clap::{CommandFactory, FromArgMatches};

use hal::output::color::{self, Colors};

fn main() -> std::process::ExitCode {
    hal::cli::complete_from_env();
    // clap speaks before hal runs: its errors and help get the same colour
    // decision, from a look at `--color` ahead of parsing.
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let colors = Colors::of_process(color::prescan(&args));
    let parsed = hal::cli::Cli::command()
        .try_get_matches_from(&args)
        .and_then(|m| hal::cli::Cli::from_arg_matches(&m));
    let cli = match parsed {
        Ok(cli) => cli,
        Err(e) => return std::process::ExitCode::from(color::clap_exit(&e, colors)),
    };
    // One thread: hal's concurrency is all waiting (sockets, child processes),
    // and one thread spares the cross-thread wake-ups a log stream would pay
    // per line.
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("hal: start the async runtime: {e}");
            return std::process::ExitCode::from(1);
        }
    };
    let code = runtime.block_on(hal::run(cli));
    // Child processes were started with kill_on_drop. A blocking task (a lock
    // wait) must not hold the exit up: give the runtime a moment, no more.
    runtime.shutdown_timeout(std::time::Duration::from_millis(500));
    std::process::ExitCode::from(code.code())
}
