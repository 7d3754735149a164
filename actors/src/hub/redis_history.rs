//! Event types' histories shared by every instance over Redis
//! (`events.history = "redis"`): one Redis stream per event type,
//! `{prefix}:events:{name}`, trimmed to about the type's history size. What
//! a source emits on any instance is added to the stream (by a writer task
//! draining a bounded queue); every instance tails the stream and mirrors
//! it into the type's log, at positions derived from the stream's entry ids
//! ([`shared_position`](mcp_protocol::events::shared_position)), under an
//! epoch derived from the stream's key — so cursors agree across instances, and every instance sees the
//! occurrences in the same order. The history is shared from the moment the
//! server is built (what is emitted from then on goes to the stream), and
//! mirrored as soon as the stream is read.
//!
//! An occurrence the stream could not take (Redis unreachable) is lost and
//! marked so on this instance (its readers read `truncated`); so is a
//! stretch the tailer could not read. Event types added after the server
//! started keep their history on their instance.

use std::sync::{Arc, Weak};
use std::time::Duration;

use mcp_protocol::events::Occurrence;
use redis::streams::{StreamId, StreamRangeReply, StreamReadOptions, StreamReadReply};
use slog::{warn, Logger};
use tokio::sync::mpsc;

use super::redis_link::RedisLink;
use crate::catalog::{Catalog, EventType, Outgoing};

/// How long a tailer's read waits for a new entry before asking again.
const BLOCK: Duration = Duration::from_millis(1000);
/// After a failed read or write, the wait before the next try.
const RETRY: Duration = Duration::from_millis(500);

/// Shares the history of every event type `catalog` serves now through
/// `[redis]` under `hub.redis_channel_prefix`, each emission queue holding
/// at most `events.history_queue` occurrences; an occurrence emitted with
/// the source's own id ([`EventSource::emit_with_id`](crate::catalog::EventSource::emit_with_id))
/// that was added already within `hub.dedup_ms` (by any instance) is not
/// added again (a source every instance observes, like a shared directory;
/// 0: no such check). The tasks run on an arbiter of their own.
pub(crate) fn share_histories(catalog: &Catalog, config: &crate::config::Config, log: &Logger) -> Result<(), String> {
    let (target, prefix) = (&config.redis_target(), config.hub.redis_channel_prefix.as_str());
    let (queue, dedup_ms) = (config.events.history_queue, config.hub.dedup_ms);
    let types = catalog.event_types();
    if types.is_empty() {
        return Ok(());
    }
    let writes = RedisLink::open(target, Duration::from_millis(2000)).map_err(|e| format!("Redis {target}: {e}"))?;
    let arbiter = actix::Arbiter::new();
    for event_type in types {
        let name = event_type.descriptor().name.clone();
        let stream = format!("{prefix}:events:{name}");
        let (relay, outgoing) = mpsc::channel(queue.max(1));
        if !event_type.share(relay, epoch_of(&stream)) {
            continue;
        }
        // A tailer's blocking read holds its connection: one of its own,
        // with room for the wait in its deadline.
        let reads = RedisLink::open(target, BLOCK + Duration::from_millis(2000)).map_err(|e| e.to_string())?.patient();
        let capacity = event_type.capacity();
        let log = log.new(slog::o!("event_type" => name));
        let share = Arc::new(Share { event_type: Arc::downgrade(&event_type), stream, dedup_ms, log });
        let (writer, writes) = (share.clone(), writes.clone().patient());
        arbiter.spawn(async move { writer.write(outgoing, writes, capacity).await });
        arbiter.spawn(async move { share.tail(reads, capacity).await });
    }
    Ok(())
}

/// One event type's sharing: its writer and its tailer.
struct Share {
    event_type: Weak<EventType>,
    stream: String,
    dedup_ms: u64,
    log: Logger,
}

/// Adds an occurrence (ARGV[1]) to the stream (KEYS[1], trimmed to about
/// ARGV[2] entries) unless its id (KEYS[2]) was added within ARGV[3] ms.
const ADD_ONCE: &str = r"
if redis.call('SET', KEYS[2], '1', 'NX', 'PX', ARGV[3]) then
  return redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[2], '*', 'o', ARGV[1])
end
return false";

impl Share {
    /// Adds what the source emits to the stream, trimmed to about
    /// `capacity` entries; what cannot be added is a loss here.
    async fn write(&self, mut outgoing: mpsc::Receiver<Outgoing>, writes: RedisLink, capacity: usize) {
        while let Some(next) = outgoing.recv().await {
            let key = self.stream.clone();
            let added = match next {
                Outgoing::Occurrence(o, true) if self.dedup_ms > 0 => {
                    let seen = format!("{key}:seen:{}", o.event_id);
                    let body = serde_json::to_string(&o).unwrap_or_default();
                    let dedup_ms = self.dedup_ms;
                    writes
                        .with_connection(move |mut con| async move {
                            let mut eval = redis::cmd("EVAL");
                            eval.arg(ADD_ONCE).arg(2).arg(&key).arg(&seen).arg(&body).arg(capacity).arg(dedup_ms);
                            eval.query_async::<Option<String>>(&mut con).await.map(drop)
                        })
                        .await
                }
                Outgoing::Occurrence(o, _) => {
                    add(&writes, key, capacity, ("o", serde_json::to_string(&o).unwrap_or_default())).await
                }
                Outgoing::Loss => add(&writes, key, capacity, ("lost", "1".to_owned())).await,
            };
            if let Err(e) = added {
                warn!(self.log, "an occurrence could not be added to the shared history: lost"; "error" => %e);
                match self.event_type.upgrade() {
                    Some(event_type) => event_type.lose_here(),
                    None => return,
                }
            }
        }
    }

