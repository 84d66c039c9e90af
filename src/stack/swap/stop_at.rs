//! A test hook, and nothing else: `HAL_TEST_STOP_AT=STEP` makes hal stop for good right after it wrote an update's step `STEP` to the state, so that a test can kill it there (SIGKILL) and see the next hal finish the transaction (docs/development.md).

/// The environment variable that names the step.
const HOOK: &str = "HAL_TEST_STOP_AT";

/// When `HAL_TEST_STOP_AT` names `step` (just written to the state, where
/// the test sees it): never returns.
pub(crate) async fn pause_if_asked(step: &str) {
    if std::env::var(HOOK).is_ok_and(|s| s == step) {
        loop {
            tokio::time::sleep(std::time::Duration::from_secs(3600)).await;
        }
    }
}
