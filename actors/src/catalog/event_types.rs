//! Event types (the Events extension, `io.modelcontextprotocol/events`):
//! what `events/list` lists, the history `events/poll` reads, and the
//! [`EventSource`] an author emits occurrences through — from a handler, a
//! background task or anything else that holds it.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_protocol::events::{
    Batch, Delivery, EventDescriptor, EventError, EventLog, Occurrence, PollParams, ReadRequest,
};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{Map, Value};

use super::outcome::object_schema;
use super::{Catalog, CatalogError};
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

/// Which occurrences one subscription's arguments let through.
type Matcher = Box<dyn Fn(&Occurrence) -> bool + Send + Sync>;
/// Reads a subscription's arguments into its matcher, or says why they do
/// not fit the type's `inputSchema`.
type Subscribe = dyn Fn(&Map<String, Value>) -> Result<Matcher, String> + Send + Sync;

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
    history: Mutex<EventLog>,
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
            history: Mutex::new(new_log(DEFAULT_HISTORY, DEFAULT_RETENTION)),
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

    /// What `events/list` says of this type.
    pub fn descriptor(&self) -> &EventDescriptor {
        &self.descriptor
    }

    /// `events/poll` on this type: the occurrences after the poll's cursor
    /// that its arguments let through, as of now.
    pub(crate) fn poll(&self, poll: &PollParams) -> Result<Batch, EventError> {
        if !self.descriptor.offers(Delivery::Poll) {
            let name = self.descriptor.name.clone();
            return Err(EventError::UnsupportedDelivery { name, mode: Delivery::Poll });
        }
        let subscription = &poll.subscription;
        let matches = (self.subscribe)(&subscription.arguments).map_err(EventError::InvalidParams)?;
        let max_events =
            poll.max_events.map_or(self.max_batch, |n| usize::try_from(n).unwrap_or(usize::MAX).min(self.max_batch));
        let request =
            ReadRequest { cursor: subscription.cursor.as_deref(), max_age_ms: subscription.max_age_ms, max_events };
        Ok(self.log().read(&request, now_ms(), |o| matches(o)))
    }

    /// The recommended wait before the next poll, in milliseconds.
    pub(crate) fn next_poll_ms(&self) -> u64 {
        u64::try_from(self.next_poll.as_millis()).unwrap_or(u64::MAX)
    }

    fn log(&self) -> std::sync::MutexGuard<'_, EventLog> {
        self.history.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The handle occurrences of one event type are emitted through. Cheap to
/// clone; every clone emits into the same history.
#[derive(Clone, Debug)]
pub struct EventSource(Arc<EventType>);

impl EventSource {
    /// Emits one occurrence now, with a fresh id; `data` must serialize to a
    /// JSON object (the type's payload).
    pub fn emit(&self, data: impl Serialize) -> Result<Occurrence, CatalogError> {
        self.emit_with_id(uuid::Uuid::new_v4().to_string(), data)
    }

    /// Emits one occurrence now with the source's own stable id (so that a
    /// subscriber recognises an occurrence it saw before).
    pub fn emit_with_id(&self, event_id: impl Into<String>, data: impl Serialize) -> Result<Occurrence, CatalogError> {
        let name = &self.0.descriptor.name;
        let data = match serde_json::to_value(data) {
            Ok(Value::Object(data)) => data,
            Ok(_) => return Err(CatalogError(format!("an occurrence of `{name}` must carry a JSON object"))),
            Err(e) => return Err(CatalogError(format!("an occurrence of `{name}` does not serialize: {e}"))),
        };
        let now = now_ms();
        Ok(self.0.log().append(Occurrence::new(event_id, name.clone(), now, data), now))
    }

    /// The event type's name.
    pub fn name(&self) -> &str {
        &self.0.descriptor.name
    }
}

/// The event types of a catalog, by name.
pub(crate) type EventTypes = BTreeMap<String, Arc<EventType>>;

impl Catalog {
    /// Adds an event type and returns the source its occurrences are
    /// emitted through. Refused, naming it: a descriptor that breaks the
    /// rules of `events/list` (an empty name or description, no delivery
    /// mode) and a name already taken.
    pub fn add_event_type(&self, event_type: EventType) -> Result<EventSource, CatalogError> {
        event_type.descriptor.validate().map_err(|e| CatalogError(e.0))?;
        let name = event_type.descriptor.name.clone();
        let event_type = Arc::new(event_type);
        let mut taken = false;
        self.event_types.rcu(|types| {
            let mut types = EventTypes::clone(types);
            taken = types.contains_key(&name);
            if !taken {
                types.insert(name.clone(), event_type.clone());
            }
            types
        });
        if taken {
            return Err(CatalogError(format!("an event type named `{name}` is already served")));
        }
        Ok(EventSource(event_type))
    }

    /// Whether the server declares the Events extension: an event type was added.
    pub fn serves_events(&self) -> bool {
        !self.event_types.load().is_empty()
    }

    /// The source of the event type `name`, if one is served.
    pub fn event_source(&self, name: &str) -> Option<EventSource> {
        self.event_type(name).map(EventSource)
    }

    /// The event type `name`, if one is served.
    pub(crate) fn event_type(&self, name: &str) -> Option<Arc<EventType>> {
        self.event_types.load().get(name).cloned()
    }

    /// The descriptors of every event type, by name.
    pub(crate) fn event_descriptors(&self) -> Vec<EventDescriptor> {
        self.event_types.load().values().map(|t| t.descriptor.clone()).collect()
    }
}