    /// Mirrors the stream into the type's log: its last `capacity` entries
    /// first, then each new one as it comes.
    async fn tail(&self, reads: RedisLink, capacity: usize) {
        let mut last = loop {
            match self.warm(&reads, capacity).await {
                Ok(last) => break last,
                Err(e) => {
                    warn!(self.log, "the shared event history could not be read; retrying"; "error" => %e);
                    tokio::time::sleep(RETRY).await;
                }
            }
            if self.event_type.strong_count() == 0 {
                return;
            }
        };
        loop {
            let key = self.stream.clone();
            let from = last.clone();
            let read = reads
                .with_connection(move |mut con| async move {
                    let options = StreamReadOptions::default().block(BLOCK.as_millis() as usize).count(256);
                    redis::AsyncCommands::xread_options::<_, _, Option<StreamReadReply>>(
                        &mut con,
                        &[key],
                        &[from],
                        &options,
                    )
                    .await
                })
                .await;
            let Some(event_type) = self.event_type.upgrade() else { return };
            match read {
                Ok(reply) => {
                    for entry in reply.into_iter().flat_map(|r| r.keys).flat_map(|k| k.ids) {
                        mirror(&event_type, &entry);
                        last = entry.id;
                    }
                }
                Err(e) => {
                    warn!(self.log, "the shared event history could not be read; what it missed is a gap"; "error" => %e);
                    event_type.lose_here();
                    drop(event_type);
                    tokio::time::sleep(RETRY).await;
                }
            }
        }
    }

    /// The stream's last `capacity` entries, mirrored; the id of the last
    /// one (`0-0` when there is none).
    async fn warm(&self, reads: &RedisLink, capacity: usize) -> redis::RedisResult<String> {
        let key = self.stream.clone();
        let newest: StreamRangeReply = reads
            .with_connection(move |mut con| async move {
                redis::AsyncCommands::xrevrange_count(&mut con, key, "+", "-", capacity).await
            })
            .await?;
        let Some(event_type) = self.event_type.upgrade() else { return Ok("0-0".into()) };
        let mut last = "0-0".to_owned();
        // A full page: the stream may hold older entries this mirror lacks.
        if newest.ids.len() >= capacity
            && let Some((first, _)) = newest.ids.last().and_then(|e| position(&e.id))
        {
            event_type.forget_before(first);
        }
        for entry in newest.ids.iter().rev() {
            mirror(&event_type, entry);
            last = entry.id.clone();
        }
        event_type.mirrored();
        Ok(last)
    }
}

/// The epoch every instance's cursors of the stream carry: derived from
/// its key, the same on every instance.
fn epoch_of(stream: &str) -> u64 {
    let digest = hmac_sha256::Hash::hash(stream.as_bytes());
    u64::from_be_bytes(digest[..8].try_into().unwrap_or_default()) >> 1
}

/// Adds one entry of one field to the stream `key`, trimmed to about
/// `capacity` entries.
async fn add(
    writes: &RedisLink,
    key: String,
    capacity: usize,
    field: (&'static str, String),
) -> redis::RedisResult<()> {
    writes
        .with_connection(move |mut con| async move {
            let trim = redis::streams::StreamMaxlen::Approx(capacity);
            redis::AsyncCommands::xadd_maxlen::<_, _, _, _, String>(&mut con, key, trim, "*", &[field]).await.map(drop)
        })
        .await
}

/// One stream entry into the type's log.
fn mirror(event_type: &EventType, entry: &StreamId) {
    let Some((seq, at_ms)) = position(&entry.id) else { return };
    // A loss, or not one of ours: a gap rather than a guess.
    let occurrence = entry.get::<String>("o").and_then(|text| serde_json::from_str::<Occurrence>(&text).ok());
    event_type.mirror(seq, occurrence, at_ms);
}

/// A stream entry id (`ms-seq`) as a log position, and its time.
fn position(id: &str) -> Option<(u64, u64)> {
    let (ms, seq) = id.split_once('-')?;
    let (ms, seq): (u64, u64) = (ms.parse().ok()?, seq.parse().ok()?);
    Some((mcp_protocol::events::shared_position(ms, seq), ms))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_ids_become_increasing_positions() {
        let a = position("1767225600000-0").unwrap();
        let b = position("1767225600000-1").unwrap();
        let c = position("1767225600001-0").unwrap();
        assert!(a.0 < b.0 && b.0 < c.0);
        assert_eq!(a.1, 1_767_225_600_000);
        assert!(position("nonsense").is_none() && position("1-x").is_none());
        assert_eq!(epoch_of("p:events:mail"), epoch_of("p:events:mail"));
        assert_ne!(epoch_of("p:events:mail"), epoch_of("q:events:mail"));
    }
}
