//! A listen stream in the test client: SSE frames read as they come.

use std::pin::Pin;

use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::ServiceResponse;
use futures::Stream;
use serde_json::Value;

use super::CallError;

/// The JSON messages of complete SSE events in `text`.
pub(super) fn sse_messages(text: &str) -> Vec<Value> {
    text.split("\n\n")
        .filter_map(|event| event.lines().find_map(|l| l.strip_prefix("data:")))
        .filter_map(|data| serde_json::from_str(data.trim()).ok())
        .collect()
}

/// The notifications of a `subscriptions/listen` stream, after its
/// acknowledgement; ends with the stream (the last item may be the
/// completion result the server sends at shutdown).
pub struct Notifications {
    body: Pin<Box<BoxBody>>,
    buf: String,
    /// The acknowledgement's params (the filter the server honours).
    pub acknowledged: Value,
}

impl std::fmt::Debug for Notifications {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Notifications").field("acknowledged", &self.acknowledged).finish()
    }
}

impl Notifications {
    pub(super) async fn open(resp: ServiceResponse<BoxBody>) -> Result<Self, CallError> {
        let status = resp.status().as_u16();
        let mut n = Notifications { body: Box::pin(resp.into_body()), buf: String::new(), acknowledged: Value::Null };
        let first = n.next_message().await;
        match first {
            Some(m) if m["method"] == "notifications/subscriptions/acknowledged" => {
                n.acknowledged = m["params"].clone();
                Ok(n)
            }
            Some(m) if m.get("error").is_some() => Err(CallError::Rpc {
                status,
                error: serde_json::from_value(m["error"].clone())
                    .map_err(|e| CallError::Protocol(format!("bad error: {e}")))?,
            }),
            other => Err(CallError::Protocol(format!("HTTP {status}: no acknowledgement, got {other:?}"))),
        }
    }

    /// The next message, or `None` when the stream ended. It waits as long
    /// as the stream stays open: see [`next_within`](Self::next_within) for
    /// a deadline.
    pub async fn next_message(&mut self) -> Option<Value> {
        futures::StreamExt::next(self).await
    }

    /// The next message if one arrives within `wait`: `Ok(None)` when the
    /// stream ended, `Err(TimedOut)` when nothing came in time (the stream
    /// stays usable).
    pub async fn next_within(&mut self, wait: std::time::Duration) -> Result<Option<Value>, TimedOut> {
        tokio::time::timeout(wait, self.next_message()).await.map_err(|_| TimedOut(wait))
    }
}

/// No message arrived on a listen stream within the time given to
/// [`Notifications::next_within`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimedOut(pub std::time::Duration);

impl std::fmt::Display for TimedOut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "no notification within {} ms", self.0.as_millis())
    }
}

impl std::error::Error for TimedOut {}

impl Stream for Notifications {
    type Item = Value;

    fn poll_next(self: Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> std::task::Poll<Option<Value>> {
        let this = self.get_mut();
        loop {
            if let Some(end) = this.buf.find("\n\n") {
                let event: String = this.buf.drain(..end + 2).collect();
                if let Some(m) = sse_messages(&event).into_iter().next() {
                    return std::task::Poll::Ready(Some(m));
                }
                continue;
            }
            match this.body.as_mut().poll_next(cx) {
                std::task::Poll::Ready(Some(Ok(chunk))) => this.buf.push_str(&String::from_utf8_lossy(&chunk)),
                std::task::Poll::Ready(_) => return std::task::Poll::Ready(None),
                std::task::Poll::Pending => return std::task::Poll::Pending,
            }
        }
    }
}
