//! Server-Sent Events: the one place that owns the wire format of every
//! SSE stream the server writes — a request's stream (progress, log
//! messages, then the response) and a listen stream alike. Each message is
//! one single-line JSON object in one `data:` event, framed once, as bytes;
//! a quiet stream gets the [`KEEP_ALIVE`] comment; every stream carries
//! `Cache-Control: no-cache` and `X-Accel-Buffering: no`.
//!
//! - A request's stream ([`request_response`]) ends after the final
//!   response; it has its own keep-alive timer, and if the client goes away
//!   first, the stream (and with it the request's outbound receiver) is
//!   dropped, which cancels the request.
//! - A listen stream ([`listen_response`]) may stay open for hours, and a
//!   server holds tens of thousands of them: its body is the [`SseFrames`]
//!   of its listener's [`SseSink`] ([`queue`]), with events framed when
//!   queued and keep-alives from the hub's single timer.

mod frame;
mod queue;

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use actix_web::http::header::{self, HeaderName, HeaderValue, TryIntoHeaderValue};
use actix_web::HttpResponse;
use actix_web_lab::header::{CacheControl, CacheDirective};
use bytes::Bytes;
use futures::{Stream, StreamExt};

pub use frame::{frame, frame_event, KEEP_ALIVE};
pub use queue::{queue, SseFrames, SseSink};

use crate::channels::outbound::{Outbound, OutboundRx};

/// A streaming SSE response of `frames`: no caching, no content encoding,
/// and no buffering by a proxy (nginx reads `X-Accel-Buffering`).
///
/// The headers go in a map of their own size: actix-http gives every
/// response a map with room for 12 headers (about 3.3 KB), which a stream
/// held open — a slow call's, or a listen stream's for hours — keeps; a
/// map for these four is half that.
fn response(frames: impl Stream<Item = Bytes> + 'static) -> HttpResponse {
    let mut res = HttpResponse::Ok().streaming(frames.map(Ok::<_, Infallible>));
    let mut headers = header::HeaderMap::with_capacity(4);
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    headers.insert(header::CONTENT_ENCODING, HeaderValue::from_static("identity"));
    headers.insert(header::CACHE_CONTROL, no_cache());
    headers.insert(HeaderName::from_static("x-accel-buffering"), HeaderValue::from_static("no"));
    *res.headers_mut() = headers;
    res
}

/// `Cache-Control: no-cache`, as actix-web-lab's typed header writes it.
fn no_cache() -> HeaderValue {
    CacheControl(vec![CacheDirective::NoCache]).try_into_value().expect("a valid header value")
}

/// The response for a listen stream (or a legacy session's GET stream).
pub fn listen_response(frames: SseFrames) -> HttpResponse {
    response(frames)
}

/// A request's stream: `first` (if any), then everything from `rx` until
/// the final response, with a keep-alive comment after `keep_alive` of
/// quiet (none when `None`: an events stream's heartbeats are
/// notifications).
pub fn request_response(first: Option<Outbound>, rx: OutboundRx, keep_alive: Option<Duration>) -> HttpResponse {
    let tick = keep_alive.map(|every| {
        let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        tick
    });
    response(RequestFrames { first, rx: Some(rx), tick })
}

/// The frames of a request's stream.
struct RequestFrames {
    first: Option<Outbound>,
    /// `None` once the final response went out.
    rx: Option<OutboundRx>,
    tick: Option<tokio::time::Interval>,
}

impl RequestFrames {
    fn emit(&mut self, msg: &Outbound) -> Bytes {
        if matches!(msg, Outbound::Final { .. }) {
            self.rx = None;
        }
        if let Some(tick) = &mut self.tick {
            tick.reset();
        }
        frame(msg.bytes())
    }
}

impl Stream for RequestFrames {
    type Item = Bytes;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Bytes>> {
        let this = &mut *self;
        if let Some(first) = this.first.take() {
            return Poll::Ready(Some(this.emit(&first)));
        }
        let Some(rx) = this.rx.as_mut() else { return Poll::Ready(None) };
        match rx.poll_recv(cx) {
            Poll::Ready(Some(msg)) => Poll::Ready(Some(this.emit(&msg))),
            Poll::Ready(None) => Poll::Ready(None),
            Poll::Pending => match this.tick.as_mut().map(|tick| tick.poll_tick(cx)) {
                Some(Poll::Ready(_)) => Poll::Ready(Some(Bytes::from_static(KEEP_ALIVE))),
                _ => Poll::Pending,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_request_stream_frames_each_message_keeps_alive_and_ends_after_the_response() {
        let (tx, rx) = crate::channels::outbound::channel(4);
        let first = Outbound::Notification(Bytes::from_static(br#"{"n":1}"#));
        let mut tick =
            tokio::time::interval_at(tokio::time::Instant::now() + Duration::from_secs(5), Duration::from_secs(5));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut frames = RequestFrames { first: Some(first), rx: Some(rx), tick: Some(tick) };
        assert_eq!(frames.next().await.unwrap(), Bytes::from_static(b"data: {\"n\":1}\n\n"));
        // Quiet for longer than the period: one keep-alive comment.
        assert_eq!(frames.next().await.unwrap(), Bytes::from_static(KEEP_ALIVE));
        tx.send(Outbound::answer(br#"{"id":1}"#.to_vec(), None)).await.unwrap();
        tx.send(Box::new(Outbound::Notification(Bytes::from_static(b"{}")))).await.unwrap();
        assert_eq!(frames.next().await.unwrap(), Bytes::from_static(b"data: {\"id\":1}\n\n"));
        assert_eq!(frames.next().await, None, "nothing after the final response");
    }
}
