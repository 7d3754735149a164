//! [`RedisBackend`]: carries hub events between server instances over Redis
//! pub/sub, so a change observed on one instance reaches `subscriptions/listen`
//! streams held open on the others.
//!
//! - Each instance publishes its local events once (compact, versioned
//!   [`WireEvent`]s tagged with its origin) and delivers them locally at once;
//!   events received from Redis are delivered to local listeners only, and an
//!   instance's own events coming back are skipped.
//! - A change observed in a source every instance watches (one shared
//!   directory) carries an observation key (the file's modification time and
//!   size); the same key seen again within `hub.dedup_ms` is dropped, so each
//!   listener still gets each change once. Changes an instance makes itself
//!   carry no key and are never coalesced.
//! - Redis outage: local delivery goes on; publishing is skipped (counted); the
//!   subscriber reconnects with exponential backoff (100 ms to 5 s) and, once
//!   back, asks the hub for a conservative [`Resync`]: every local listener
//!   gets the list_changed notifications it opted into. No request fails
//!   because Redis is down.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_protocol::subscription::{Event, WireEvent};
use mcp_protocol::trace::TraceContext;
use slog::{debug, info, warn, Logger};
use tokio::sync::mpsc;

use crate::config::RedisTarget;
use crate::hub::redis_link::RedisLink;
use crate::hub::redis_subscription::{subscribe_forever, Subscription};
use crate::hub::{HubBackend, HubInbox, RemoteEvent, Resync};

/// Counters of the Redis backend.
pub type RedisStats = crate::hub::BackendStats;

/// The Redis pub/sub hub backend.
pub struct RedisBackend {
    link: RedisLink,
    channel: String,
    origin: String,
    dedup: Duration,
    recent: HashMap<(Event, String), Instant>,
    outbox: Option<mpsc::Sender<Vec<u8>>>,
    stats: Arc<RedisStats>,
}

impl RedisBackend {
    /// A backend for the Redis at `target` (a URL, or a Sentinel master)
    /// publishing on `{prefix}:events`, coalescing duplicates within `dedup`.
    pub fn new(target: impl Into<RedisTarget>, prefix: &str, dedup: Duration) -> Result<Self, String> {
        let target = target.into();
        let link = RedisLink::open(&target, Duration::from_millis(1000))
            .map_err(|e| format!("Redis {target}: {e}"))?
            .patient();
        Ok(RedisBackend {
            link,
            channel: format!("{prefix}:events"),
            origin: uuid::Uuid::new_v4().simple().to_string(),
            dedup,
            recent: HashMap::new(),
            outbox: None,
            stats: Arc::new(RedisStats::default()),
        })
    }

    /// The counters.
    pub fn stats(&self) -> Arc<RedisStats> {
        self.stats.clone()
    }

    /// False for a second copy of the same keyed observation within the
    /// window; unkeyed events (changes made by an instance) are always fresh.
    fn fresh(&mut self, event: &Event, key: Option<&str>) -> bool {
        let Some(key) = key else { return true };
        let now = Instant::now();
        if self.recent.len() > 4096 {
            let window = self.dedup;
            self.recent.retain(|_, at| now.duration_since(*at) < window);
        }
        let k = (event.clone(), key.to_owned());
        match self.recent.get(&k) {
            Some(at) if now.duration_since(*at) < self.dedup => {
                self.stats.deduplicated.fetch_add(1, Ordering::Relaxed);
                false
            }
            _ => {
                self.recent.insert(k, now);
                true
            }
        }
    }
}

async fn publisher(
    link: RedisLink,
    channel: String,
    mut rx: mpsc::Receiver<Vec<u8>>,
    stats: Arc<RedisStats>,
    log: Logger,
) {
    while let Some(payload) = rx.recv().await {
        let mut result = publish(&link, &channel, &payload).await;
        if result.is_err() {
            // The connection may predate an outage or a failover: once more.
            result = publish(&link, &channel, &payload).await;
        }
        match result {
            Ok(_) => {
                stats.published.fetch_add(1, Ordering::Relaxed);
            }
            Err(e) => {
                stats.publish_failures.fetch_add(1, Ordering::Relaxed);
                debug!(log, "redis publish failed; event delivered locally only"; "error" => %e);
            }
        }
    }
}

