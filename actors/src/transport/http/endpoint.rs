//! The MCP endpoint's one route: the request's method picks the handler,
//! and the response is counted (status and bytes out) on its way back.
//!
//! One route with no guard, rather than a route per method: actix-web's
//! method guards record every method they test in the request's extensions
//! (for its own 405 answers), which costs each request a map and two
//! allocations. This endpoint answers 405 itself. Counting here rather than
//! in a middleware spares each request the middleware's boxed service call.

use std::pin::Pin;
use std::task::{Context, Poll};

use actix_web::body::{BodySize, BoxBody, MessageBody};
use actix_web::http::Method;
use actix_web::{web, HttpRequest, HttpResponse, ResponseError};
use bytes::Bytes;
use futures::future::LocalBoxFuture;
use futures::FutureExt;

use super::error::HttpError;
use super::{post, session};
use crate::server::McpServer;

/// POST takes every message; GET and DELETE serve legacy sessions; any other
/// method is 405. The handler's future is boxed here, once: actix-web moves
/// a handler's future several times between its creation and its first
/// poll, and moving a pointer costs less than moving the whole state machine.
pub(super) fn endpoint(
    req: HttpRequest,
    payload: web::Payload,
    server: web::Data<McpServer>,
) -> LocalBoxFuture<'static, HttpResponse<Counted<BoxBody>>> {
    // Read once, as the request starts (a second handle on the server for
    // its end would cost every request a shared reference count's traffic).
    let closing = server.is_draining();
    match *req.method() {
        Method::POST => Box::pin(post::serve(req, payload, server).map(move |a| counted(a, closing))),
        Method::GET => Box::pin(session::get(req, server).map(move |a| counted(a, closing))),
        Method::DELETE => Box::pin(session::delete(req, server).map(move |a| counted(a, closing))),
        _ => Box::pin(session::not_allowed(req).map(move |a| counted(a, closing))),
    }
}

/// The response (an error's included), counted by status, with a body that
/// counts its bytes as they leave; for a request that came while the
/// server drains (`closing`), with `Connection: close`, so that a
/// balancer's kept-alive connection is not used again.
fn counted(answer: Result<HttpResponse, HttpError>, closing: bool) -> HttpResponse<Counted<BoxBody>> {
    let mut response = answer.unwrap_or_else(|e| e.error_response());
    if closing {
        response.head_mut().set_connection_type(actix_web::http::ConnectionType::Close);
    }
    crate::telemetry::http_response(response.status().as_u16());
    response.map_body(|_, body| Counted(body))
}

/// A body whose bytes are counted as they leave.
pub(super) struct Counted<B>(B);

impl<B: MessageBody + Unpin> MessageBody for Counted<B> {
    type Error = B::Error;

    fn size(&self) -> BodySize {
        self.0.size()
    }

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Bytes, Self::Error>>> {
        let polled = Pin::new(&mut self.0).poll_next(cx);
        if let Poll::Ready(Some(Ok(chunk))) = &polled {
            crate::telemetry::bytes_out(chunk.len());
        }
        polled
    }

    fn try_into_bytes(self) -> Result<Bytes, Self> {
        match self.0.try_into_bytes() {
            Ok(bytes) => {
                crate::telemetry::bytes_out(bytes.len());
                Ok(bytes)
            }
            Err(body) => Err(Counted(body)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[actix_rt::test]
    async fn a_body_is_passed_through_whole() {
        let body = Counted(Bytes::from_static(b"{\"ok\":true}"));
        assert_eq!(body.size(), BodySize::Sized(11));
        let bytes = actix_web::body::to_bytes(body).await.ok().unwrap();
        assert_eq!(&bytes[..], b"{\"ok\":true}");
    }
}
