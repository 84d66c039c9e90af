//! The `hal` binary: parse, run on tokio, exit with the spec's code.

fn main() -> std::process::ExitCode {
    hal::cli::complete::from_env();
    let cli = match hal::cli::parse::parse_from(std::env::args_os()) {
        Ok(cli) => cli,
        Err(e) => return usage_error(&e),
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

/// clap's own error (or `--help`/`--version`), printed as clap prints it; a
/// usage error under `--json` also gets the error document on stdout.
fn usage_error(e: &clap::Error) -> std::process::ExitCode {
    let code = u8::try_from(e.exit_code()).unwrap_or(2);
    if e.use_stderr() && hal::cli::parse::wants_json(std::env::args_os()) {
        hal::output::ui::error_document(code, &hal::cli::parse::message(e));
    }
    let _ = e.print();
    std::process::ExitCode::from(code)
}
