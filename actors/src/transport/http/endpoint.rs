//! The MCP endpoint's one route: the request's method picks the handler,
//! and the response is counted (status and bytes out) on its way back.
//!
//! One route with no guard, rather than a route per method: actix-web's
//! method guards record every method they test in the request's extensions
//! (for its own 405 answers), which costs each request a map and two
//! allocations. This endpoint answers 405 itself. Counting here rather than
//! in a middleware spares each request the middleware's boxed service call.

use actix_web::body::BoxBody;
use actix_web::http::Method;
use actix_web::{web, HttpRequest, HttpResponse, ResponseError};
use futures::future::LocalBoxFuture;
use futures::FutureExt;

use super::counted::Counted;
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
    match *req.method() {
        Method::POST => Box::pin(post::serve(req, payload, server.clone()).map(move |a| counted(a, &server))),
        Method::GET => Box::pin(session::get(req, server.clone()).map(move |a| counted(a, &server))),
        Method::DELETE => Box::pin(session::delete(req, server.clone()).map(move |a| counted(a, &server))),
        _ => Box::pin(session::not_allowed(req).map(move |a| counted(a, &server))),
    }
}

/// The response (an error's included), counted by status, with a body that
/// counts its bytes as they leave; while the server drains, with
/// `Connection: close`, so that a balancer's kept-alive connection is not
/// used again.
fn counted(answer: Result<HttpResponse, HttpError>, server: &McpServer) -> HttpResponse<Counted<BoxBody>> {
    let mut response = answer.unwrap_or_else(|e| e.error_response());
    if server.is_draining() {
        response.head_mut().set_connection_type(actix_web::http::ConnectionType::Close);
    }
    crate::telemetry::http_response(response.status().as_u16());
    response.map_body(|_, body| Counted(body))
}
