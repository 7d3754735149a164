//! Change notifications as a `Stream`: `subscriptions/listen` statelessly
//! (its stream tagged with the subscription id, acknowledged first), the
//! session's GET stream plus `resources/subscribe` in a legacy session.
//! Dropping the stream ends the subscription.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures::stream::{BoxStream, Stream, StreamExt};
use mcp_protocol::client::{Marks, ServerMessage, Spoken};
use mcp_protocol::model::JsonObject;
use mcp_protocol::subscription::{ListenParams, SubscriptionFilter, ACKNOWLEDGED_METHOD, LISTEN_METHOD};
use serde::Deserialize;
use tokio::sync::broadcast;

use super::connection::{spawn_detached, Cancel, Inner};
use super::error::ClientError;
use super::options::RequestOptions;
use super::outgoing::Inbound;
use super::{Client, Notification};
use mcp_protocol::legacy::method as legacy;
use mcp_protocol::subscription::notification;

/// A listen stream: the notifications the filter opted into, until the
/// server ends it or the connection closes.
pub struct Listen {
    honored: SubscriptionFilter,
    stream: BoxStream<'static, Notification>,
}

impl Listen {
    /// What the server agreed to send (its acknowledgement; in a legacy
    /// session, what was asked).
    pub fn honored(&self) -> &SubscriptionFilter {
        &self.honored
    }
}

impl Stream for Listen {
    type Item = Notification;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Notification>> {
        self.stream.poll_next_unpin(cx)
    }
}

impl Client {
    /// Opens a listen stream for `filter`; returns once the server has
    /// acknowledged it, so every change after this call is delivered.
    pub async fn listen(&self, filter: SubscriptionFilter) -> Result<Listen, ClientError> {
        match self.inner.era() {
            Some(Spoken::Legacy(_)) => legacy(&self.inner, filter).await,
            era => stateless(&self.inner, era, filter).await,
        }
    }
}

async fn stateless(inner: &Arc<Inner>, era: Option<Spoken>, filter: SubscriptionFilter) -> Result<Listen, ClientError> {
    let id = inner.next_id();
    let mut params = JsonObject::new();
    params.insert("notifications".into(), serde_json::to_value(&filter).unwrap_or_default());
    let mut inbound = inner.open(era, id, LISTEN_METHOD, &params.into(), Marks::default()).await?;
    let guard = Cancel::new(inner, id, true);
    let limit = inner.options.timeout;
    let first = tokio::time::timeout(limit, next_message(inner, &mut inbound))
        .await
        .map_err(|_| ClientError::Timeout(limit))?;
    let honored = match first {
        Some(Ok(n)) if n.method == ACKNOWLEDGED_METHOD => {
            ListenParams::deserialize(&n.params).map(|p| p.notifications).unwrap_or_default()
        }
        Some(Err(e)) => return Err(e),
        _ => return Err(ClientError::transport("the listen stream did not begin with its acknowledgement")),
    };
    let state = (inbound, inner.clone(), guard);
    let stream = futures::stream::unfold(state, |(mut inbound, inner, guard)| async move {
        match next_message(&inner, &mut inbound).await {
            Some(Ok(n)) => Some((n, (inbound, inner, guard))),
            _ => None,
        }
    });
    Ok(Listen { honored, stream: stream.boxed() })
}

/// The next notification of a listen stream (or an events stream); its
/// response (or an error) ends it, and a server request inside it is
/// answered.
pub(super) async fn next_message(
    inner: &Arc<Inner>,
    inbound: &mut Inbound,
) -> Option<Result<Notification, ClientError>> {
    while let Some(msg) = inbound.recv().await {
        match msg {
            ServerMessage::Notification { method, params } => {
                inner.lists.saw(&method);
                return Some(Ok(Notification { method, params }));
            }
            ServerMessage::Response { outcome, .. } => return outcome.err().map(|e| Err(e.into())),
            request => inner.incoming(request, &RequestOptions::default()),
        }
    }
    None
}

/// Ends a legacy subscription's `resources/subscribe`s when the stream is
/// dropped.
struct Unsubscribe {
    inner: Arc<Inner>,
    uris: Vec<String>,
}

impl Drop for Unsubscribe {
    fn drop(&mut self) {
        let (inner, uris) = (self.inner.clone(), std::mem::take(&mut self.uris));
        spawn_detached(async move {
            for uri in uris {
                let params = JsonObject::from_iter([("uri".to_owned(), uri.into())]);
                let _ = inner.request(legacy::RESOURCES_UNSUBSCRIBE, params, &RequestOptions::default()).await;
            }
        });
    }
}

async fn legacy(inner: &Arc<Inner>, filter: SubscriptionFilter) -> Result<Listen, ClientError> {
    let events = inner.events.subscribe();
    for uri in &filter.resource_subscriptions {
        let params = JsonObject::from_iter([("uri".to_owned(), uri.as_str().into())]);
        inner.request(legacy::RESOURCES_SUBSCRIBE, params, &RequestOptions::default()).await?;
    }
    let guard = Unsubscribe { inner: inner.clone(), uris: filter.resource_subscriptions.clone() };
    let wanted = filter.clone();
    let state = (events, guard);
    let stream = futures::stream::unfold(state, move |(mut events, guard)| {
        let wanted = wanted.clone();
        async move {
            loop {
                match events.recv().await {
                    Ok(n) if wants(&wanted, &n) => return Some((n, (events, guard))),
                    Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => continue,
                    Err(broadcast::error::RecvError::Closed) => return None,
                }
            }
        }
    });
    // A legacy session has no Events extension: its list never changes.
    let honored = SubscriptionFilter { events_list_changed: false, ..filter };
    Ok(Listen { honored, stream: stream.boxed() })
}

/// Whether a legacy session's notification is one the filter opted into.
fn wants(filter: &SubscriptionFilter, n: &Notification) -> bool {
    match n.method.as_str() {
        notification::TOOLS_LIST_CHANGED => filter.tools_list_changed,
        notification::PROMPTS_LIST_CHANGED => filter.prompts_list_changed,
        notification::RESOURCES_LIST_CHANGED => filter.resources_list_changed,
        notification::RESOURCES_UPDATED => {
            let uri = n.params.get("uri").and_then(|u| u.as_str()).unwrap_or_default();
            filter.resource_subscriptions.iter().any(|u| u == uri)
        }
        _ => false,
    }
}
