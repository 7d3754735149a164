//! [`TaskService`]: the task store, the tasks running here, and their
//! settings — what the request handlers of `tools/call` and `tasks/*` use.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use actix::prelude::*;
use mcp_protocol::subscription::Event;
use mcp_protocol::tasks::TaskStatus;
use serde_json::Map;

use super::memory::MemoryStore;
use super::record::{TaskCall, TaskRecord};
use super::run::CancelRun;
use super::store::{Change, StoreError, TaskStore};
use crate::config::TasksConfig;
use crate::facts::clock::Clock;
use crate::hub::Publish;

/// The tasks of one server.
pub struct TaskService {
    store: Arc<dyn TaskStore>,
    config: TasksConfig,
    clock: Arc<dyn Clock>,
    /// Tasks whose handler runs in this process, by id.
    running: Mutex<HashMap<String, Recipient<CancelRun>>>,
    /// Where status changes are published (the hub).
    notifier: OnceLock<Recipient<Publish>>,
    /// This instance, as a task's runner.
    instance: String,
}

impl std::fmt::Debug for TaskService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskService").field("config", &self.config).finish()
    }
}

impl TaskService {
    /// Tasks kept in this process.
    pub fn in_memory(config: &TasksConfig, clock: Arc<dyn Clock>) -> Self {
        let store =
            Arc::new(MemoryStore::new(config.max_tasks, clock.clone()).with_share(config.max_tasks_per_subject));
        Self::with_store(config, clock, store)
    }

    /// Tasks kept in `store`.
    pub fn with_store(config: &TasksConfig, clock: Arc<dyn Clock>, store: Arc<dyn TaskStore>) -> Self {
        TaskService {
            store,
            config: config.clone(),
            clock,
            running: Mutex::new(HashMap::new()),
            notifier: OnceLock::new(),
            instance: uuid::Uuid::new_v4().simple().to_string(),
        }
    }

    /// Starts hearing cancellations of tasks running here that other
    /// instances receive (a shared store).
    pub fn start(self: &Arc<Self>, log: &slog::Logger) {
        let me = Arc::downgrade(self);
        self.store.start(
            Arc::new(move |id: &str| {
                if let Some(me) = me.upgrade() {
                    me.cancel_running(id);
                }
            }),
            log,
        );
    }

    /// This instance's claim on a task it runs, until a lease from now.
    pub fn lease(&self) -> (String, u64) {
        (self.instance.clone(), self.now().saturating_add(self.config.lease_ms))
    }

    /// Renews this instance's claim on task `id` (written quietly: no
    /// status notification).
    pub async fn renew(&self, id: &str) -> Result<(), StoreError> {
        let lease = self.lease();
        let change = Box::new(move |t: &mut TaskRecord| {
            if t.status != TaskStatus::Working || t.runner.as_ref().is_some_and(|(who, _)| *who != lease.0) {
                return false;
            }
            t.runner = Some(lease.clone());
            true
        });
        self.store.update(id, change).await.map(|_| ())
    }

    /// Asks the instance running task `id` (elsewhere) to cancel it.
    pub async fn request_cancel(&self, id: &str) -> Result<(), StoreError> {
        self.store.request_cancel(id).await
    }

    /// Publishes every status change to `hub` (`notifications/tasks` on the
    /// listen streams that asked for the task). Set once.
    pub fn notify_through(&self, hub: Recipient<Publish>) {
        let _ = self.notifier.set(hub);
    }

    /// The settings.
    pub fn config(&self) -> &TasksConfig {
        &self.config
    }

    /// Now, in ms since the epoch.
    pub fn now(&self) -> u64 {
        self.clock.now_ms()
    }

    /// A new `working` task for `call`, owned by `owner`, with a fresh id
    /// (a UUID v4: 122 random bits, so ids cannot be guessed).
    pub fn new_record(&self, call: TaskCall, owner: Option<String>) -> TaskRecord {
        let now = self.now();
        TaskRecord {
            id: match self.config.id_prefix.as_str() {
                "" => uuid::Uuid::new_v4().to_string(),
                prefix => format!("{prefix}.{}", uuid::Uuid::new_v4()),
            },
            owner,
            status: TaskStatus::Working,
            status_message: None,
            created_ms: now,
            updated_ms: now,
            ttl_ms: self.config.ttl_ms,
            poll_ms: self.config.poll_interval_ms,
            input_requests: Map::new(),
            result: None,
            error: None,
            cancel_requested: false,
            call,
            runner: Some(self.lease()),
        }
    }

    /// Stores a new task (durably: a `get` finds it once this resolves).
    pub async fn create(&self, record: TaskRecord) -> Result<(), StoreError> {
        self.store.create(record).await
    }

    /// The task `id` as the caller with key `owner` ([`Identity::key`](crate::facts::identity::Identity::key))
    /// may see it: another caller's task is as absent as an unknown one.
    /// A working task whose runner's lease ran out (its instance stopped)
    /// is settled `failed` first.
    pub async fn get_for(&self, id: &str, owner: Option<&str>) -> Result<Option<TaskRecord>, StoreError> {
        let Some(record) = self.store.get(id).await?.filter(|t| t.owner.as_deref() == owner) else { return Ok(None) };
        let now = self.now();
        if !abandoned(&record, now) {
            return Ok(Some(record));
        }
        let error = serde_json::to_value(mcp_protocol::ErrorData::internal(
            "the instance running this task stopped (no heartbeat within its lease)",
        ))
        .unwrap_or_default();
        let change = Box::new(move |t: &mut TaskRecord| {
            if !abandoned(t, now) {
                return false;
            }
            t.error = Some(error.clone());
            t.settle(TaskStatus::Failed, now)
        });
        Ok(self.update(id, change).await?.map(|(t, _)| t))
    }

    /// Applies `change` to task `id`; the record after it and whether it changed.
    /// A change is published as a `notifications/tasks` event carrying the
    /// task as `tasks/get` now shows it.
    pub async fn update(&self, id: &str, change: Change) -> Result<Option<(TaskRecord, bool)>, StoreError> {
        let after = self.store.update(id, change).await?;
        if let (Some((record, true)), Some(hub)) = (&after, self.notifier.get()) {
            let task = serde_json::to_value(record.detailed()).unwrap_or_default();
            let event =
                Event::TaskStatus { task_id: record.id.clone(), task: task.to_string(), owner: record.owner.clone() };
            // Status changes are few per task: never dropped.
            hub.do_send(Publish::local(event));
        }
        Ok(after)
    }

    /// A task's handler started running here.
    pub(crate) fn register(&self, id: &str, cancel: Recipient<CancelRun>) {
        self.running.lock().unwrap_or_else(|p| p.into_inner()).insert(id.to_owned(), cancel);
    }

    /// A task's handler here ended.
    pub(crate) fn unregister(&self, id: &str) {
        self.running.lock().unwrap_or_else(|p| p.into_inner()).remove(id);
    }

    /// Fires the cancellation of task `id`'s handler if it runs here;
    /// whether it did.
    pub(crate) fn cancel_running(&self, id: &str) -> bool {
        match self.running.lock().unwrap_or_else(|p| p.into_inner()).get(id) {
            Some(r) => {
                r.do_send(CancelRun);
                true
            }
            None => false,
        }
    }

    /// How many handlers run here now.
    pub fn running_here(&self) -> usize {
        self.running.lock().unwrap_or_else(|p| p.into_inner()).len()
    }
}

/// A working task whose runner's lease ran out.
fn abandoned(t: &TaskRecord, now: u64) -> bool {
    t.status == TaskStatus::Working && t.runner.as_ref().is_some_and(|(_, until)| *until < now)
}
