//! [`Bus`]: a small addressed message bus between server instances, over
//! Redis pub/sub. Each instance has a name (a random id) and an inbox,
//! `{prefix}:inbox:{name}`; a letter goes to one instance's inbox
//! ([`Bus::send`]) or to every instance (`{prefix}:all`,
//! [`Bus::broadcast`]; the sender does not hear its own). Sending is bounded
//! by the link's reply timeout and says when nobody was there to hear a
//! letter (the addressee is gone: Redis counts the subscribers a message
//! reached). Letters received wait in a bounded queue for their handler;
//! past its bound the newest are dropped, and counted
//! (`mcp_server_bus_dropped_total`). What a letter says is its users'
//! business: the bus carries bytes.

use std::sync::Arc;

use slog::{info, warn, Logger};
use tokio::sync::mpsc;

use crate::telemetry::logging::RateLimit;

use super::redis_link::RedisLink;
use super::redis_subscription::{subscribe_forever, Subscription};

/// Letters received and dropped because their queue was full.
pub(crate) const BUS_DROPPED: &str = "mcp_server_bus_dropped_total";

/// Why a letter did not go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum BusError {
    /// No instance of that name listens any more.
    Gone(String),
    /// Redis could not be reached (why).
    Unavailable(String),
}

impl std::fmt::Display for BusError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BusError::Gone(to) => write!(f, "instance {to} is gone"),
            BusError::Unavailable(why) => write!(f, "Redis: {why}"),
        }
    }
}

/// How letters dropped for a full queue are logged: the first of a burst,
/// then at most once a second, each line saying how many drops it left
/// out since the one before.
fn drops_logged() -> RateLimit {
    RateLimit::new(1, std::time::Duration::from_secs(1))
}

/// One instance's end of the bus.
#[derive(Clone)]
pub(crate) struct Bus {
    link: RedisLink,
    prefix: Arc<str>,
    me: Arc<str>,
}

/// A broadcast starts with its sender's name and a newline, so that the
/// sender can skip its own.
fn framed(from: &str, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(from.len() + 1 + payload.len());
    out.extend_from_slice(from.as_bytes());
    out.push(b'\n');
    out.extend_from_slice(payload);
    out
}

impl Bus {
    /// This instance's end of the bus through `link`, under `prefix`.
    pub(crate) fn new(link: RedisLink, prefix: &str) -> Self {
        let me: String = uuid::Uuid::new_v4().simple().to_string().chars().take(12).collect();
        Bus { link, prefix: prefix.into(), me: me.into() }
    }

    /// This instance's name on the bus.
    pub(crate) fn me(&self) -> &str {
        &self.me
    }

    fn inbox(&self, name: &str) -> String {
        format!("{}:inbox:{name}", self.prefix)
    }

    fn all(&self) -> String {
        format!("{}:all", self.prefix)
    }

    /// Sends `payload` to the instance named `to`.
    pub(crate) async fn send(&self, to: &str, payload: Vec<u8>) -> Result<(), BusError> {
        match self.publish(self.inbox(to), payload).await? {
            0 => Err(BusError::Gone(to.to_owned())),
            _ => Ok(()),
        }
    }

    /// Sends `payload` to every other instance.
    pub(crate) async fn broadcast(&self, payload: &[u8]) -> Result<(), BusError> {
        self.publish(self.all(), framed(&self.me, payload)).await.map(drop)
    }

    /// Publishes; how many subscribers heard it.
    async fn publish(&self, channel: String, payload: Vec<u8>) -> Result<i64, BusError> {
        let published = self
            .link
            .with_connection(move |mut con| async move {
                redis::cmd("PUBLISH").arg(channel).arg(payload).query_async::<i64>(&mut con).await
            })
            .await;
        published.map_err(|e| BusError::Unavailable(e.to_string()))
    }

    /// Listens on this instance's inbox and to every instance, for ever
    /// (through outages and failovers), handing each letter to `to`; when
    /// `to` is full the letter is dropped, counted and logged (the first of
    /// a burst, then at most once a second). Spawns on the current runtime.
    pub(crate) fn start(&self, to: mpsc::Sender<Vec<u8>>, log: &Logger) {
        metrics::counter!(BUS_DROPPED).increment(0);
        let (inbox, all, me, log) = (self.inbox(&self.me), self.all(), self.me.clone(), log.clone());
        let channels = vec![inbox.clone(), all];
        let logged = drops_logged();
        actix_rt::spawn(subscribe_forever(self.link.clone(), channels, move |event| match event {
            Subscription::Subscribed => info!(log, "bus subscribed"; "inbox" => &inbox),
            Subscription::Message(channel, payload) => {
                let payload = if channel != inbox {
                    match payload.iter().position(|b| *b == b'\n') {
                        Some(at) if &payload[..at] == me.as_bytes() => return,
                        Some(at) => payload[at + 1..].to_vec(),
                        None => return warn!(log, "ignoring a bus letter without its sender"),
                    }
                } else {
                    payload.to_vec()
                };
                if to.try_send(payload).is_err() {
                    metrics::counter!(BUS_DROPPED).increment(1);
                    if let Some(left_out) = logged.admit() {
                        warn!(log, "bus letter dropped: its queue is full (redis.bus_buffer)"; "left_out" => left_out);
                    }
                }
            }
            Subscription::Lost(Some(e)) => warn!(log, "bus unavailable; retrying"; "error" => %e),
            Subscription::Lost(None) => warn!(log, "bus subscription lost; retrying"),
        }));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_broadcast_names_its_sender() {
        assert_eq!(framed("abc", b"{}"), b"abc\n{}".to_vec());
    }

    /// "logged (the first of a burst, then at most once a second)": a
    /// letter dropped every 10 ms for 3.5 s, the first 300 ms after the bus
    /// began listening — the first drop is logged at once, then one line a
    /// second after the line before (never sooner, the second line
    /// included), each counting the drops left out since; after a quiet
    /// second the first drop of the next burst is logged at once.
    #[test]
    fn dropped_letters_are_logged_the_first_then_at_most_once_a_second() {
        use std::time::{Duration, Instant};
        let logged = drops_logged();
        let first = Instant::now() + Duration::from_millis(300);
        let at = |ms: u64| first + Duration::from_millis(ms);
        let lines: Vec<(u64, u64)> =
            (0..350u64).filter_map(|i| logged.admit_at(at(10 * i)).map(|left_out| (10 * i, left_out))).collect();
        let want: [(u64, u64); 4] = [(0, 0), (1000, 99), (2000, 99), (3000, 99)];
        assert_eq!(lines, want, "(ms after the first drop, drops left out)");
        assert_eq!(logged.admit_at(at(5000)), Some(49), "a new burst's first drop, telling the 49 left out before");
        assert_eq!(logged.admit_at(at(5999)), None, "a second drop within the second");
        assert_eq!(logged.admit_at(at(6000)), Some(1));
    }
}
