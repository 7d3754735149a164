//! [`TaskStore`]: where tasks live — in this process ([`MemoryStore`]) or
//! in Redis, so that any instance answers for any task. Every change goes
//! through [`TaskStore::update`], which applies it atomically to the
//! stored record.

use futures::future::BoxFuture;

use super::record::TaskRecord;

/// Why the store could not do something.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreError {
    /// `tasks.max_tasks` unexpired tasks exist already.
    Full(usize),
    /// The backing service failed (the message says how).
    Unavailable(String),
}

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StoreError::Full(max) => write!(f, "the task store holds its maximum of {max} tasks"),
            StoreError::Unavailable(e) => write!(f, "the task store is unavailable: {e}"),
        }
    }
}

/// A change to one record; returns whether it changed anything.
pub type Change = Box<dyn FnOnce(&mut TaskRecord) -> bool + Send>;

/// Where tasks live.
pub trait TaskStore: Send + Sync + 'static {
    /// Stores a new task; resolved once a `get` of it would find it.
    fn create(&self, record: TaskRecord) -> BoxFuture<'static, Result<(), StoreError>>;

    /// The task, if it exists and has not expired.
    fn get(&self, id: &str) -> BoxFuture<'static, Result<Option<TaskRecord>, StoreError>>;

    /// Applies `change` to the task atomically and returns the record after
    /// it, and whether it changed (`None`: no such task).
    fn update(&self, id: &str, change: Change) -> BoxFuture<'static, Result<Option<(TaskRecord, bool)>, StoreError>>;
}
