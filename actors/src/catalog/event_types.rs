//! Event types (the Events extension, `io.modelcontextprotocol/events`):
//! what `events/list` lists, the history `events/poll` reads, and the
//! [`EventSource`] an author emits occurrences through — from a handler, a
//! background task or anything else that holds it.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_protocol::events::{Delivery, EventDescriptor, EventError, EventLog, Occurrence, Subscription};
use mcp_protocol::ErrorData;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::outcome::object_schema;
use crate::facts::clock::{Clock, SystemClock};

/// How many occurrences an event type keeps for replay unless told
/// ([`EventType::history`]).
pub const DEFAULT_HISTORY: usize = 1000;
/// How long an event type keeps an occurrence for replay unless told.
pub const DEFAULT_RETENTION: Duration = Duration::from_secs(3600);
/// The wait an `events/poll` answer recommends before the next poll
/// (`nextPollMs`) unless told ([`EventType::next_poll`]).
pub const DEFAULT_NEXT_POLL: Duration = Duration::from_secs(5);
/// The most occurrences one `events/poll` answer carries unless told
/// ([`EventType::max_batch`]); a smaller `maxEvents` is honoured.
pub const DEFAULT_MAX_BATCH: usize = 100;
/// The largest occurrence `data`, in bytes of JSON, unless told
/// ([`EventType::max_payload`]): what bounds the memory of a history and of
/// a stream's queue. The design asks payloads to stay small.
pub const DEFAULT_MAX_PAYLOAD: usize = 64 * 1024;

/// Which occurrences one subscription's arguments let through.
pub(super) type Matcher = Box<dyn Fn(&Occurrence) -> bool + Send + Sync>;
/// Reads a subscription's arguments into its matcher, or says why they do
/// not fit the type's `inputSchema`.
type Subscribe = dyn Fn(&Map<String, Value>) -> Result<Matcher, String> + Send + Sync;

/// The queue to a shared history ([`EventType::share`](super::shared_history)).
#[derive(Debug)]
pub(crate) struct Relay(pub(super) tokio::sync::mpsc::Sender<Outgoing>);

/// What a source sends to a shared history.
#[derive(Debug)]
#[cfg_attr(not(feature = "redis"), allow(dead_code))]
pub(crate) enum Outgoing {
    /// An occurrence (without a cursor: the shared history places it), and
    /// whether its id is the source's own (several instances observing one
    /// source give the same, and it is added once).
    Occurrence(Box<Occurrence>, bool),
    /// Occurrences were lost here.
    Loss,
}

/// One event type: its descriptor, how its subscriptions' arguments are
/// read, and the history of its occurrences.
///
/// ```
/// use actix_mcp::prelude::*;
///
/// /// Which mail to hear of.
/// #[derive(Deserialize, JsonSchema)]
/// struct Inbox {
///     /// Only mail from this sender.
///     from: Option<String>,
/// }
///
/// /// A mail that arrived.
/// #[derive(Serialize, JsonSchema)]
/// struct Mail {
///     from: String,
///     subject: String,
/// }
///
/// let catalog = Catalog::new();
/// let mail = EventType::matching::<Inbox, Mail>("mail.received", "A mail arrived", &[Delivery::Poll], |inbox, data| {
///     inbox.from.as_deref().is_none_or(|from| data.get("from").and_then(|f| f.as_str()) == Some(from))
/// });
/// let source = catalog.add_event_type(mail).unwrap();
/// source.emit(Mail { from: "ann@example.com".into(), subject: "hello".into() }).unwrap();
/// ```
pub struct EventType {
    descriptor: EventDescriptor,
    subscribe: Box<Subscribe>,
    next_poll: Duration,
    max_batch: usize,
    max_streams: Option<usize>,
    max_payload: usize,
    history: Mutex<EventLog>,
    /// Bumped by everything a live reader wakes for: an occurrence, a loss,
    /// a failure, the type's removal.
    pulse: tokio::sync::watch::Sender<u64>,
    /// The failures reported so far and the last one.
    failures: Mutex<(u64, Option<ErrorData>)>,
    /// The terminations so far (each ends the streams open then) and the last.
    ends: Mutex<(u64, Option<EventError>)>,
    pub(super) removed: AtomicBool,
    streams: Arc<AtomicUsize>,
    /// Where occurrences go when the history is shared.
    pub(super) relay: std::sync::OnceLock<Relay>,
    /// False while a shared history is not read yet.
    pub(super) ready: tokio::sync::watch::Sender<bool>,
}

