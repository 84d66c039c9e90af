//! The `hal` binary: parse, run on tokio, exit with the spec's code.

use std::ffi::OsString;

use hal::paths::{self, Colors, color};

fn main() -> std::process::ExitCode {
    paths::complete_from_env();
    // clap speaks before hal runs: its errors and help get the same colour
    // decision, from a look at `--color` ahead of parsing.
    let args: Vec<OsString> = std::env::args_os().collect();
    let colors = Colors::of_process(color::prescan(&args));
    let cli = match paths::parse_from(&args) {
        Ok(cli) => cli,
        Err(e) => return usage_error(&e, &args, colors),
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

/// clap's own error (or `--help`/`--version`), printed as the colour decision
/// says, with the exit code clap gives it (0 for help and version, 2 for
/// errors); a usage error under `--json` also gets the error document on stdout.
fn usage_error(e: &clap::Error, args: &[OsString], colors: Colors) -> std::process::ExitCode {
    let code = u8::try_from(e.exit_code()).unwrap_or(2);
    if e.use_stderr() && paths::wants_json(args) {
        paths::error_document(code, &paths::message(e));
    }
    let styled = e.render();
    let text = color::Prerendered {
        plain: styled.to_string(),
        ansi: styled.ansi().to_string(),
        on_stderr: e.use_stderr(),
    };
    color::print_prerendered(&text, colors);
    std::process::ExitCode::from(code)
}
