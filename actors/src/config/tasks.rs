//! `[tasks]`: the Tasks extension (`io.modelcontextprotocol/tasks`).

use serde::{Deserialize, Serialize};

use super::{HubBackend, TasksStore};

/// `[tasks]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TasksConfig {
    /// Offer the extension in `server/discover` and serve `tasks/*`.
    /// Default: true.
    pub enabled: bool,
    /// Where tasks live: `memory` (this process) or `redis` (at
    /// `hub.redis_url`, under `hub.redis_channel_prefix`: every instance
    /// answers for every task). Empty (default): `redis` when
    /// `hub.backend = "redis"`, else `memory`.
    pub store: TasksStore,
    /// At most this many unexpired tasks are kept; past it a call that must
    /// be a task is refused (-32000, HTTP 429: the server is loaded, try
    /// later) and one that may be is answered in the call. Default: 10000.
    pub max_tasks: usize,
    /// At most this many unexpired tasks per authenticated caller (the
    /// identity's issuer and subject), so that one caller cannot fill the
    /// store for everyone; past it the caller's calls are treated as when
    /// the store is full. Without authorization there is no caller to tell
    /// apart and `max_tasks` alone applies. 0: no share. Default: 100.
    pub max_tasks_per_subject: usize,
    /// A task's `ttlMs`: it is kept (and its result readable) this long
    /// after its creation. Default: 3600000 (1 h).
    pub ttl_ms: u64,
    /// The `pollIntervalMs` suggested to clients. Default: 500.
    pub poll_interval_ms: u64,
    /// A task-capable call whose handler neither answers nor calls
    /// `begin_task` within this many ms becomes a task. Default: 100.
    pub task_after_ms: u64,
    /// Prepended to task ids as `PREFIX.` (letters, digits, `-`), so that a
    /// load balancer can send `tasks/*` to the instance holding the task by
    /// its `Mcp-Name` header (`config/nginx.conf` shows how) when tasks
    /// live in memory. Empty (default): bare UUIDs.
    pub id_prefix: String,
    /// A running task's instance renews its claim this often over (every
    /// third of it); a task whose claim ran out (its instance died) reads
    /// `failed` to whoever reads it next. Default: 15000.
    pub lease_ms: u64,
}

impl TasksConfig {
    /// Whether tasks live in Redis, given the hub's backend.
    pub fn in_redis(&self, hub_backend: HubBackend) -> bool {
        match self.store {
            TasksStore::Redis => true,
            TasksStore::Memory => false,
            TasksStore::Auto => hub_backend == HubBackend::Redis,
        }
    }
}

impl Default for TasksConfig {
    fn default() -> Self {
        TasksConfig {
            enabled: true,
            store: TasksStore::Auto,
            max_tasks: 10_000,
            max_tasks_per_subject: 100,
            ttl_ms: 3_600_000,
            poll_interval_ms: 500,
            task_after_ms: 100,
            id_prefix: String::new(),
            lease_ms: 15_000,
        }
    }
}
