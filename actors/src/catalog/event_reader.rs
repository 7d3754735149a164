//! [`Reader`]: one subscription's place in an event type's history — the
//! arguments' matcher, the cursor it has read up to — and the wait for
//! what wakes it (an occurrence, a loss, a failure, the type's removal).
//! A long `events/poll` and an `events/stream` each hold one.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use mcp_protocol::events::{Batch, Delivery, EventError, ReadRequest, Subscription};
use mcp_protocol::ErrorData;
use tokio::sync::watch;

use super::event_types::{now_ms, EventType, Matcher};

/// What woke a reader.
#[derive(Debug)]
pub(crate) enum Wake {
    /// Something was appended (an occurrence or a loss): read again.
    Appended,
    /// The source reported a failure the subscription survives.
    Failed(ErrorData),
    /// The subscription ends (the type was removed: `-32011`; or its
    /// source ended it).
    Ended(EventError),
}

/// One subscription's reader of an event type.
pub(crate) struct Reader {
    event_type: Arc<EventType>,
    matches: Matcher,
    cursor: Option<String>,
    /// The `maxAgeMs` floor, for the first read only: later reads continue
    /// from where it started.
    max_age_ms: Option<u64>,
    pulse: watch::Receiver<u64>,
    failures_seen: u64,
    ends_seen: u64,
}

impl Reader {
    /// A reader of `event_type` for one subscription by `mode`: refused
    /// when the type does not offer the mode (`-32014`) or the arguments
    /// do not fit its `inputSchema` (`-32602`). Waits are counted from now:
    /// what the type's source does after this wakes [`Reader::wake`], even
    /// before the first read.
    pub(crate) fn open(
        event_type: &Arc<EventType>,
        subscription: &Subscription,
        mode: Delivery,
    ) -> Result<Self, EventError> {
        let matches = event_type.subscriber(subscription, mode)?;
        let event_type = event_type.clone();
        let pulse = event_type.pulse();
        let failures_seen = event_type.failures().0;
        let ends_seen = event_type.ends().0;
        Ok(Reader {
            ends_seen,
            event_type,
            matches,
            cursor: subscription.cursor.clone(),
            max_age_ms: subscription.max_age_ms,
            pulse,
            failures_seen,
        })
    }

    /// The next at most `max_events` occurrences the subscription lets
    /// through, from where the last read ended (the first: from the
    /// subscription's cursor, `None` being now).
    pub(crate) fn read(&mut self, max_events: usize) -> Batch {
        let request = ReadRequest { cursor: self.cursor.as_deref(), max_age_ms: self.max_age_ms, max_events };
        let matches = &self.matches;
        let batch = self.event_type.log().read(&request, now_ms(), |o| matches(o));
        self.cursor = Some(batch.cursor.clone());
        self.max_age_ms = None;
        batch
    }

    /// Where the next read starts (`None` before the first read of a
    /// subscription from now).
    #[cfg(feature = "webhooks")]
    pub(crate) fn position(&self) -> Option<String> {
        self.cursor.clone()
    }

    /// The event type's name.
    pub(crate) fn name(&self) -> &str {
        &self.event_type.descriptor().name
    }

    /// Waits until something happens to the type after the reader was made
    /// or last woken. An end is reported first (a removed type's at once),
    /// then a failure not yet reported; else [`Wake::Appended`] (which may
    /// find nothing new for these arguments).
    pub(crate) async fn wake(&mut self) -> Wake {
        // The sender lives in the type, which this reader holds: the wait
        // cannot fail, and would read as a removal if it did.
        if self.event_type.is_removed() || self.pulse.changed().await.is_err() {
            return Wake::Ended(EventError::UnknownEvent(self.name().to_owned()));
        }
        if let (count, Some(why)) = self.event_type.ends()
            && count != self.ends_seen
        {
            self.ends_seen = count;
            return Wake::Ended(why);
        }
        match self.event_type.failures() {
            (count, Some(error)) if count != self.failures_seen => {
                self.failures_seen = count;
                Wake::Failed(error)
            }
            _ => Wake::Appended,
        }
    }
}

/// A place for one open stream among at most `max` (`None`: unbounded),
/// given back when dropped.
#[derive(Debug)]
pub(crate) struct StreamSlot(Arc<AtomicUsize>);

impl StreamSlot {
    /// Takes a place among `open`'s, or says the limit (`-32013`).
    pub(crate) fn take(open: &Arc<AtomicUsize>, max: Option<usize>) -> Result<Self, EventError> {
        let room = |n: usize| max.is_none_or(|max| n < max).then_some(n + 1);
        match open.fetch_update(Ordering::AcqRel, Ordering::Acquire, room) {
            Ok(_) => Ok(StreamSlot(open.clone())),
            Err(_) => Err(EventError::ResourceExhausted {
                limit: "subscriptions",
                max: max.map(|m| u64::try_from(m).unwrap_or(u64::MAX)),
            }),
        }
    }

    /// A place among `event_type`'s streams (its
    /// [`max_streams`](EventType::max_streams)).
    pub(crate) fn of_type(event_type: &EventType) -> Result<Self, EventError> {
        let (open, max) = event_type.stream_places();
        Self::take(open, max)
    }
}

impl Drop for StreamSlot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use mcp_protocol::events::{Delivery, PollParams};
    use schemars::JsonSchema;
    use serde::{Deserialize, Serialize};
    use serde_json::{json, Value};

    use super::*;
    use crate::catalog::Catalog;

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

    /// An immediate poll, as `events/poll` without `timeoutMs` reads.
    trait PollNow {
        fn poll(&self, poll: &PollParams) -> Result<mcp_protocol::events::Batch, EventError>;
    }

    impl PollNow for Arc<EventType> {
        fn poll(&self, poll: &PollParams) -> Result<mcp_protocol::events::Batch, EventError> {
            Ok(Reader::open(self, &poll.subscription, Delivery::Poll)?.read(self.batch_for(poll.max_events)))
        }
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
        let small = c.add_event_type(EventType::new::<Inbox, Mail>("small", "x", &[Delivery::Poll]).max_payload(20));
        let small = small.unwrap();
        assert!(small.emit(Mail { from: "ann".into() }).is_ok());
        let refused = small.emit(Mail { from: "a sender with a long name".into() }).unwrap_err();
        assert!(refused.0.contains("20-byte cap"), "{refused}");
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
