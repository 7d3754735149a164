//! The Tasks extension (`io.modelcontextprotocol/tasks`): a `tools/call`
//! of a tool with [`TaskSupport`](crate::catalog::TaskSupport) may become a
//! task, which the client follows with `tasks/get`, answers with
//! `tasks/update` and stops with `tasks/cancel`.
//!
//! - The handler's side (when the task begins; progress as its status
//!   message) is the context's task link.
//! - [`TaskRecord`] in a [`TaskStore`] ([`MemoryStore`]): the task's state,
//!   durable before the `CreateTaskResult` is sent.
//! - [`TaskActor`]: one actor per running handler; it settles the task when
//!   the handler ends, and its cancellation token fires on `tasks/cancel`.
//! - [`TaskService`]: ties them together for the request handlers.

mod actor;
mod memory;
mod record;
#[cfg(feature = "redis")]
mod redis_store;
mod run;
mod service;
mod store;

pub(crate) use actor::settlement;
pub use actor::TaskActor;
pub use memory::MemoryStore;
pub use record::{TaskCall, TaskRecord};
#[cfg(feature = "redis")]
#[cfg_attr(docsrs, doc(cfg(feature = "redis")))]
pub use redis_store::RedisStore;
pub use run::CancelRun;
pub(crate) use run::{spawn_run, RunOutcome};
pub use service::TaskService;
pub use store::{Change, StoreError, TaskStore};
