//! The events a server publishes, encoded for one stream, for many
//! streams at once ([`EventTemplate`]), and between instances ([`WireEvent`]).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::encode::encode_tagged_notification;
use crate::jsonrpc::RequestId;
use crate::trace::TraceContext;

/// A change a server publishes to its listeners.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Event {
    /// The tool list changed.
    ToolsListChanged,
    /// The prompt list changed.
    PromptsListChanged,
    /// The resource list changed.
    ResourcesListChanged,
    /// The event types changed (the Events extension): one was added or
    /// removed, or a descriptor changed.
    EventsListChanged,
    /// One resource's contents changed.
    ResourceUpdated {
        /// Its URI.
        uri: String,
    },
    /// A task's status changed (the Tasks extension).
    TaskStatus {
        /// The task.
        task_id: String,
        /// The task as `tasks/get` shows it now (a `DetailedTask`), encoded
        /// as a JSON object.
        task: String,
        /// The key of the caller that owns the task (authorization on):
        /// only that caller's listens receive it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        owner: Option<String>,
    },
}

/// Method names of the change notifications.
pub mod notification {
    /// `notifications/tools/list_changed`.
    pub const TOOLS_LIST_CHANGED: &str = "notifications/tools/list_changed";
    /// `notifications/prompts/list_changed`.
    pub const PROMPTS_LIST_CHANGED: &str = "notifications/prompts/list_changed";
    /// `notifications/resources/list_changed`.
    pub const RESOURCES_LIST_CHANGED: &str = "notifications/resources/list_changed";
    /// `notifications/resources/updated`.
    pub const RESOURCES_UPDATED: &str = "notifications/resources/updated";
    /// `notifications/events/list_changed` (the Events extension).
    pub const EVENTS_LIST_CHANGED: &str = "notifications/events/list_changed";
}

impl Event {
    /// The notification method for this event.
    pub fn method(&self) -> &'static str {
        match self {
            Event::ToolsListChanged => notification::TOOLS_LIST_CHANGED,
            Event::PromptsListChanged => notification::PROMPTS_LIST_CHANGED,
            Event::ResourcesListChanged => notification::RESOURCES_LIST_CHANGED,
            Event::EventsListChanged => notification::EVENTS_LIST_CHANGED,
            Event::ResourceUpdated { .. } => notification::RESOURCES_UPDATED,
            Event::TaskStatus { .. } => crate::tasks::NOTIFICATION,
        }
    }

    /// The notification as the legacy era sends it (no subscription tag).
    pub fn encode_untagged(&self) -> Vec<u8> {
        let mut params = Map::new();
        match self {
            Event::ResourceUpdated { uri } => {
                params.insert("uri".into(), Value::String(uri.clone()));
            }
            Event::TaskStatus { task, .. } => params = serde_json::from_str(task).unwrap_or_default(),
            _ => {}
        }
        crate::jsonrpc::encode_notification(self.method(), &params)
    }

    /// The notification for the stream of subscription `id`.
    pub fn encode_for(&self, id: &RequestId) -> Vec<u8> {
        if let Event::TaskStatus { .. } = self {
            // The task's fields keep their order: spliced as encoded.
            return EventTemplate::new(self).encode_for(id);
        }
        let mut params = Map::new();
        if let Event::ResourceUpdated { uri } = self {
            params.insert("uri".into(), Value::String(uri.clone()));
        }
        encode_tagged_notification(self.method(), params, id)
    }
}

/// The version of [`WireEvent`] this crate writes.
pub const WIRE_VERSION: u8 = 1;

/// An event as it travels between server instances: compact JSON with a
/// format version and the publishing instance, so an instance can skip its
/// own events (`{"v":1,"o":"<origin>","e":{"kind":"resource_updated","uri":"…"}}`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WireEvent {
    /// Format version.
    pub v: u8,
    /// The instance that observed the event.
    pub o: String,
    /// The event.
    pub e: Event,
    /// Identifies one observation of an external source shared by several
    /// instances (e.g. a file's modification time and size), so that the
    /// same change seen by each of them is delivered once. Absent: never
    /// coalesced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub k: Option<String>,
    /// The trace context of the request that caused the event, if traced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub t: Option<TraceContext>,
}

