//! `hal rescue` / `hal module rescue`: find what failed, say the plan, recover it.

use crate::app::Ctx;
use crate::error::{Exit, HalError};

pub async fn run(_ctx: &Ctx, _a: crate::cli::RescueArgs) -> anyhow::Result<Exit> {
    Err(HalError::Usage("not implemented yet".into()).into())
}
