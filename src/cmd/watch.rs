//! `hal watch`: run the supervisor (see [`crate::watch`]) with the command line's settings.

use crate::cli::WatchArgs;
use crate::cmd::ctx::Ctx;
use crate::error::Exit;
use crate::output::watch_log::Log;

pub(crate) async fn run(ctx: &Ctx, a: WatchArgs) -> anyhow::Result<Exit> {
    ctx.node.store.check_writable()?;
    let how = crate::watch::Watch {
        interval: a.interval,
        resync: a.resync,
        grace: a.grace,
        log: Log::new(&ctx.ui),
        progress: &ctx.ui,
        detail: ctx.ui.status_detail(),
        metrics: a.metrics.or_else(|| ctx.node.config.metrics_file.clone()),
    };
    crate::watch::run(&ctx.node, how).await
}
