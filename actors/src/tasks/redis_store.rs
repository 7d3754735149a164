//! [`RedisStore`]: tasks in Redis, so that every instance answers for every
//! task. A task is one JSON value at `{prefix}:task:{id}` expiring with its
//! `ttlMs`; a sorted set of their keys by expiry bounds the count
//! (`tasks.max_tasks`, across instances), and one per owner bounds each
//! caller's share (`tasks.max_tasks_per_subject`); changes are compare-and-set
//! (a Lua script replaces the value only if it is still the one read), and
//! `tasks/cancel` reaches the instance running a task on
//! `{prefix}:task-cancel`.

use std::sync::Arc;
use std::time::Duration;

use futures::future::{BoxFuture, FutureExt};
use redis::aio::ConnectionManager;
use slog::{info, warn, Logger};

use super::record::TaskRecord;
use super::store::{Change, StoreError, TaskStore};
use crate::facts::clock::Clock;
use crate::hub::redis_link::{replicated, RedisLink, WAIT_SHORT};
use crate::hub::redis_subscription::{subscribe_forever, Subscription};

/// Stores a task if the store (KEYS[2]) and, when the task has an owner
/// and a share is set (ARGV[6] > 0), its owner's index (KEYS[3]) are below
/// their limits: 1 stored, 0 the store is full, 2 the owner's share is.
const CREATE: &str = r"
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[3])
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[4]) then return 0 end
local share = tonumber(ARGV[6])
if share > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', ARGV[3])
  if redis.call('ZCARD', KEYS[3]) >= share then return 2 end
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('ZADD', KEYS[2], ARGV[5], KEYS[1])
if share > 0 then
  redis.call('ZADD', KEYS[3], ARGV[5], KEYS[1])
  redis.call('PEXPIRE', KEYS[3], ARGV[2])
end
return 1";

const SWAP: &str = r"
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[2], 'KEEPTTL')
  return 1
end
return 0";

/// Tasks in Redis.
pub struct RedisStore {
    link: RedisLink,
    /// Writes: `link` itself, or a connection of their own when they wait
    /// for replicas (a `WAIT` holds its connection; reads must not queue
    /// behind it).
    writes: RedisLink,
    prefix: String,
    max: usize,
    /// At most this many unexpired tasks per owner (0: no share).
    share: usize,
    clock: Arc<dyn Clock>,
    /// After each write, wait until this many replicas hold it, at most
    /// this long (`redis.min_replicas`, `redis.wait_timeout_ms`).
    wait: Option<(u32, u64)>,
}

impl RedisStore {
    /// A store in the Redis at `target` (a URL, or a Sentinel master) under
    /// `{prefix}:task…`, bounded to `max` unexpired tasks in all. Connects
    /// on first use.
    pub fn new(
        target: impl Into<crate::config::RedisTarget>,
        prefix: &str,
        max: usize,
        clock: Arc<dyn Clock>,
    ) -> Result<Self, String> {
        let target = target.into();
        let link = RedisLink::open(&target, Duration::from_millis(2000)).map_err(|e| format!("Redis {target}: {e}"))?;
        Ok(RedisStore { writes: link.clone(), link, prefix: prefix.to_owned(), max, share: 0, clock, wait: None })
    }

    /// This store, each write of which waits until `replicas` replicas hold
    /// it, at most `timeout_ms` (0 replicas: no wait).
    #[must_use]
    pub fn with_wait(mut self, replicas: u32, timeout_ms: u64) -> Self {
        self.wait = (replicas > 0).then_some((replicas, timeout_ms));
        if self.wait.is_some() {
            metrics::counter!(WAIT_SHORT).increment(0);
            self.writes = self.link.another();
        }
        self
    }

    /// This store, holding at most `share` unexpired tasks of any one owner
    /// (0: no share), across instances.
    #[must_use]
    pub fn with_share(mut self, share: usize) -> Self {
        self.share = share;
        self
    }

    /// The index of one owner's tasks: keyed by a digest of the owner, so
    /// that any issuer and subject make a short, safe key.
    fn owner_index(&self, owner: &str) -> String {
        let digest = hmac_sha256::Hash::hash(owner.as_bytes());
        let hex: String = digest[..16].iter().map(|b| format!("{b:02x}")).collect();
        format!("{}:tasks-of:{hex}", self.prefix)
    }

    fn key(&self, id: &str) -> String {
        format!("{}:task:{id}", self.prefix)
    }

    fn connection(&self) -> BoxFuture<'static, Result<ConnectionManager, StoreError>> {
        self.link.connection().map(|c| c.map_err(unavailable)).boxed()
    }
}

fn unavailable(e: redis::RedisError) -> StoreError {
    StoreError::Unavailable(format!("Redis: {e}"))
}

fn decode(text: &str) -> Result<TaskRecord, StoreError> {
    serde_json::from_str(text).map_err(|e| StoreError::Unavailable(format!("a stored task does not decode: {e}")))
}

