//! The Events extension's methods: `events/list`, `events/poll` (answered
//! at once, or held open up to its `timeoutMs`) and `events/stream` (the
//! subscription's notifications on the request's own response stream).
//! Each answers `-32601` when the catalog serves no event type (the
//! extension is not declared); on the legacy era they are not found at all.

use std::sync::atomic::AtomicUsize;
use std::sync::Arc;
use std::time::Duration;

use mcp_protocol::events::{notify, Batch, Delivery, EventError, PollParams, StreamParams};
use mcp_protocol::pagination::paginate;
use mcp_protocol::request::{method, ListParams};
use mcp_protocol::RequestId;
use serde_json::json;
use tokio::time::Instant;

use super::{offered, Answer, McpService};
use crate::catalog::context::RequestContext;
use crate::catalog::error::HandlerError;
use crate::catalog::{EventType, Reader, StreamSlot, Wake};
use crate::channels::outbound::Outbound;
use crate::config::Config;

/// How long polls and streams are served (`[events]`), and the streams
/// open on this instance.
#[derive(Debug)]
pub(super) struct EventLimits {
    heartbeat: Duration,
    max_poll_wait: Duration,
    default_poll_wait: Duration,
    /// `request.timeout_ms`: a held poll answers 1 s before it.
    request_timeout: Duration,
    max_streams: usize,
    streams: Arc<AtomicUsize>,
    /// `events.max_streams_per_caller` (0: none), and each caller's open
    /// streams, by identity key (a caller with none is dropped from it).
    per_caller: usize,
    by_caller: std::sync::Mutex<std::collections::HashMap<String, Arc<AtomicUsize>>>,
    /// Fired at shutdown: every stream ends with its final result.
    closing: tokio_util::sync::CancellationToken,
}

impl EventLimits {
    pub(super) fn new(config: &Config) -> Self {
        let e = &config.events;
        EventLimits {
            heartbeat: Duration::from_millis(e.heartbeat_ms),
            max_poll_wait: Duration::from_millis(e.max_poll_wait_ms),
            default_poll_wait: Duration::from_millis(e.default_poll_wait_ms),
            request_timeout: Duration::from_millis(config.request.timeout_ms),
            max_streams: e.max_streams,
            streams: Arc::default(),
            per_caller: e.max_streams_per_caller,
            by_caller: Default::default(),
            closing: tokio_util::sync::CancellationToken::new(),
        }
    }

    /// A place among `caller`'s streams, when they are capped.
    fn caller_slot(&self, caller: &str) -> Result<Option<StreamSlot>, EventError> {
        if self.per_caller == 0 {
            return Ok(None);
        }
        let open = {
            let mut by_caller = self.by_caller.lock().unwrap_or_else(|p| p.into_inner());
            // At most one entry per open stream: the callers with none go.
            if by_caller.len() > self.max_streams {
                by_caller.retain(|_, open| open.load(std::sync::atomic::Ordering::Acquire) > 0);
            }
            by_caller.entry(caller.to_owned()).or_default().clone()
        };
        let refused = |_| EventError::ResourceExhausted {
            limit: "subscriptions_per_caller",
            max: u64::try_from(self.per_caller).ok(),
        };
        StreamSlot::take(&open, Some(self.per_caller)).map(Some).map_err(refused)
    }

    /// How long a poll that asked for `timeout_ms` is held at most.
    fn poll_wait(&self, timeout_ms: Option<u64>) -> Duration {
        let asked = timeout_ms.map_or(self.default_poll_wait, Duration::from_millis);
        asked.min(self.max_poll_wait).min(self.request_timeout.saturating_sub(Duration::from_secs(1)))
    }
}

fn refused(e: EventError) -> HandlerError {
    HandlerError::from(e.to_error_data())
}

impl McpService {
    /// Ends every open `events/stream` with its final result (the server
    /// is shutting down; a client resumes elsewhere from its cursor), and
    /// every stream opened from now on as soon as it is confirmed.
    pub(crate) fn close_event_streams(&self) {
        self.events.closing.cancel();
    }

    /// How many `events/stream` subscriptions are open on this instance.
    pub(crate) fn open_event_streams(&self) -> usize {
        self.events.streams.load(std::sync::atomic::Ordering::Acquire)
    }

