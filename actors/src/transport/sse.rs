//! Response streams as Server-Sent Events (actix-web-lab `sse`): one
//! single-line JSON message per `data:` event, `X-Accel-Buffering: no`,
//! keep-alive comments. The stream ends after the final response; if the
//! client goes away first, the stream (and with it the request's outlet
//! receiver) is dropped, which cancels the request.

use std::convert::Infallible;
use std::time::Duration;

use actix_web::{HttpRequest, HttpResponse, Responder};
use actix_web_lab::sse;

use crate::outbound::{Outbound, OutletRx};

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
    sse::Sse::from_stream(stream)
        .with_keep_alive(keep_alive)
        .customize()
        .insert_header(("X-Accel-Buffering", "no"))
        .insert_header(("Cache-Control", "no-cache"))
        .respond_to(req)
        .map_into_boxed_body()
}
