//! The Triggers & Events extension (`io.modelcontextprotocol/events`),
//! sans-IO: what a server says about its event types, what a subscriber
//! sends, what it receives, and a bounded history that serves cursors.
//!
//! A server offering the extension declares it under
//! `capabilities.extensions["io.modelcontextprotocol/events"]` (see
//! [`capability`]) and answers `events/list` with [`EventDescriptor`]s. A
//! subscription is one event type's `name` with `arguments` checked against
//! its `inputSchema`; occurrences ([`Occurrence`]) reach it by one of the
//! type's [`Delivery`] modes: `events/poll` ([`PollParams`], answered by a
//! [`Batch`]), `events/stream` ([`StreamParams`], answered by the
//! notifications of [`notify`]) or a webhook ([`webhook`]: `events/subscribe`). Refusals are [`EventError`]s,
//! the design's codes `-32011`…`-32015` with their typed `data`.
//!
//! [`EventLog`] keeps the recent occurrences of one event type, bounded in
//! count and age, and turns a cursor into the occurrences after it: opaque
//! cursors, `cursor: null` from now, the `maxAgeMs` floor, `maxEvents` with
//! `hasMore`, and `truncated` whenever something was skipped — never an
//! error. The caller owns the clock and passes the time in.
//!
//! ```
//! use mcp_protocol::events::{EventLog, Occurrence, ReadRequest};
//! use serde_json::json;
//!
//! let mut log = EventLog::new(7, 100, 60_000);
//! let start = log.read(&ReadRequest::new(None), 1_000, |_| true);
//! assert!(start.events.is_empty());
//! let data = json!({"subject": "hello"}).as_object().unwrap().clone();
//! log.append(Occurrence::new("m1", "email.received", 2_000, data), 2_000);
//! let next = log.read(&ReadRequest::new(Some(&start.cursor)), 2_500, |_| true);
//! assert_eq!(next.events[0].event_id, "m1");
//! assert!(!next.truncated && !next.has_more);
//! ```

mod descriptor;
mod error;
mod log;
pub mod notify;
mod occurrence;
mod params;
pub mod webhook;

pub use descriptor::{Delivery, EventDescriptor, InvalidDescriptor};
pub use error::{CallbackFailure, EventError, SchemaPart};
pub use log::{shared_position, Batch, EventLog, ReadRequest, SHARED_AHEAD_MS};
pub use occurrence::Occurrence;
pub use params::{PollParams, StreamParams, Subscription};

use serde_json::{Map, Value};

/// The extension's identifier, the key of its capability.
pub const EXTENSION: &str = "io.modelcontextprotocol/events";

/// The extension's settings in a server's capabilities: `{}`, or
/// `{"listChanged": true}` when the server tells listeners that its event
/// types changed.
pub fn capability(list_changed: bool) -> Value {
    let mut settings = Map::new();
    if list_changed {
        settings.insert("listChanged".into(), Value::Bool(true));
    }
    Value::Object(settings)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_capability_is_an_object_with_list_changed_only_when_offered() {
        assert_eq!(capability(false), serde_json::json!({}));
        assert_eq!(capability(true), serde_json::json!({"listChanged": true}));
    }
}
