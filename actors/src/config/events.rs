//! `[events]`: how the Events extension's long polls and streams are served
//! (the event types themselves are the catalog's).

use serde::{Deserialize, Serialize};

use super::ConfigError;

/// `[events]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EventsConfig {
    /// An `events/stream` that delivered nothing for this many ms sends
    /// `notifications/events/heartbeat` with its cursor (1..=30000: the
    /// design asks for one at least every 30 s). Default: 15000.
    pub heartbeat_ms: u64,
    /// The longest an `events/poll` is held open waiting for an occurrence:
    /// a larger `timeoutMs` is answered (with `events: []`) after this
    /// many ms, as the design allows; so is every poll within 1 s of
    /// `request.timeout_ms`. Default: 30000.
    pub max_poll_wait_ms: u64,
    /// How long an `events/poll` without `timeoutMs` waits: 0 answers at
    /// once. Default: 0.
    pub default_poll_wait_ms: u64,
    /// At most this many `events/stream` subscriptions open at once on
    /// this instance, whatever their type; one more is refused with
    /// `-32013` (`{"limit":"subscriptions","max":…}`). Streams are not
    /// counted against `stdio.max_in_flight` or `request.timeout_ms`. A
    /// stream whose client reads slowly, or not at all, waits with at most
    /// `request.outbound_buffer` messages queued (each at most its type's
    /// payload cap) and holds its place until the client reads again (it
    /// is then told of what it missed: `active` with `truncated: true`) or
    /// leaves. Default: 10000.
    pub max_streams: usize,
    /// At most this many of them per caller (its identity; every
    /// unauthenticated caller is one, `anonymous`); one more is refused
    /// with `-32013` (`{"limit":"subscriptions_per_caller","max":…}`).
    /// 0: no cap per caller. Default: 0.
    pub max_streams_per_caller: usize,
    /// Where event types' histories live: `"memory"` (each instance its
    /// own), `"redis"` (one per type, shared by every instance over
    /// `[redis]`: a cursor minted on one instance reads on another, and a
    /// stream on one hears what is emitted on another), or `"auto"`:
    /// `"redis"` when `hub.backend = "redis"`. Default: `"auto"`.
    pub history: EventsHistory,
    /// With a shared history, at most this many emitted occurrences of a
    /// type wait to be added to it; past that, `emit` refuses. Default: 1024.
    pub history_queue: usize,
    /// Whether the everything catalog's `events_conformance_*` controls act
    /// (they let any caller end every subscription of a type, allow a
    /// webhook callback origin, send a gap): for conformance runs only.
    /// Default: false.
    pub test_controls: bool,
    /// Webhook subscriptions (`events/subscribe`).
    pub webhooks: super::webhooks::WebhooksConfig,
}

/// `events.history`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EventsHistory {
    /// `"redis"` when the hub's backend is Redis, else `"memory"`.
    #[default]
    Auto,
    /// Each instance keeps its own.
    Memory,
    /// Shared over Redis.
    Redis,
}

impl EventsConfig {
    /// Whether histories are shared over Redis, given the hub's backend.
    pub fn history_in_redis(&self, hub_backend: super::HubBackend) -> bool {
        match self.history {
            EventsHistory::Redis => true,
            EventsHistory::Memory => false,
            EventsHistory::Auto => hub_backend == super::HubBackend::Redis,
        }
    }
}

impl Default for EventsConfig {
    fn default() -> Self {
        EventsConfig {
            heartbeat_ms: 15_000,
            max_poll_wait_ms: 30_000,
            default_poll_wait_ms: 0,
            max_streams: 10_000,
            max_streams_per_caller: 0,
            history: EventsHistory::Auto,
            history_queue: 1024,
            test_controls: false,
            webhooks: Default::default(),
        }
    }
}

impl EventsConfig {
    /// A heartbeat at least every 30 s, and room for a stream.
    pub(super) fn validate(&self) -> Result<(), ConfigError> {
        if !(1..=30_000).contains(&self.heartbeat_ms) {
            return Err(ConfigError(format!("events.heartbeat_ms must be 1..=30000, not {}", self.heartbeat_ms)));
        }
        if self.max_streams == 0 || self.history_queue == 0 {
            return Err(ConfigError("events.max_streams and events.history_queue must be at least 1".into()));
        }
        self.webhooks.validate()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_heartbeat_past_30_s_or_no_room_for_a_stream_is_refused() {
        assert!(EventsConfig::default().validate().is_ok());
        for heartbeat_ms in [0, 30_001] {
            let e = EventsConfig { heartbeat_ms, ..Default::default() }.validate().unwrap_err();
            assert!(e.0.contains("events.heartbeat_ms"), "{e:?}");
        }
        assert!(EventsConfig { max_streams: 0, ..Default::default() }.validate().is_err());
    }
}
