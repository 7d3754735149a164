//! The suspension window of a webhook subscription: how many attempts
//! failed within the last `suspend_window_ms`, counted by slices of a
//! sixtieth of it, so that the count is bounded whatever the rate.

use std::collections::VecDeque;
use std::time::Duration;

use tokio::time::Instant;

/// The attempts within the suspension window, counted by slices of a
/// sixtieth of it: bounded whatever the rate.
pub(super) struct Window {
    slice: Duration,
    /// (start of the slice, attempts, failures), oldest first.
    slices: VecDeque<(Instant, u64, u64)>,
}

impl Window {
    pub(super) fn new(window: Duration) -> Self {
        Window { slice: (window / 60).max(Duration::from_millis(1)), slices: VecDeque::new() }
    }

    /// Counts an attempt; the attempts and failures within the window.
    pub(super) fn count(&mut self, now: Instant, failed: bool) -> (u64, u64) {
        while self.slices.front().is_some_and(|(start, _, _)| now.duration_since(*start) >= self.slice * 60) {
            self.slices.pop_front();
        }
        match self.slices.back_mut() {
            Some((start, attempts, failures)) if now.duration_since(*start) < self.slice => {
                *attempts += 1;
                *failures += u64::from(failed);
            }
            _ => self.slices.push_back((now, 1, u64::from(failed))),
        }
        self.slices.iter().fold((0, 0), |(a, f), (_, attempts, failures)| (a + attempts, f + failures))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_forgets_what_is_older_than_it_and_stays_bounded() {
        let mut w = Window::new(Duration::from_secs(60));
        let t0 = Instant::now();
        for i in 0..10_000u64 {
            w.count(t0 + Duration::from_millis(i), i % 2 == 0);
        }
        assert!(w.slices.len() <= 61, "{} slices", w.slices.len());
        let (attempts, failures) = w.count(t0 + Duration::from_millis(10_000), true);
        assert_eq!((attempts, failures), (10_001, 5_001));
        let (attempts, _) = w.count(t0 + Duration::from_secs(200), false);
        assert_eq!(attempts, 1, "a window later, only the new attempt counts");
    }
}