/// Publishes `payload` on `channel` through `link`'s connection (at once
/// an error while Redis counts as unreachable).
async fn publish(link: &RedisLink, channel: &str, payload: &[u8]) -> redis::RedisResult<i64> {
    let (channel, payload) = (channel.to_owned(), payload.to_vec());
    link.with_connection(move |mut con| async move {
        redis::cmd("PUBLISH").arg(channel).arg(payload).query_async::<i64>(&mut con).await
    })
    .await
}

async fn subscriber(
    link: RedisLink,
    channel: String,
    origin: String,
    hub: HubInbox,
    stats: Arc<RedisStats>,
    log: Logger,
) {
    // Whether an outage came before: then the listeners resync on return.
    let mut missed = false;
    subscribe_forever(link, vec![channel.clone()], |event| match event {
        Subscription::Subscribed => {
            stats.connected.store(true, Ordering::Release);
            if missed {
                stats.resyncs.fetch_add(1, Ordering::Relaxed);
                info!(log, "redis subscription restored; resyncing local listeners"; "channel" => &channel);
                hub.resync.do_send(Resync);
            } else {
                info!(log, "redis subscription established"; "channel" => &channel);
            }
        }
        Subscription::Message(_, payload) => match WireEvent::decode(payload) {
            Ok(w) if w.o == origin => {}
            Ok(w) => {
                stats.received.fetch_add(1, Ordering::Relaxed);
                hub.events.do_send(RemoteEvent { event: w.e, key: w.k, trace: w.t });
            }
            Err(e) => warn!(log, "ignoring a message on the hub channel"; "error" => e),
        },
        Subscription::Lost(error) => {
            match &error {
                None => warn!(log, "redis subscription lost; local delivery continues"; "channel" => &channel),
                Some(e) if !missed => {
                    warn!(log, "redis unavailable; local delivery continues, retrying"; "error" => %e)
                }
                Some(_) => {}
            }
            missed = true;
            stats.connected.store(false, Ordering::Release);
            stats.outages.fetch_add(1, Ordering::Relaxed);
        }
    })
    .await
}

impl HubBackend for RedisBackend {
    fn stats(&self) -> Option<Arc<RedisStats>> {
        Some(self.stats.clone())
    }

    fn start(&mut self, hub: HubInbox, log: &Logger) {
        let (tx, rx) = mpsc::channel(4096);
        self.outbox = Some(tx);
        actix_rt::spawn(publisher(self.link.clone(), self.channel.clone(), rx, self.stats.clone(), log.clone()));
        actix_rt::spawn(subscriber(
            self.link.clone(),
            self.channel.clone(),
            self.origin.clone(),
            hub,
            self.stats.clone(),
            log.clone(),
        ));
    }

    fn publish(&mut self, event: Event, key: Option<&str>, trace: Option<&TraceContext>) -> Vec<Event> {
        if let Some(tx) = &self.outbox
            && tx.try_send(WireEvent::encode(&self.origin, &event, key, trace)).is_err()
        {
            self.stats.publish_failures.fetch_add(1, Ordering::Relaxed);
        }
        if self.fresh(&event, key) {
            vec![event]
        } else {
            Vec::new()
        }
    }

    fn accept_remote(&mut self, event: &Event, key: Option<&str>) -> bool {
        self.fresh(event, key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coalesces_only_identical_observations() {
        let mut b = RedisBackend::new("redis://127.0.0.1:1/", "t", Duration::from_secs(60)).unwrap();
        let e = Event::ResourceUpdated { uri: "x".into() };
        assert_eq!(b.publish(e.clone(), Some("mtime-1"), None), vec![e.clone()]);
        assert!(!b.accept_remote(&e, Some("mtime-1")), "the same change seen by another instance is delivered once");
        assert!(b.accept_remote(&e, Some("mtime-2")), "a later change of the same file is delivered");
        assert_eq!(b.publish(e.clone(), None, None).len(), 1, "changes made by an instance are never coalesced");
        assert!(b.accept_remote(&e, None));
        assert!(b.accept_remote(&e, None));
    }
}
