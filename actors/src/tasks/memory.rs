//! [`MemoryStore`]: tasks in this process, bounded by `tasks.max_tasks`,
//! each kept until its `ttlMs` has run out.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use futures::future::{ready, BoxFuture, FutureExt};

use super::record::TaskRecord;
use super::store::{Change, StoreError, TaskStore};
use crate::facts::clock::Clock;

/// Tasks in this process.
pub struct MemoryStore {
    inner: Mutex<Inner>,
    max: usize,
    /// At most this many per owner (0: no share).
    share: usize,
    clock: Arc<dyn Clock>,
}

#[derive(Default)]
struct Inner {
    tasks: HashMap<String, TaskRecord>,
    /// Unexpired-or-not-yet-swept tasks per owner, kept with `tasks`.
    owned: HashMap<String, usize>,
}

impl Inner {
    fn insert(&mut self, record: TaskRecord) {
        if let Some(owner) = &record.owner {
            *self.owned.entry(owner.clone()).or_default() += 1;
        }
        if let Some(old) = self.tasks.insert(record.id.clone(), record) {
            self.forget_owner(&old);
        }
    }

    fn remove(&mut self, id: &str) {
        if let Some(old) = self.tasks.remove(id) {
            self.forget_owner(&old);
        }
    }

    fn forget_owner(&mut self, record: &TaskRecord) {
        let Some(owner) = &record.owner else { return };
        if let Some(n) = self.owned.get_mut(owner) {
            *n -= 1;
            if *n == 0 {
                self.owned.remove(owner);
            }
        }
    }

    fn sweep(&mut self, now: u64) {
        let expired: Vec<String> = self.tasks.values().filter(|t| t.expired(now)).map(|t| t.id.clone()).collect();
        for id in expired {
            self.remove(&id);
        }
    }

    fn owned_by(&self, owner: Option<&str>) -> usize {
        owner.and_then(|o| self.owned.get(o)).copied().unwrap_or(0)
    }
}

impl MemoryStore {
    /// A store of at most `max` unexpired tasks, reading time from `clock`.
    pub fn new(max: usize, clock: Arc<dyn Clock>) -> Self {
        MemoryStore { inner: Mutex::new(Inner::default()), max, share: 0, clock }
    }

    /// This store, holding at most `share` unexpired tasks of any one owner
    /// (0: no share).
    #[must_use]
    pub fn with_share(mut self, share: usize) -> Self {
        self.share = share;
        self
    }

    fn inner(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn now(&self) -> u64 {
        self.clock.now_ms()
    }
}

impl TaskStore for MemoryStore {
    fn create(&self, record: TaskRecord) -> BoxFuture<'static, Result<(), StoreError>> {
        let now = self.now();
        let mut inner = self.inner();
        let owner = record.owner.as_deref();
        let share_reached = |inner: &Inner| self.share > 0 && inner.owned_by(owner) >= self.share;
        // Expired tasks are swept only when a limit is reached: a create
        // costs a map insert otherwise.
        if inner.tasks.len() >= self.max || share_reached(&inner) {
            inner.sweep(now);
        }
        let result = if inner.tasks.len() >= self.max {
            Err(StoreError::Full(self.max))
        } else if share_reached(&inner) {
            Err(StoreError::ShareFull(self.share))
        } else {
            inner.insert(record);
            Ok(())
        };
        ready(result).boxed()
    }

    fn get(&self, id: &str) -> BoxFuture<'static, Result<Option<TaskRecord>, StoreError>> {
        let now = self.now();
        let mut inner = self.inner();
        let found = match inner.tasks.get(id) {
            Some(t) if t.expired(now) => {
                inner.remove(id);
                None
            }
            other => other.cloned(),
        };
        ready(Ok(found)).boxed()
    }

    fn update(&self, id: &str, change: Change) -> BoxFuture<'static, Result<Option<(TaskRecord, bool)>, StoreError>> {
        let now = self.now();
        let mut inner = self.inner();
        let out = match inner.tasks.get_mut(id) {
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
    use crate::facts::clock::ManualClock;
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

    #[tokio::test]
    async fn one_owner_cannot_take_the_store() {
        let clock = Arc::new(ManualClock::at(10_000));
        let store = MemoryStore::new(10, clock.clone()).with_share(2);
        let owned = |id: &str, owner: Option<&str>| {
            let mut r = record(id, 10_000);
            r.owner = owner.map(str::to_owned);
            r
        };
        store.create(owned("a1", Some("alice"))).await.unwrap();
        store.create(owned("a2", Some("alice"))).await.unwrap();
        assert_eq!(store.create(owned("a3", Some("alice"))).await, Err(StoreError::ShareFull(2)));
        store.create(owned("b1", Some("bob"))).await.unwrap();
        // Unowned tasks (no authorization) have no share.
        for i in 0..3 {
            store.create(owned(&format!("n{i}"), None)).await.unwrap();
        }
        // Alice's tasks expire and her share is free again.
        clock.advance(1_000);
        store.create(owned("a4", Some("alice"))).await.unwrap();
        assert_eq!(store.inner().owned_by(Some("alice")), 1);
        assert_eq!(store.inner().owned_by(Some("bob")), 0, "expired tasks are swept together");
        assert_eq!(store.inner().tasks.len(), 1);
    }
}
