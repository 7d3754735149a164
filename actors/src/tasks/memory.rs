//! [`MemoryStore`]: tasks in this process, bounded by `tasks.max_tasks`,
//! each kept until its `ttlMs` has run out.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use futures::future::{ready, BoxFuture, FutureExt};

use super::record::TaskRecord;
use super::store::{Change, StoreError, TaskStore};
use crate::clock::Clock;

/// Tasks in this process.
pub struct MemoryStore {
    tasks: Mutex<HashMap<String, TaskRecord>>,
    max: usize,
    clock: Arc<dyn Clock>,
}

impl MemoryStore {
    /// A store of at most `max` unexpired tasks, reading time from `clock`.
    pub fn new(max: usize, clock: Arc<dyn Clock>) -> Self {
        MemoryStore { tasks: Mutex::new(HashMap::new()), max, clock }
    }

    fn tasks(&self) -> std::sync::MutexGuard<'_, HashMap<String, TaskRecord>> {
        self.tasks.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn now(&self) -> u64 {
        self.clock.now_ms()
    }
}

impl TaskStore for MemoryStore {
    fn create(&self, record: TaskRecord) -> BoxFuture<'static, Result<(), StoreError>> {
        let now = self.now();
        let mut tasks = self.tasks();
        if tasks.len() >= self.max {
            tasks.retain(|_, t| !t.expired(now));
        }
        let result = if tasks.len() >= self.max {
            Err(StoreError::Full(self.max))
        } else {
            tasks.insert(record.id.clone(), record);
            Ok(())
        };
        ready(result).boxed()
    }

    fn get(&self, id: &str) -> BoxFuture<'static, Result<Option<TaskRecord>, StoreError>> {
        let now = self.now();
        let mut tasks = self.tasks();
        let found = match tasks.get(id) {
            Some(t) if t.expired(now) => {
                tasks.remove(id);
                None
            }
            other => other.cloned(),
        };
        ready(Ok(found)).boxed()
    }

    fn update(&self, id: &str, change: Change) -> BoxFuture<'static, Result<Option<(TaskRecord, bool)>, StoreError>> {
        let now = self.now();
        let mut tasks = self.tasks();
        let out = match tasks.get_mut(id) {
            Some(t) if !t.expired(now) => {
                let changed = change(t);
                Some((t.clone(), changed))
            }
            _ => None,
        };
        ready(Ok(out)).boxed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::ManualClock;
    use mcp_protocol::tasks::TaskStatus;

    fn record(id: &str, now: u64) -> TaskRecord {
        let mut r = crate::tasks::record::tests::record();
        r.id = id.into();
        r.created_ms = now;
        r.ttl_ms = 1_000;
        r
    }

    #[tokio::test]
    async fn bounded_expiring_and_atomic() {
        let clock = Arc::new(ManualClock::at(10_000));
        let store = MemoryStore::new(2, clock.clone());
        store.create(record("a", 10_000)).await.unwrap();
        store.create(record("b", 10_000)).await.unwrap();
        assert_eq!(store.create(record("c", 10_000)).await, Err(StoreError::Full(2)));
        let (after, changed) =
            store.update("a", Box::new(|t| t.settle(TaskStatus::Completed, 10_500))).await.unwrap().unwrap();
        assert!(changed && after.status == TaskStatus::Completed);
        assert!(store.update("nope", Box::new(|_| true)).await.unwrap().is_none());
        // Past its ttlMs a task is gone, and its place is free again.
        clock.advance(1_000);
        assert_eq!(store.get("a").await.unwrap(), None);
        store.create(record("c", 11_000)).await.unwrap();
        assert!(store.get("c").await.unwrap().is_some());
    }
}
