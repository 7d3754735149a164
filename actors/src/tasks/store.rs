//! [`TaskStore`]: where tasks live — in this process ([`MemoryStore`]) or
//! in Redis, so that any instance answers for any task. Every change goes
//! through [`TaskStore::update`], which applies it atomically to the
//! stored record.

use futures::future::{BoxFuture, FutureExt};

use super::record::TaskRecord;

/// Why the store could not do something.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum StoreError {
    /// `tasks.max_tasks` unexpired tasks exist already.
    Full(usize),
    /// The task's owner has `tasks.max_tasks_per_subject` unexpired tasks
    /// already.
    ShareFull(usize),
    /// The backing service failed (the message says how).
    Unavailable(String),
}

impl StoreError {
    /// Whether the store is at a limit (load, not a fault).
    pub fn is_full(&self) -> bool {
        matches!(self, StoreError::Full(_) | StoreError::ShareFull(_))
    }
}

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StoreError::Full(max) => write!(f, "the task store holds its maximum of {max} tasks"),
            StoreError::ShareFull(max) => write!(f, "the caller has its maximum of {max} unexpired tasks"),
            StoreError::Unavailable(e) => write!(f, "the task store is unavailable: {e}"),
        }
    }
}

/// A change to one record; returns whether it changed anything. A store
/// may apply it more than once (to a newer value, after a concurrent write).
pub type Change = Box<dyn Fn(&mut TaskRecord) -> bool + Send + Sync>;

/// Where tasks live.
pub trait TaskStore: Send + Sync + 'static {
    /// Stores a new task; resolved once a `get` of it would find it.
    fn create(&self, record: TaskRecord) -> BoxFuture<'static, Result<(), StoreError>>;

    /// The task, if it exists and has not expired.
    fn get(&self, id: &str) -> BoxFuture<'static, Result<Option<TaskRecord>, StoreError>>;

    /// Applies `change` to the task atomically and returns the record after
    /// it, and whether it changed (`None`: no such task).
    fn update(&self, id: &str, change: Change) -> BoxFuture<'static, Result<Option<(TaskRecord, bool)>, StoreError>>;

    /// Tells the instance running task `id` to cancel it (a store shared by
    /// instances carries the word; in one process there is nobody else).
    fn request_cancel(&self, id: &str) -> BoxFuture<'static, Result<(), StoreError>> {
        let _ = id;
        futures::future::ready(Ok(())).boxed()
    }

    /// Starts hearing cancellations other instances request (`cancels` is
    /// called with the task id); nothing for a store of one process.
    fn start(&self, cancels: std::sync::Arc<dyn Fn(&str) + Send + Sync>, log: &slog::Logger) {
        let _ = (cancels, log);
    }
}
