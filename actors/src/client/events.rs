//! The Events extension from the client's side: the server's event types,
//! one poll (held open up to its `timeoutMs`), a poll loop that paces
//! itself as the server asks, and a push stream.

use std::time::Duration;

use futures::stream::{BoxStream, Stream, StreamExt};
use mcp_protocol::client::Marks;
use mcp_protocol::events::notify::{ACTIVE, EVENT, TERMINATED};
use mcp_protocol::events::{EventDescriptor, Occurrence};
use mcp_protocol::model::JsonObject;
use mcp_protocol::request::method;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use super::connection::Cancel;
use super::error::ClientError;
use super::listen::next_message;
use super::options::RequestOptions;
use super::{Client, Notification};

/// The least wait between two polls of a loop, whatever `nextPollMs` says
/// (the design's suggested client floor).
pub const POLL_FLOOR: Duration = Duration::from_secs(1);

/// One subscription: an event type, its arguments, and where to start
/// (`None`: from now).
#[derive(Debug, Clone, PartialEq)]
pub struct EventSubscription {
    /// The event type.
    pub name: String,
    /// The arguments (the type's `inputSchema`).
    pub arguments: Map<String, Value>,
    /// Where to start: a cursor a poll or a stream gave, or `None` for now.
    pub cursor: Option<String>,
}

impl EventSubscription {
    /// `name` with no arguments, from now.
    pub fn new(name: impl Into<String>) -> Self {
        EventSubscription { name: name.into(), arguments: Map::new(), cursor: None }
    }

    fn params(&self) -> JsonObject {
        let mut params = JsonObject::new();
        params.insert("name".into(), Value::String(self.name.clone()));
        params.insert("arguments".into(), Value::Object(self.arguments.clone()));
        params.insert("cursor".into(), self.cursor.clone().map_or(Value::Null, Value::String));
        params
    }
}

/// What a poll loop yields.
#[derive(Debug, Clone, PartialEq)]
pub enum Polled {
    /// An occurrence, in order.
    Event(Box<Occurrence>),
    /// Occurrences were skipped before what follows (`truncated`): the
    /// loop goes on from `cursor`.
    Gap {
        /// Where the loop reads from now.
        cursor: Option<String>,
    },
}

/// What one `events/poll` answered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EventBatch {
    /// The occurrences, oldest first.
    pub events: Vec<Occurrence>,
    /// Where to poll from next.
    #[serde(default)]
    pub cursor: Option<String>,
    /// Something between the cursor and these occurrences was skipped.
    #[serde(default)]
    pub truncated: bool,
    /// More wait: poll again at once.
    #[serde(default)]
    pub has_more: bool,
    /// The wait the server asks for before the next poll.
    #[serde(default)]
    pub next_poll_ms: Option<u64>,
}

impl Client {
    /// Every event type the server offers (every page of `events/list`).
    pub async fn list_events(&self) -> Result<Vec<EventDescriptor>, ClientError> {
        let all = self.list_all(method::EVENTS_LIST, "events").await?;
        all.into_iter()
            .map(|d| serde_json::from_value(d).map_err(|e| ClientError::transport(format!("events/list: {e}"))))
            .collect()
    }

    /// One `events/poll` of `subscription`; with `timeout`, the server may
    /// hold it that long for an occurrence (the request's own time limit
    /// is stretched to cover it).
    pub async fn poll_events(
        &self,
        subscription: &EventSubscription,
        timeout: Option<Duration>,
    ) -> Result<EventBatch, ClientError> {
        let mut params = subscription.params();
        let mut options = RequestOptions::default();
        if let Some(wait) = timeout {
            params.insert("timeoutMs".into(), json!(u64::try_from(wait.as_millis()).unwrap_or(u64::MAX)));
            options = options.timeout(wait + self.inner.options.timeout);
        }
        self.request_as(method::EVENTS_POLL, Value::Object(params), options).await
    }

