//! [`RedisCounters`]: the quotas' counters in Redis, shared by every
//! instance. One script checks every counter a call is counted against and,
//! when none is at its limit, counts the call in each — atomically, so that
//! a limit holds exactly across instances.

use std::time::Duration;

use futures::future::{BoxFuture, FutureExt};

use super::{Count, Counters, Slot};
use crate::hub::redis_link::RedisLink;

/// KEYS: the counters; ARGV: per counter its limit and window (ms). Returns
/// `{0, 0}` when the call was counted, else `{i, ms}`: counter `i` (from 1)
/// is at its limit for `ms` more.
const COUNT: &str = r"
for i, key in ipairs(KEYS) do
  local count = tonumber(redis.call('GET', key) or '0')
  if count >= tonumber(ARGV[2 * i - 1]) then
    local ttl = redis.call('PTTL', key)
    if ttl < 0 then
      ttl = tonumber(ARGV[2 * i])
      redis.call('PEXPIRE', key, ttl)
    end
    return {i, ttl}
  end
end
for i, key in ipairs(KEYS) do
  if redis.call('INCR', key) == 1 then
    redis.call('PEXPIRE', key, ARGV[2 * i])
  end
end
return {0, 0}";

/// Counters in Redis, at `{prefix}:quota:{quota}:{what it counts}`.
pub(crate) struct RedisCounters {
    link: RedisLink,
    prefix: String,
}

impl RedisCounters {
    /// Counters in the Redis at `target` under `prefix`; a count not
    /// answered within `timeout` fails (and, for a second after, every count
    /// fails at once).
    pub(crate) fn new(target: &crate::config::RedisTarget, prefix: &str, timeout: Duration) -> Result<Self, String> {
        let link = RedisLink::open(target, timeout).map_err(|e| format!("Redis {target}: {e}"))?;
        Ok(RedisCounters { link, prefix: prefix.to_owned() })
    }

    /// A counter's Redis key: the quota's name and what it counts (Redis
    /// keys are binary-safe: a caller's identity key goes in as it is).
    fn key(&self, slot: &Slot) -> String {
        let (quota, what) = slot.key.split_once('\n').unwrap_or(("", &slot.key));
        format!("{}:quota:{quota}:{what}", self.prefix)
    }
}

impl Counters for RedisCounters {
    fn count(&self, slots: Vec<Slot>) -> BoxFuture<'static, Result<Count, String>> {
        let mut cmd = redis::cmd("EVAL");
        cmd.arg(COUNT).arg(slots.len());
        for slot in &slots {
            cmd.arg(self.key(slot));
        }
        for slot in &slots {
            cmd.arg(slot.limit).arg(slot.window.as_millis().max(1) as u64);
        }
        let counted =
            self.link.with_connection(move |mut con| async move { cmd.query_async::<(i64, i64)>(&mut con).await });
        async move {
            match counted.await {
                Err(e) => Err(e.to_string()),
                Ok((0, _)) => Ok(Count::Allowed),
                Ok((i, ms)) => Ok(Count::Over {
                    index: (i - 1).max(0) as usize,
                    retry_after: Duration::from_millis(ms.max(1) as u64),
                }),
            }
        }
        .boxed()
    }
}