fn new_log(occurrences: usize, retention: Duration) -> EventLog {
    let epoch = uuid::Uuid::new_v4().as_u64_pair().0;
    EventLog::new(epoch, occurrences, u64::try_from(retention.as_millis()).unwrap_or(u64::MAX))
}

/// Milliseconds since the Unix epoch, the time the histories are kept in.
fn now_ms() -> u64 {
    SystemClock.now_ms()
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;
    use serde_json::json;

    use super::*;

    #[derive(Deserialize, JsonSchema)]
    struct Inbox {
        from: Option<String>,
    }

    #[derive(Serialize, JsonSchema)]
    struct Mail {
        from: String,
    }

    fn mail(delivery: &[Delivery]) -> EventType {
        EventType::matching::<Inbox, Mail>("mail", "A mail arrived", delivery, |inbox, data| {
            inbox.from.as_deref().is_none_or(|from| data.get("from").and_then(Value::as_str) == Some(from))
        })
    }

    fn poll(params: Value) -> PollParams {
        PollParams::from_params(Some(&params)).unwrap()
    }

    #[test]
    fn a_poll_reads_what_its_arguments_let_through_after_its_cursor() {
        let c = Catalog::new();
        let source = c.add_event_type(mail(&[Delivery::Poll])).unwrap();
        let t = c.event_type("mail").unwrap();
        let start = t.poll(&poll(json!({"name": "mail", "arguments": {"from": "ann"}}))).unwrap();
        assert!(start.events.is_empty());
        source.emit(Mail { from: "bob".into() }).unwrap();
        source.emit(Mail { from: "ann".into() }).unwrap();
        let next = t.poll(&poll(json!({"name": "mail", "arguments": {"from": "ann"}, "cursor": start.cursor})));
        let next = next.unwrap();
        assert_eq!(next.events.len(), 1);
        assert_eq!(next.events[0].data["from"], "ann");
        assert_eq!(t.descriptor().input_schema["properties"]["from"]["type"], json!(["string", "null"]));
    }

    #[test]
    fn a_poll_of_a_push_only_type_or_with_misfit_arguments_is_refused() {
        let c = Catalog::new();
        c.add_event_type(mail(&[Delivery::Push])).unwrap();
        let t = c.event_type("mail").unwrap();
        let refused = t.poll(&poll(json!({"name": "mail"}))).unwrap_err();
        assert_eq!(refused.code().0, -32014);
        let c = Catalog::new();
        c.add_event_type(mail(&[Delivery::Poll])).unwrap();
        let t = c.event_type("mail").unwrap();
        let misfit = t.poll(&poll(json!({"name": "mail", "arguments": {"from": 12345}}))).unwrap_err();
        assert_eq!(misfit.code().0, -32602);
        assert!(misfit.to_string().contains("from"), "{misfit}");
    }

    #[test]
    fn a_bad_descriptor_a_taken_name_and_a_payload_that_is_no_object_are_refused() {
        let c = Catalog::new();
        assert!(c.add_event_type(mail(&[])).unwrap_err().0.contains("no delivery mode"));
        assert!(!c.serves_events());
        let source = c.add_event_type(mail(&[Delivery::Poll])).unwrap();
        assert!(c.serves_events());
        assert!(c.add_event_type(mail(&[Delivery::Poll])).unwrap_err().0.contains("already served"));
        assert!(source.emit(3).unwrap_err().0.contains("JSON object"));
        assert_eq!(c.event_source("mail").unwrap().name(), "mail");
    }

    #[test]
    fn a_predicate_that_panics_matches_nothing_and_the_poll_moves_on() {
        let c = Catalog::new();
        let strict = EventType::matching::<Inbox, Mail>("mail", "A mail arrived", &[Delivery::Poll], |_, data| {
            data["from"] == "ann" // panics on data without `from`
        });
        let source = c.add_event_type(strict).unwrap();
        let t = c.event_type("mail").unwrap();
        let start = t.poll(&poll(json!({"name": "mail"}))).unwrap();
        source.emit(json!({"subject": "no sender"})).unwrap();
        source.emit(Mail { from: "ann".into() }).unwrap();
        let next = t.poll(&poll(json!({"name": "mail", "cursor": start.cursor}))).unwrap();
        assert_eq!(next.events.len(), 1);
        assert_eq!(next.events[0].data["from"], "ann");
        assert!(!next.truncated);
    }

    #[test]
    fn arguments_or_a_payload_that_are_no_objects_are_refused() {
        let c = Catalog::new();
        let unit = c.add_event_type(EventType::new::<(), Mail>("unit", "x", &[Delivery::Poll])).unwrap_err();
        assert!(unit.0.contains("inputSchema"), "{unit}");
        let text = c.add_event_type(EventType::new::<Inbox, String>("text", "x", &[Delivery::Poll])).unwrap_err();
        assert!(text.0.contains("payloadSchema"), "{text}");
        assert!(!c.serves_events());
    }

    #[test]
    fn max_events_is_capped_by_the_types_batch() {
        let c = Catalog::new();
        let source = c.add_event_type(mail(&[Delivery::Poll]).max_batch(2)).unwrap();
        let t = c.event_type("mail").unwrap();
        let start = t.poll(&poll(json!({"name": "mail"}))).unwrap();
        for _ in 0..3 {
            source.emit(Mail { from: "ann".into() }).unwrap();
        }
        let batch = t.poll(&poll(json!({"name": "mail", "cursor": start.cursor, "maxEvents": u64::MAX}))).unwrap();
        assert_eq!((batch.events.len(), batch.has_more), (2, true));
    }
}