    /// Polls `subscription` for ever: each occurrence once, in order, and a
    /// [`Polled::Gap`] before the occurrences of a batch that skipped some;
    /// after a batch with `hasMore` at once, else after the server's
    /// `nextPollMs` (at least `floor`). The loop keeps its cursor; a poll
    /// that fails ends it with the error.
    pub fn poll_loop(
        &self,
        subscription: EventSubscription,
        floor: Duration,
    ) -> impl Stream<Item = Result<Polled, ClientError>> + Send + 'static {
        let state = (self.clone(), subscription, Vec::<Polled>::new().into_iter(), None::<Duration>, false);
        futures::stream::unfold(state, move |(client, mut sub, mut ready, mut wait, ended)| async move {
            loop {
                if let Some(occurrence) = ready.next() {
                    return Some((Ok(occurrence), (client, sub, ready, wait, ended)));
                }
                if ended {
                    return None;
                }
                if let Some(pause) = wait.take() {
                    actix_rt::time::sleep(pause).await;
                }
                match client.poll_events(&sub, None).await {
                    Ok(batch) => {
                        sub.cursor = batch.cursor.or(sub.cursor);
                        let next = Duration::from_millis(batch.next_poll_ms.unwrap_or(0)).max(floor);
                        wait = (!batch.has_more).then_some(next);
                        let gap = batch.truncated.then(|| Polled::Gap { cursor: sub.cursor.clone() });
                        let events = batch.events.into_iter().map(|o| Polled::Event(Box::new(o)));
                        ready = gap.into_iter().chain(events).collect::<Vec<_>>().into_iter();
                    }
                    Err(e) => return Some((Err(e), (client, sub, ready, wait, true))),
                }
            }
        })
    }

    /// Opens an `events/stream` of `subscription`; returns once the server
    /// confirmed it (`notifications/events/active`), or with its refusal.
    pub async fn stream_events(&self, subscription: &EventSubscription) -> Result<EventStream, ClientError> {
        let inner = &self.inner;
        let id = inner.next_id();
        let params = subscription.params().into();
        let mut inbound = inner.open(inner.era(), id, method::EVENTS_STREAM, &params, Marks::default()).await?;
        let guard = Cancel::new(inner, id, true);
        let limit = inner.options.timeout;
        let first = tokio::time::timeout(limit, next_message(inner, &mut inbound))
            .await
            .map_err(|_| ClientError::Timeout(limit))?;
        let active = match first {
            Some(Ok(n)) if n.method == ACTIVE => n,
            Some(Err(e)) => return Err(e),
            _ => {
                return Err(ClientError::transport("the events stream did not begin with notifications/events/active"))
            }
        };
        let state = (inbound, inner.clone(), guard);
        let stream = futures::stream::unfold(state, |(mut inbound, inner, guard)| async move {
            let n = next_message(&inner, &mut inbound).await?.ok()?;
            Some((n, (inbound, inner, guard)))
        });
        Ok(EventStream { active: active.params, stream: stream.boxed() })
    }
}

/// An `events/stream`: every notification of the subscription after the
/// confirmation — occurrences, heartbeats, errors, `active` again after a
/// gap, `terminated` — until the server ends it or the connection closes.
/// Dropping it ends the subscription.
pub struct EventStream {
    active: Value,
    stream: BoxStream<'static, Notification>,
}

impl EventStream {
    /// The confirmation's params (`cursor`, `truncated`).
    pub fn active(&self) -> &Value {
        &self.active
    }

    /// The occurrence a notification carries, if it is one.
    pub fn occurrence(notification: &Notification) -> Option<Occurrence> {
        (notification.method == EVENT).then(|| serde_json::from_value(notification.params.clone()).ok()).flatten()
    }

    /// Whether a notification ends the subscription.
    pub fn ends(notification: &Notification) -> bool {
        notification.method == TERMINATED
    }
}

impl Stream for EventStream {
    type Item = Notification;

    fn poll_next(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Self::Item>> {
        self.stream.poll_next_unpin(cx)
    }
}
