//! [`MemoryCounters`]: the quotas' counters in this process — one window
//! per key, bounded in number (`quotas_max_keys`).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use futures::future::{BoxFuture, FutureExt};

use super::{Count, Counters, Slot};

/// Ended windows are swept at most this often while the counters are full.
const SWEEP_EVERY: Duration = Duration::from_secs(1);

/// Counters in memory.
pub(crate) struct MemoryCounters {
    max: usize,
    inner: Mutex<Windows>,
}

struct Windows {
    by_key: HashMap<String, Window, foldhash::fast::RandomState>,
    swept: Option<Instant>,
}

/// One counter's window: the calls counted and when it ends.
#[derive(Debug, Clone, Copy)]
struct Window {
    count: u64,
    ends: Instant,
}

impl MemoryCounters {
    /// Counters holding at most `max` windows at once.
    pub(crate) fn new(max: usize) -> Self {
        MemoryCounters { max, inner: Mutex::new(Windows { by_key: HashMap::default(), swept: None }) }
    }

    /// Counts one call against every slot at `now`, unless one is at its limit.
    pub(crate) fn count_at(&self, slots: Vec<Slot>, now: Instant) -> Result<Count, String> {
        let mut w = self.inner.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        for (index, slot) in slots.iter().enumerate() {
            match w.by_key.get(&slot.key) {
                Some(win) if win.ends > now && win.count >= slot.limit => {
                    return Ok(Count::Over { index, retry_after: win.ends - now })
                }
                _ => {}
            }
        }
        let new = slots.iter().filter(|s| !w.by_key.contains_key(&s.key)).count();
        if w.by_key.len() + new > self.max {
            if w.swept.is_none_or(|at| now >= at + SWEEP_EVERY) {
                w.by_key.retain(|_, win| win.ends > now);
                w.swept = Some(now);
            }
            if w.by_key.len() + new > self.max {
                return Err(format!("the in-memory quota counters are full (quotas_max_keys = {})", self.max));
            }
        }
        for slot in slots {
            let fresh = Window { count: 0, ends: now + slot.window };
            let win = w.by_key.entry(slot.key).or_insert(fresh);
            if win.ends <= now {
                *win = fresh;
            }
            win.count += 1;
        }
        Ok(Count::Allowed)
    }
}

impl Counters for MemoryCounters {
    fn count(&self, slots: Vec<Slot>) -> BoxFuture<'static, Result<Count, String>> {
        futures::future::ready(self.count_at(slots, Instant::now())).boxed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slot(key: &str, limit: u64, secs: u64) -> Slot {
        Slot { key: key.into(), limit, window: Duration::from_secs(secs) }
    }

    #[test]
    fn a_window_allows_its_limit_then_refuses_until_it_ends() {
        let c = MemoryCounters::new(10);
        let t0 = Instant::now();
        for _ in 0..3 {
            assert_eq!(c.count_at(vec![slot("a", 3, 10)], t0).unwrap(), Count::Allowed);
        }
        let later = t0 + Duration::from_secs(4);
        let over = c.count_at(vec![slot("a", 3, 10)], later).unwrap();
        assert_eq!(over, Count::Over { index: 0, retry_after: Duration::from_secs(6) });
        // Another key has its own window; the first starts again once ended.
        assert_eq!(c.count_at(vec![slot("b", 3, 10)], later).unwrap(), Count::Allowed);
        let ended = t0 + Duration::from_secs(10);
        assert_eq!(c.count_at(vec![slot("a", 3, 10)], ended).unwrap(), Count::Allowed);
    }

    #[test]
    fn a_call_over_one_of_its_quotas_is_counted_by_none() {
        let c = MemoryCounters::new(10);
        let t0 = Instant::now();
        assert_eq!(c.count_at(vec![slot("tight", 1, 60)], t0).unwrap(), Count::Allowed);
        let both = || vec![slot("loose", 2, 60), slot("tight", 1, 60)];
        for _ in 0..3 {
            assert!(matches!(c.count_at(both(), t0).unwrap(), Count::Over { index: 1, .. }));
        }
        // "loose" counted none of the refused calls: both its calls remain.
        for _ in 0..2 {
            assert_eq!(c.count_at(vec![slot("loose", 2, 60)], t0).unwrap(), Count::Allowed);
        }
        assert!(matches!(c.count_at(vec![slot("loose", 2, 60)], t0).unwrap(), Count::Over { index: 0, .. }));
    }

    #[test]
    fn the_counters_are_bounded_and_swept() {
        let c = MemoryCounters::new(2);
        let t0 = Instant::now();
        c.count_at(vec![slot("a", 5, 1)], t0).unwrap();
        c.count_at(vec![slot("b", 5, 5)], t0).unwrap();
        let e = c.count_at(vec![slot("c", 5, 5)], t0).unwrap_err();
        assert!(e.contains("quotas_max_keys = 2"), "{e}");
        // Known keys still count while full.
        assert_eq!(c.count_at(vec![slot("b", 5, 5)], t0).unwrap(), Count::Allowed);
        // Once "a" ended, a sweep makes room.
        let later = t0 + Duration::from_secs(2);
        assert_eq!(c.count_at(vec![slot("c", 5, 5)], later).unwrap(), Count::Allowed);
    }
}
