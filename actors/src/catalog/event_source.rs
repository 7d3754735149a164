//! [`EventSource`]: the handle an author emits an event type's occurrences
//! through — from a handler, a background task or anything else that holds
//! it — and reports losses, failures and the end of subscriptions with.

use std::sync::Arc;

use mcp_protocol::events::{EventError, Occurrence};
use mcp_protocol::ErrorData;
use serde::Serialize;
use serde_json::Value;

use super::event_types::{now_ms, EventType};
use super::CatalogError;

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
