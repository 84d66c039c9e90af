//! `hal doctor`: checks the node, one line per check, and says what to fix.

use crate::app::Ctx;
use crate::error::{Exit, HalError};

pub async fn run(_ctx: &Ctx) -> anyhow::Result<Exit> {
    Err(HalError::Usage("not implemented yet".into()).into())
}
