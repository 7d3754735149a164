//! [`EventSource`]: the handle an author emits an event type's occurrences
//! through — from a handler, a background task or anything else that holds
//! it — and reports losses, failures and the end of subscriptions with.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use mcp_protocol::events::{EventDescriptor, EventError, Occurrence};
use mcp_protocol::subscription::Event;
use mcp_protocol::ErrorData;
use serde::Serialize;
use serde_json::Value;

use super::event_types::{now_ms, EventType, EventTypes};
use super::{Catalog, CatalogError};

/// The handle occurrences of one event type are emitted through. Cheap to
/// clone; every clone emits into the same history.
#[derive(Clone, Debug)]
pub struct EventSource(pub(super) Arc<EventType>);

impl EventSource {
    /// Emits one occurrence now, with a fresh id; `data` must serialize to a
    /// JSON object (the type's payload) of at most the type's
    /// [`max_payload`](EventType::max_payload) bytes. It carries its cursor,
    /// unless the history is shared (`events.history`): that places it
    /// later, and refuses it past `events.history_queue` waiting.
    pub fn emit(&self, data: impl Serialize) -> Result<Occurrence, CatalogError> {
        self.emit_as(uuid::Uuid::new_v4().to_string(), data, false)
    }

    /// Emits one occurrence now with the source's own stable id (so that a
    /// subscriber recognises an occurrence it saw before).
    pub fn emit_with_id(&self, event_id: impl Into<String>, data: impl Serialize) -> Result<Occurrence, CatalogError> {
        self.emit_as(event_id.into(), data, true)
    }

    /// Emits `data` as occurrence `event_id`; `stable`: an id the source
    /// gave (several instances observing one source give the same).
    fn emit_as(&self, event_id: String, data: impl Serialize, stable: bool) -> Result<Occurrence, CatalogError> {
        let name = &self.0.descriptor().name;
        let data = match serde_json::to_value(data) {
            Ok(Value::Object(data)) => data,
            Ok(_) => return Err(CatalogError(format!("an occurrence of `{name}` must carry a JSON object"))),
            Err(e) => return Err(CatalogError(format!("an occurrence of `{name}` does not serialize: {e}"))),
        };
        let size = serde_json::to_string(&data).map_or(usize::MAX, |text| text.len());
        if size > self.0.payload_cap() {
            let max = self.0.payload_cap();
            return Err(CatalogError(format!("an occurrence of `{name}` of {size} bytes is over its {max}-byte cap")));
        }
        let now = now_ms();
        let occurrence = Occurrence::new(event_id, name.clone(), now, data);
        if let Some(sent) = self.0.send_shared(&occurrence, stable) {
            return sent;
        }
        let occurrence = self.0.log().append(occurrence, now);
        self.0.wake_readers();
        Ok(occurrence)
    }

    /// Records that occurrences were lost (an upstream dropped some, or was
    /// out of reach): a poll whose cursor is from before now answers
    /// `truncated`, and each live stream sends `notifications/events/active`
    /// again with `truncated: true` and goes on.
    pub fn lose(&self) {
        if self.0.lose_shared() {
            return;
        }
        self.0.log().lose(now_ms());
        self.0.wake_readers();
    }

    /// Ends every subscription open now with `why` (its
    /// `notifications/events/terminated`): access revoked
    /// ([`EventError::Forbidden`]), or the type's schema changed in place
    /// ([`EventError::SchemaChanged`]). The type stays served: a client
    /// may subscribe again (and is refused again if the cause holds).
    pub fn terminate(&self, why: EventError) {
        self.0.end_streams(why);
    }

    /// Reports a failure the subscriptions survive (an upstream's outage):
    /// each live stream sends `notifications/events/error` with it and stays
    /// open; polls are not told.
    pub fn fail(&self, error: ErrorData) {
        {
            let mut failures = self.0.failures_mut();
            *failures = (failures.0 + 1, Some(error));
        }
        self.0.wake_readers();
    }

    /// The event type's name.
    pub fn name(&self) -> &str {
        &self.0.descriptor().name
    }

    /// A handle that does not keep the type alive: what a background
    /// emitter holds that should stop once the catalog serving the type is
    /// gone.
    pub fn downgrade(&self) -> WeakEventSource {
        WeakEventSource(Arc::downgrade(&self.0))
    }
}

/// An [`EventSource`] that does not keep its type alive
/// ([`EventSource::downgrade`]).
#[derive(Clone, Debug)]
pub struct WeakEventSource(std::sync::Weak<EventType>);

impl WeakEventSource {
    /// The source, while something (the catalog, a stream) still holds its type.
    pub fn upgrade(&self) -> Option<EventSource> {
        self.0.upgrade().map(EventSource)
    }
}

impl Catalog {
    /// Adds an event type and returns the source its occurrences are
    /// emitted through; listeners that opted into `eventsListChanged` are
    /// told. Refused, naming it: a descriptor that breaks the
    /// rules of `events/list` (an empty name or description, no delivery
    /// mode) and a name already taken.
    pub fn add_event_type(&self, event_type: EventType) -> Result<EventSource, CatalogError> {
        event_type.descriptor().validate().map_err(|e| CatalogError(e.0))?;
        let name = event_type.descriptor().name.clone();
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
        self.emit(Event::EventsListChanged);
        Ok(EventSource(event_type))
    }

    /// Whether the server declares the Events extension: an event type was added.
    pub fn serves_events(&self) -> bool {
        !self.event_types.load().is_empty()
    }

    /// Stops serving the event type `name` and returns its source: each
    /// live stream of it ends with `notifications/events/terminated`
    /// (`-32011`, `{"kind":"event"}`), a poll of it is `-32011`, and
    /// listeners that opted into `eventsListChanged` are told. Emitting
    /// through the returned source reaches no one.
    pub fn remove_event_type(&self, name: &str) -> Option<EventSource> {
        let mut removed = None;
        self.event_types.rcu(|types| {
            let mut types = EventTypes::clone(types);
            removed = types.remove(name);
            types
        });
        let removed = removed?;
        removed.removed.store(true, Ordering::Release);
        removed.end_streams(EventError::UnknownEvent(name.to_owned()));
        self.emit(Event::EventsListChanged);
        Some(EventSource(removed))
    }

    /// The source of the event type `name`, if one is served.
    pub fn event_source(&self, name: &str) -> Option<EventSource> {
        self.event_type(name).map(EventSource)
    }

    /// The event type `name`, if one is served.
    pub(crate) fn event_type(&self, name: &str) -> Option<Arc<EventType>> {
        self.event_types.load().get(name).cloned()
    }

    /// Every event type served now.
    #[cfg(feature = "redis")]
    pub(crate) fn event_types(&self) -> Vec<Arc<EventType>> {
        self.event_types.load().values().cloned().collect()
    }

    /// The descriptors of every event type, by name.
    pub(crate) fn event_descriptors(&self) -> Vec<EventDescriptor> {
        self.event_types.load().values().map(|t| t.descriptor().clone()).collect()
    }
}
