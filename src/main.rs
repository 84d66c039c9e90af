//! The `hal` binary: parse, run on tokio, exit with the spec's code.

use clap::Parser;

fn main() -> std::process::ExitCode {
    hal::complete::from_env();
    let cli = hal::cli::Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
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
    // Child processes were started with kill_on_drop; dropping the runtime reaps them.
    drop(runtime);
    std::process::ExitCode::from(code.code())
}