    pub(super) async fn list_events(&self, p: ListParams, ctx: RequestContext) -> Result<Answer, HandlerError> {
        offered(self.catalog.serves_events(), method::EVENTS_LIST)?;
        let mut types = self.catalog.event_descriptors();
        // A server built without webhook delivery does not list it.
        #[cfg(not(feature = "webhooks"))]
        types.retain_mut(|d| {
            d.delivery.retain(|m| *m != Delivery::Webhook);
            !d.delivery.is_empty()
        });
        if let Some(gate) = self.gate(&ctx) {
            types.retain(|d| gate.event(&d.name));
        }
        let page = paginate(&types, |d| d.name.as_str(), p.cursor.as_deref(), self.page_size)?;
        self.finish_page("events", page, Some(self.list_hints(&ctx, None))).map(Answer::Tree)
    }

    /// The type a subscription names, or `-32011`; once its history can be
    /// read (a shared one not read yet is waited for, at most 5 s).
    pub(super) async fn served_event_type(&self, name: &str) -> Result<Arc<EventType>, HandlerError> {
        let event_type =
            self.catalog.event_type(name).ok_or_else(|| refused(EventError::UnknownEvent(name.to_owned())))?;
        if !event_type.ready(Duration::from_secs(5)).await {
            return Err(HandlerError::internal(format!("the shared history of `{name}` could not be read yet")));
        }
        Ok(event_type)
    }

    /// What the history holds after the cursor; when that is nothing (and
    /// the poll has a cursor: one from now is answered at once), waits up
    /// to the poll's `timeoutMs` for what comes, and answers as soon as
    /// something does.
    pub(super) async fn poll_events(&self, p: PollParams, _ctx: RequestContext) -> Result<Answer, HandlerError> {
        offered(self.catalog.serves_events(), method::EVENTS_POLL)?;
        let event_type = self.served_event_type(&p.subscription.name).await?;
        let mut reader = Reader::open(&event_type, &p.subscription, Delivery::Poll).map_err(refused)?;
        let max_events = event_type.batch_for(p.max_events);
        let mut batch = reader.read(max_events);
        let wait = self.events.poll_wait(p.timeout_ms);
        if batch.events.is_empty() && !batch.truncated && p.subscription.cursor.is_some() && !wait.is_zero() {
            batch = hold(&mut reader, max_events, Instant::now() + wait).await.map_err(refused)?;
        }
        let result = json!({
            "events": batch.events,
            "cursor": batch.cursor,
            "truncated": batch.truncated,
            "hasMore": batch.has_more,
            "nextPollMs": event_type.next_poll_ms(),
        });
        self.finish(&result, None).map(Answer::Tree)
    }

    /// Pushes the subscription's occurrences on this request's stream until
    /// the client leaves or cancels, or the subscription ends (then
    /// `terminated` and the final result). A subscription that cannot be
    /// served is refused before anything is sent. A client that reads
    /// slowly holds the stream back (at most `request.outbound_buffer`
    /// messages wait); the history moves on meanwhile, and what the stream
    /// can no longer replay is a gap (`active`, `truncated: true`).
    pub(super) async fn stream_events(&self, p: StreamParams, ctx: RequestContext) -> Result<Answer, HandlerError> {
        offered(self.catalog.serves_events(), method::EVENTS_STREAM)?;
        let event_type = self.served_event_type(&p.subscription.name).await?;
        let reader = Reader::open(&event_type, &p.subscription, Delivery::Push).map_err(refused)?;
        // The type's cap first: a refusal by it takes no place of the server's.
        let _type_slot = StreamSlot::of_type(&event_type).map_err(refused)?;
        let caller = crate::facts::identity::Identity::key_of(ctx.identity());
        let _caller_slot = self.events.caller_slot(&caller).map_err(refused)?;
        let _server_slot = StreamSlot::take(&self.events.streams, Some(self.events.max_streams)).map_err(refused)?;
        let stream = EventStream { ctx: &ctx, closing: &self.events.closing };
        match pump(&stream, reader, event_type.batch_for(None), self.events.heartbeat).await {
            // The server ended the subscription, or closes: the final frame.
            Ended::Terminated | Ended::Closed => self.finish(&notify::end(ctx.request_id()), None).map(Answer::Tree),
            // The client left: nothing more is written.
            Ended::Gone => Err(HandlerError::internal("the events stream's client left")),
        }
    }
}

/// How a stream ended.
enum Ended {
    /// The subscription ended (`terminated` was sent).
    Terminated,
    /// The server is shutting down.
    Closed,
    /// The client left (the request is cancelled).
    Gone,
}

