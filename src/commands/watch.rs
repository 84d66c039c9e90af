//! `hal watch`: the long-running supervisor that restarts what fails, within each module's limit.

use crate::app::Ctx;
use crate::error::{Exit, HalError};

pub async fn run(_ctx: &Ctx, _a: crate::cli::WatchArgs) -> anyhow::Result<Exit> {
    Err(HalError::Usage("not implemented yet".into()).into())
}