impl std::fmt::Debug for EventType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventType").field("name", &self.descriptor.name).finish_non_exhaustive()
    }
}

impl EventType {
    /// An event type whose subscriptions take arguments `A` and whose
    /// occurrences carry a `P` (their schemas are `A`'s and `P`'s); every
    /// occurrence reaches every subscription.
    pub fn new<A, P>(name: impl Into<String>, description: impl Into<String>, delivery: &[Delivery]) -> Self
    where
        A: DeserializeOwned + JsonSchema + Send + Sync + 'static,
        P: JsonSchema,
    {
        Self::matching::<A, P>(name, description, delivery, |_: &A, _: &Map<String, Value>| true)
    }

    /// As [`EventType::new`], where an occurrence reaches a subscription when
    /// `matches(arguments, data)` holds. The predicate runs while the type's
    /// history is locked: it must not emit to the same type. One that
    /// panics matches nothing.
    pub fn matching<A, P>(
        name: impl Into<String>,
        description: impl Into<String>,
        delivery: &[Delivery],
        matches: impl Fn(&A, &Map<String, Value>) -> bool + Send + Sync + 'static,
    ) -> Self
    where
        A: DeserializeOwned + JsonSchema + Send + Sync + 'static,
        P: JsonSchema,
    {
        let matches = Arc::new(matches);
        let subscribe = move |arguments: &Map<String, Value>| -> Result<Matcher, String> {
            let arguments: A = super::arguments::from_value(Value::Object(arguments.clone()))?;
            let matches = matches.clone();
            // An author's predicate that panics (indexing a key the data
            // lacks, say) lets the occurrence through to no one; the
            // subscriber's poll still answers and its cursor moves on.
            Ok(Box::new(move |o: &Occurrence| {
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| matches(&arguments, &o.data))).unwrap_or(false)
            }))
        };
        EventType {
            descriptor: EventDescriptor {
                name: name.into(),
                description: description.into(),
                delivery: delivery.to_vec(),
                input_schema: object_schema::<A>(),
                payload_schema: object_schema::<P>(),
                meta: None,
            },
            subscribe: Box::new(subscribe),
            next_poll: DEFAULT_NEXT_POLL,
            max_batch: DEFAULT_MAX_BATCH,
            max_streams: None,
            max_payload: DEFAULT_MAX_PAYLOAD,
            history: Mutex::new(new_log(DEFAULT_HISTORY, DEFAULT_RETENTION)),
            pulse: tokio::sync::watch::Sender::new(0),
            failures: Mutex::new((0, None)),
            ends: Mutex::new((0, None)),
            removed: AtomicBool::new(false),
            streams: Arc::default(),
            relay: std::sync::OnceLock::new(),
            ready: tokio::sync::watch::Sender::new(true),
        }
    }

    /// Keeps at most `occurrences` (at least one) for at most `retention`.
    #[must_use]
    pub fn history(mut self, occurrences: usize, retention: Duration) -> Self {
        self.history = Mutex::new(new_log(occurrences, retention));
        self
    }

    /// The wait an `events/poll` answer recommends (`nextPollMs`).
    #[must_use]
    pub fn next_poll(mut self, every: Duration) -> Self {
        self.next_poll = every;
        self
    }

    /// The most occurrences one `events/poll` answer carries (at least one).
    #[must_use]
    pub fn max_batch(mut self, occurrences: usize) -> Self {
        self.max_batch = occurrences.max(1);
        self
    }

    /// Occurrences whose `data` is at most `bytes` of JSON; a larger one is
    /// refused by [`EventSource::emit`](super::EventSource::emit).
    #[must_use]
    pub fn max_payload(mut self, bytes: usize) -> Self {
        self.max_payload = bytes;
        self
    }

    /// At most `streams` `events/stream` subscriptions to this type at once
    /// (on this instance); one more is refused with `-32013`
    /// (`{"limit":"subscriptions","max":streams}`). Unbounded unless told,
    /// apart from the server's `events.max_streams`.
    #[must_use]
    pub fn max_streams(mut self, streams: usize) -> Self {
        self.max_streams = Some(streams);
        self
    }

    /// What `events/list` says of this type.
    pub fn descriptor(&self) -> &EventDescriptor {
        &self.descriptor
    }

    /// The matcher of one subscription by `mode`: refused when the type
    /// does not offer the mode (`-32014`) or the arguments do not fit its
    /// `inputSchema` (`-32602`).
    pub(super) fn subscriber(&self, subscription: &Subscription, mode: Delivery) -> Result<Matcher, EventError> {
        if !self.descriptor.offers(mode) {
            return Err(EventError::UnsupportedDelivery { name: self.descriptor.name.clone(), mode });
        }
        (self.subscribe)(&subscription.arguments).map_err(EventError::InvalidParams)
    }

    /// How many occurrences one poll answer may carry, for a poll that
    /// asked for `max_events`.
    pub(crate) fn batch_for(&self, max_events: Option<u64>) -> usize {
        max_events.map_or(self.max_batch, |n| usize::try_from(n).unwrap_or(usize::MAX).min(self.max_batch))
    }

    /// The recommended wait before the next poll, in milliseconds.
    pub(crate) fn next_poll_ms(&self) -> u64 {
        u64::try_from(self.next_poll.as_millis()).unwrap_or(u64::MAX)
    }

    /// The count of this type's open streams, and its cap.
    pub(super) fn stream_places(&self) -> (&Arc<AtomicUsize>, Option<usize>) {
        (&self.streams, self.max_streams)
    }

    pub(super) fn log(&self) -> std::sync::MutexGuard<'_, EventLog> {
        self.history.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(super) fn pulse(&self) -> tokio::sync::watch::Receiver<u64> {
        self.pulse.subscribe()
    }

    /// The number of failures reported so far, and the last.
    pub(super) fn failures(&self) -> (u64, Option<ErrorData>) {
        self.failures.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// The failures, to report one more.
    pub(super) fn failures_mut(&self) -> std::sync::MutexGuard<'_, (u64, Option<ErrorData>)> {
        self.failures.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The largest occurrence `data`, in bytes of JSON.
    pub(super) fn payload_cap(&self) -> usize {
        self.max_payload
    }

    /// The number of terminations so far, and the last.
    pub(super) fn ends(&self) -> (u64, Option<EventError>) {
        self.ends.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Ends every stream open now with `why`.
    pub(super) fn end_streams(&self, why: EventError) {
        {
            let mut ends = self.ends.lock().unwrap_or_else(|p| p.into_inner());
            *ends = (ends.0 + 1, Some(why));
        }
        self.wake_readers();
    }

    pub(super) fn is_removed(&self) -> bool {
        self.removed.load(Ordering::Acquire)
    }

    pub(super) fn wake_readers(&self) {
        self.pulse.send_modify(|n| *n = n.wrapping_add(1));
    }
}

/// The event types of a catalog, by name.
pub(crate) type EventTypes = BTreeMap<String, Arc<EventType>>;

fn new_log(occurrences: usize, retention: Duration) -> EventLog {
    EventLog::new(
        uuid::Uuid::new_v4().as_u64_pair().0,
        occurrences,
        retention.as_millis().try_into().unwrap_or(u64::MAX),
    )
}

/// Milliseconds since the Unix epoch, the time the histories are kept in.
pub(crate) fn now_ms() -> u64 {
    SystemClock.now_ms()
}
