//! Response streams as Server-Sent Events: one single-line JSON message per
//! `data:` event, `X-Accel-Buffering: no`, keep-alive comments.
//!
//! A request's stream (progress, log messages, then the response) is an
//! actix-web-lab `Sse` with its own keep-alive timer; it ends after the final
//! response, and if the client goes away first, the stream (and with it the
//! request's outlet receiver) is dropped, which cancels the request.
//!
//! A listen stream may stay open for hours, and a server holds tens of
//! thousands of them: its body is the [`SseFrames`] of its listener's
//! outlet, with events framed once when queued and keep-alives from the
//! hub's single timer ([`listen_response`]).

use std::convert::Infallible;
use std::time::Duration;

use actix_web::http::header::{self, HeaderName, HeaderValue};
use actix_web::{HttpRequest, HttpResponse, Responder};
use actix_web_lab::sse;
use bytes::Bytes;
use futures::StreamExt;
use mcp_protocol::subscription::EventTemplate;
use mcp_protocol::RequestId;

use super::sse_outlet::SseFrames;
use crate::outbound::{Outbound, OutletRx};

/// The SSE comment a quiet stream sends now and then.
pub const KEEP_ALIVE: &[u8] = b": keep-alive\n\n";

/// An SSE `data:` event around `len` bytes of single-line JSON that
/// `write` appends, in one allocation.
fn data_event(len: usize, write: impl FnOnce(&mut Vec<u8>)) -> Bytes {
    let mut f = Vec::with_capacity(len + 8);
    f.extend_from_slice(b"data: ");
    write(&mut f);
    f.extend_from_slice(b"\n\n");
    f.into()
}

/// One encoded single-line JSON message as an SSE `data:` event.
pub fn frame(json: &[u8]) -> Bytes {
    debug_assert!(!json.contains(&b'\n'), "messages are single-line JSON");
    data_event(json.len(), |f| f.extend_from_slice(json))
}

/// A routed event for subscription `id` as an SSE `data:` event, encoded
/// straight into its frame (no copy).
pub fn frame_event(event: &EventTemplate, id: &RequestId) -> Bytes {
    data_event(event.encoded_len(id), |f| event.encode_into(id, f))
}

/// Headers of every SSE response: no caching, and no buffering by a proxy
/// (nginx reads `X-Accel-Buffering`).
fn stream_headers(mut res: HttpResponse) -> HttpResponse {
    let headers = res.headers_mut();
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert(HeaderName::from_static("x-accel-buffering"), HeaderValue::from_static("no"));
    res
}

/// The response for a listen stream (or a legacy session's GET stream).
pub fn listen_response(frames: SseFrames) -> HttpResponse {
    stream_headers(
        HttpResponse::Ok()
            .content_type("text/event-stream")
            .insert_header((header::CONTENT_ENCODING, "identity"))
            .streaming(frames.map(Ok::<_, Infallible>)),
    )
}

/// The SSE event for one encoded message.
pub fn event(msg: &Outbound) -> sse::Event {
    let text = String::from_utf8_lossy(msg.bytes()).into_owned();
    sse::Event::Data(sse::Data::new(text))
}

/// Streams `first` (if any) and then everything from `rx` until the final response.
pub fn response_stream(req: &HttpRequest, first: Option<Outbound>, rx: OutletRx, keep_alive: Duration) -> HttpResponse {
    let stream = futures::stream::unfold((first, Some(rx)), |(pending, rx)| async move {
        let mut rx = rx?;
        let msg = match pending {
            Some(m) => m,
            None => *rx.recv().await?,
        };
        let done = matches!(msg, Outbound::Final { .. });
        Some((Ok::<_, Infallible>(event(&msg)), (None, (!done).then_some(rx))))
    });
    stream_headers(sse::Sse::from_stream(stream).with_keep_alive(keep_alive).respond_to(req))
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_protocol::subscription::Event;

    #[test]
    fn an_event_framed_directly_equals_its_encoding_framed() {
        let event = Event::ResourceUpdated { uri: "test://watched-resource".into() };
        let template = EventTemplate::new(&event);
        for id in [RequestId::number(12), RequestId::string("listen-1")] {
            let direct = frame_event(&template, &id);
            assert_eq!(direct, frame(&template.encode_for(&id)));
            assert!(direct.starts_with(b"data: {") && direct.ends_with(b"}\n\n"), "{direct:?}");
        }
    }
}
