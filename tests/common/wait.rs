//! Waiting for the event a test needs instead of sleeping: a probe polled
//! until it reports the event, failing the test with what was awaited (and
//! what was last seen) when it does not come within the deadline.

use std::time::Duration;

/// Calls `probe` every `every` until it gives `Ok`, and returns that value;
/// fails the test after `within`, naming `what` and the last `Err` seen.
pub async fn wait_for<T>(
    what: &str,
    within: Duration,
    every: Duration,
    mut probe: impl AsyncFnMut() -> Result<T, String>,
) -> T {
    let deadline = tokio::time::Instant::now() + within;
    loop {
        match probe().await {
            Ok(value) => return value,
            Err(last) => {
                assert!(tokio::time::Instant::now() < deadline, "not within {within:?}: {what} (last seen: {last})")
            }
        }
        tokio::time::sleep(every).await;
    }
}
