//! `hal module reset-failed`: clear start counts so a held module may start again.

use crate::app::Ctx;
use crate::error::{Exit, HalError};

pub async fn run(_ctx: &Ctx, _a: crate::cli::ResetArgs) -> anyhow::Result<Exit> {
    Err(HalError::Usage("not implemented yet".into()).into())
}