impl TaskStore for RedisStore {
    fn create(&self, record: TaskRecord) -> BoxFuture<'static, Result<(), StoreError>> {
        let (key, index, max, now) =
            (self.key(&record.id), format!("{}:tasks", self.prefix), self.max, self.clock.now_ms());
        // Unowned tasks (no authorization) have no share.
        let (owned, share) = match &record.owner {
            Some(owner) if self.share > 0 => (self.owner_index(owner), self.share),
            _ => (format!("{}:tasks-unowned", self.prefix), 0),
        };
        let json = match serde_json::to_string(&record) {
            Ok(json) => json,
            Err(e) => return futures::future::ready(Err(StoreError::Unavailable(e.to_string()))).boxed(),
        };
        let expiry = record.created_ms.saturating_add(record.ttl_ms);
        let ttl = expiry.saturating_sub(now).max(1);
        let wait = self.wait;
        let stored = self.writes.with_connection(move |mut con| async move {
            let stored: i64 = redis::cmd("EVAL")
                .arg(CREATE)
                .arg(3)
                .arg(&key)
                .arg(&index)
                .arg(&owned)
                .arg(json)
                .arg(ttl)
                .arg(now)
                .arg(max)
                .arg(expiry)
                .arg(share)
                .query_async(&mut con)
                .await?;
            if stored == 1 {
                replicated(&mut con, wait).await;
            }
            Ok(stored)
        });
        async move {
            match stored.await.map_err(unavailable)? {
                1 => Ok(()),
                2 => Err(StoreError::ShareFull(share)),
                _ => Err(StoreError::Full(max)),
            }
        }
        .boxed()
    }

    fn get(&self, id: &str) -> BoxFuture<'static, Result<Option<TaskRecord>, StoreError>> {
        let (key, now) = (self.key(id), self.clock.now_ms());
        let text = self.link.with_connection(move |mut con| async move {
            redis::cmd("GET").arg(&key).query_async::<Option<String>>(&mut con).await
        });
        async move {
            match text.await.map_err(unavailable)? {
                Some(t) => Ok(Some(decode(&t)?).filter(|r| !r.expired(now))),
                None => Ok(None),
            }
        }
        .boxed()
    }

    fn update(&self, id: &str, change: Change) -> BoxFuture<'static, Result<Option<(TaskRecord, bool)>, StoreError>> {
        let (key, now, wait) = (self.key(id), self.clock.now_ms(), self.wait);
        // Shared: the work may run twice (on a new connection).
        let change = Arc::new(change);
        // Redis's failures outside, the update's own inside.
        let updated = self.writes.with_connection(move |mut con| async move {
            // The change is applied to the value read, and written only if
            // nobody wrote in between; on a race it is applied again to the
            // newer value.
            for _ in 0..16 {
                let text: Option<String> = redis::cmd("GET").arg(&key).query_async(&mut con).await?;
                let Some(old) = text else { return Ok(Ok(None)) };
                let mut record = match decode(&old) {
                    Ok(record) => record,
                    Err(e) => return Ok(Err(e)),
                };
                if record.expired(now) {
                    return Ok(Ok(None));
                }
                if !(**change)(&mut record) {
                    return Ok(Ok(Some((record, false))));
                }
                let Ok(new) = serde_json::to_string(&record) else {
                    return Ok(Err(StoreError::Unavailable("a task does not encode".into())));
                };
                let swapped: i64 =
                    redis::cmd("EVAL").arg(SWAP).arg(1).arg(&key).arg(&old).arg(&new).query_async(&mut con).await?;
                if swapped == 1 {
                    replicated(&mut con, wait).await;
                    return Ok(Ok(Some((record, true))));
                }
            }
            Ok(Err(StoreError::Unavailable("a task kept changing under an update".into())))
        });
        async move { updated.await.map_err(unavailable)? }.boxed()
    }

    fn request_cancel(&self, id: &str) -> BoxFuture<'static, Result<(), StoreError>> {
        let (channel, id) = (format!("{}:task-cancel", self.prefix), id.to_owned());
        let published = self.link.with_connection(move |mut con| async move {
            redis::cmd("PUBLISH").arg(&channel).arg(&id).query_async::<i64>(&mut con).await
        });
        async move { published.await.map(|_| ()).map_err(unavailable) }.boxed()
    }

    fn start(&self, cancels: Arc<dyn Fn(&str) + Send + Sync>, log: &Logger) {
        let (client, channel, log) = (self.link.clone(), format!("{}:task-cancel", self.prefix), log.clone());
        let warm = self.connection();
        // A thread of its own: the subscription and the shared connection's
        // driver outlive any worker.
        actix_rt::Arbiter::new().spawn(async move {
            let _ = warm.await;
            subscribe_forever(client, vec![channel.clone()], |event| match event {
                Subscription::Subscribed => info!(log, "task cancellations subscribed"; "channel" => &channel),
                Subscription::Message(_, payload) => {
                    if let Ok(id) = std::str::from_utf8(payload) {
                        cancels(id);
                    }
                }
                Subscription::Lost(None) => {
                    warn!(log, "task cancellation subscription lost; retrying"; "channel" => &channel);
                }
                Subscription::Lost(Some(e)) => {
                    warn!(log, "redis unavailable for task cancellations; retrying"; "error" => %e);
                }
            })
            .await
        });
    }
}