/// Where a stream's notifications go: the request's outbound channel,
/// waiting for room (the client's reading paces the stream).
struct EventStream<'a> {
    ctx: &'a RequestContext,
    closing: &'a tokio_util::sync::CancellationToken,
}

impl EventStream<'_> {
    fn id(&self) -> &RequestId {
        self.ctx.request_id()
    }

    /// Sends one notification once the channel has room; `Gone` when the
    /// client left.
    async fn send(&self, bytes: Vec<u8>) -> Result<(), Ended> {
        let message = Box::new(Outbound::Notification(bytes.into()));
        self.ctx.outbound().send(message).await.map_err(|_| Ended::Gone)
    }
}

/// Sends `active`, then every occurrence the reader finds, in pages of
/// `page`; a heartbeat after `heartbeat` without a message; `error` for a
/// failure the source reports; `active` again (`truncated`) after a gap;
/// `terminated` when the type is removed. Runs until one of those ends it.
async fn pump(stream: &EventStream<'_>, reader: Reader, page: usize, heartbeat: Duration) -> Ended {
    match deliver(stream, reader, page, heartbeat).await {
        Ok(never) => match never {},
        Err(ended) => ended,
    }
}

async fn deliver(
    stream: &EventStream<'_>,
    mut reader: Reader,
    page: usize,
    heartbeat: Duration,
) -> Result<std::convert::Infallible, Ended> {
    let id = stream.id();
    let mut batch = reader.read(page);
    stream.send(notify::active(id, &batch.start, batch.truncated)).await?;
    let mut beat_at = Instant::now() + heartbeat;
    loop {
        for occurrence in &batch.events {
            stream.send(notify::event(id, occurrence)).await?;
            beat_at = Instant::now() + heartbeat;
        }
        if !batch.has_more {
            tokio::select! {
                biased;
                () = stream.closing.cancelled() => return Err(Ended::Closed),
                wake = reader.wake() => match wake {
                    Wake::Ended(why) => {
                        stream.send(notify::terminated(id, &why)).await?;
                        return Err(Ended::Terminated);
                    }
                    Wake::Failed(error) => {
                        stream.send(notify::error(id, &error)).await?;
                        beat_at = Instant::now() + heartbeat;
                    }
                    // Read below; what these arguments skip sends nothing,
                    // and the heartbeat stays due.
                    Wake::Appended => {}
                },
                () = tokio::time::sleep_until(beat_at) => {
                    stream.send(notify::heartbeat(id, &batch.cursor)).await?;
                    beat_at = Instant::now() + heartbeat;
                }
            }
        }
        batch = reader.read(page);
        if batch.truncated {
            stream.send(notify::active(id, &batch.start, true)).await?;
            beat_at = Instant::now() + heartbeat;
        }
    }
}

/// Waits until the reader finds something, the type is removed (`-32011`)
/// or `deadline` passes (then the quiet batch, its cursor moved on).
async fn hold(reader: &mut Reader, max_events: usize, deadline: Instant) -> Result<Batch, EventError> {
    loop {
        tokio::select! {
            biased;
            // A poll is not ended by a termination, only by the removal.
            wake = reader.wake() => {
                if let Wake::Ended(why @ EventError::UnknownEvent(_)) = wake {
                    return Err(why);
                }
            }
            () = tokio::time::sleep_until(deadline) => return Ok(reader.read(max_events)),
        }
        let batch = reader.read(max_events);
        if !batch.events.is_empty() || batch.truncated {
            return Ok(batch);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_caller_has_its_own_streams_up_to_the_cap_and_gets_a_place_back() {
        let mut config = Config::default();
        config.events.max_streams_per_caller = 2;
        let limits = EventLimits::new(&config);
        let ann = [limits.caller_slot("ann").unwrap(), limits.caller_slot("ann").unwrap()];
        let refused = limits.caller_slot("ann").unwrap_err();
        assert_eq!(refused.data(), Some(json!({"limit": "subscriptions_per_caller", "max": 2})));
        let bob = limits.caller_slot("bob").unwrap();
        assert!(bob.is_some(), "another caller's places are its own");
        drop(ann);
        assert!(limits.caller_slot("ann").is_ok(), "a closed stream gives its place back");
        config.events.max_streams_per_caller = 0;
        assert!(EventLimits::new(&config).caller_slot("ann").unwrap().is_none(), "0: no cap");
    }
}