impl WireEvent {
    /// Encodes `event` observed by instance `origin`, with its observation
    /// key and the trace context of the request that caused it.
    pub fn encode(origin: &str, event: &Event, key: Option<&str>, trace: Option<&TraceContext>) -> Vec<u8> {
        let w = WireEvent {
            v: WIRE_VERSION,
            o: origin.to_owned(),
            e: event.clone(),
            k: key.map(str::to_owned),
            t: trace.cloned(),
        };
        serde_json::to_vec(&w).expect("events serialize")
    }

    /// Decodes bytes from another instance; unknown versions are refused,
    /// and a trace context that does not validate is dropped.
    pub fn decode(bytes: &[u8]) -> Result<WireEvent, String> {
        let mut w: WireEvent = serde_json::from_slice(bytes).map_err(|e| format!("undecodable event: {e}"))?;
        if w.v != WIRE_VERSION {
            return Err(format!("unsupported event version {}", w.v));
        }
        if let Event::TaskStatus { task, .. } = &w.e {
            // Spliced into notifications as it is: it must be a JSON object.
            if !matches!(serde_json::from_str::<Value>(task), Ok(Value::Object(_))) {
                return Err("a task event whose task is not a JSON object".into());
            }
        }
        w.t = w.t.and_then(|t| {
            TraceContext::from_parts(Some(&t.traceparent), t.tracestate.as_deref(), t.baggage.as_deref())
        });
        Ok(w)
    }
}

/// An event encoded once for many subscriptions: every listener only
/// splices its subscription id between two fixed parts, so fan-out to N
/// streams serializes the event once, not N times.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventTemplate {
    prefix: Vec<u8>,
    suffix: Vec<u8>,
}

impl EventTemplate {
    /// The template of `event`.
    pub fn new(event: &Event) -> Self {
        Self::traced(event, None)
    }

    /// The template of `event` caused by a request traced by `trace`: its
    /// `traceparent`, `tracestate` and `baggage` go in each notification's
    /// `_meta`, after the subscription id.
    pub fn traced(event: &Event, trace: Option<&TraceContext>) -> Self {
        let mut prefix = br#"{"jsonrpc":"2.0","method":""#.to_vec();
        prefix.extend_from_slice(event.method().as_bytes());
        prefix.extend_from_slice(br#"","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"#);
        let mut suffix = Vec::new();
        if let Some(trace) = trace {
            for (k, v) in trace.to_meta() {
                suffix.push(b',');
                suffix.extend_from_slice(&serde_json::to_vec(&k).expect("strings serialize"));
                suffix.push(b':');
                suffix.extend_from_slice(&serde_json::to_vec(&v).expect("strings serialize"));
            }
        }
        suffix.push(b'}');
        match event {
            Event::ResourceUpdated { uri } => {
                suffix.extend_from_slice(br#","uri":"#);
                suffix.extend_from_slice(&serde_json::to_vec(uri).expect("strings serialize"));
            }
            Event::TaskStatus { task, .. } => {
                // The task object's members follow `_meta` in `params`.
                let inner = task.trim().strip_prefix('{').and_then(|t| t.strip_suffix('}')).unwrap_or("").trim();
                if !inner.is_empty() {
                    suffix.push(b',');
                    suffix.extend_from_slice(inner.as_bytes());
                }
            }
            _ => {}
        }
        suffix.extend_from_slice(b"}}");
        EventTemplate { prefix, suffix }
    }

    /// The notification for subscription `id` (identical to [`Event::encode_for`]).
    pub fn encode_for(&self, id: &RequestId) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.encoded_len(id));
        self.encode_into(id, &mut out);
        out
    }

    /// The length of [`EventTemplate::encode_for`]`(id)`, so that a
    /// transport can allocate its frame once.
    pub fn encoded_len(&self, id: &RequestId) -> usize {
        self.prefix.len() + id.as_json().len() + self.suffix.len()
    }

    /// Appends the notification for subscription `id` to `out` (a transport
    /// frames it without a second copy).
    pub fn encode_into(&self, id: &RequestId, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.prefix);
        out.extend_from_slice(id.as_json().as_bytes());
        out.extend_from_slice(&self.suffix);
    }
}
