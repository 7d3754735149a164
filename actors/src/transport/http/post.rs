//! POST: every JSON-RPC message a client sends.
//!
//! Per request, in order: `Host`/`Origin` (403) → `Content-Type` (415) →
//! with authorization on, the caller from the head (401, 400, 503; no byte
//! of the body is read for a refused one) → body size (413) → the intake:
//! the scopes of the item the request uses (403) → JSON-RPC envelope (-32700/-32600, 400)
//! → `_meta` (-32602 / HeaderMismatch / UnsupportedProtocolVersion, 400) →
//! `Mcp-Method` (HeaderMismatch, 400) → method (-32601, 404) → params
//! (-32602, 400) → `Mcp-Name` and `Mcp-Param-*` (HeaderMismatch, 400) → a
//! request actor. `subscriptions/listen` is answered with an SSE stream that
//! stays open, fed by a listener actor. A message with `Mcp-Session-Id`
//! belongs to a legacy session (`session`).

use std::time::Duration;

use actix_web::http::header;
use actix_web::{web, HttpRequest, HttpResponse};
use futures::{FutureExt, StreamExt};

use super::answer::{act, HttpDriver};
use super::error::HttpError;
use super::headers::session_id;
use super::{auth, guard, session};
use crate::pipeline::intake::Route;
use crate::server::McpServer;

/// The POST handler: every JSON-RPC message a client sends.
pub(super) async fn serve(
    req: HttpRequest,
    payload: web::Payload,
    server: web::Data<McpServer>,
) -> Result<HttpResponse, HttpError> {
    guard::admit(&req, &server)?;
    check_content(&req)?;
    // The caller is known from the head, before the body is read: a request
    // without valid credentials costs no body buffer and no wait. Boxed:
    // authentication may wait on the authorization server, and its future
    // would otherwise add its size to every request's.
    let identity = match server.authorizer() {
        Some(_) => Box::pin(auth::caller_of_message(&req, &server)).await?,
        None => None,
    };
    let http = &server.config().http;
    let body = read_body(&req, payload, http.max_body_bytes, Duration::from_millis(http.body_timeout_ms)).await?;
    crate::telemetry::bytes_in(body.len());
    // The legacy path is boxed: its future is large and rare, and the
    // stateless path's future stays small enough for the allocator's caches.
    if let Some(sid) = session_id(&req) {
        return Box::pin(session::post(&req, &server, sid, &body, identity.as_ref())).await;
    }
    let started = std::time::Instant::now();
    let driver = HttpDriver::new(&req, &server, identity.as_ref());
    match server.intake().route(&driver, &body) {
        Route::Act(action) => act(&driver, action, started).await,
        Route::Initialize(r) => Box::pin(session::initialize(&server, r, identity.as_deref())).await,
    }
}

/// The body must be JSON (`application/json`, parameters allowed) and not
/// encoded: a `Content-Encoding` other than `identity` is refused rather
/// than read as JSON.
fn check_content(req: &HttpRequest) -> Result<(), HttpError> {
    if let Some(ct) = req.headers().get(header::CONTENT_TYPE) {
        let media_type = ct.as_bytes().split(|&b| b == b';').next().unwrap_or_default().trim_ascii();
        if !media_type.eq_ignore_ascii_case(b"application/json") {
            return Err(HttpError::unsupported_media_type(&String::from_utf8_lossy(ct.as_bytes())));
        }
    }
    for encoding in req.headers().get_all(header::CONTENT_ENCODING) {
        let encoding = encoding.to_str().unwrap_or("?").trim().to_ascii_lowercase();
        if encoding != "identity" {
            return Err(HttpError::unsupported_encoding(&encoding));
        }
    }
    Ok(())
}

/// The body, bounded in size and in time: a body not complete within
/// `timeout` of the first wait for it is refused. The timer is armed only
/// when the body is not there after one yield: the dispatcher calls the
/// handler before it feeds the body it read with the head, so most bodies
/// arrive during that yield.
async fn read_body(
    req: &HttpRequest,
    mut payload: web::Payload,
    limit: usize,
    timeout: Duration,
) -> Result<web::BytesMut, HttpError> {
    let declared =
        req.headers().get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()).and_then(|v| v.parse::<usize>().ok());
    if declared.is_some_and(|n| n > limit) {
        return Err(HttpError::too_large(limit));
    }
    let mut body = web::BytesMut::with_capacity(declared.unwrap_or(1024).min(limit));
    let mut deadline = None;
    let mut yielded = false;
    loop {
        let next = match payload.next().now_or_never() {
            Some(next) => next,
            None if !yielded => {
                yielded = true;
                yield_once().await;
                continue;
            }
            None => {
                let at = *deadline.get_or_insert_with(|| tokio::time::Instant::now() + timeout);
                tokio::time::timeout_at(at, payload.next()).await.map_err(|_| HttpError::body_timeout(timeout))?
            }
        };
        let Some(chunk) = next else { return Ok(body) };
        let chunk = chunk.map_err(HttpError::unreadable)?;
        if body.len() + chunk.len() > limit {
            return Err(HttpError::too_large(limit));
        }
        body.extend_from_slice(&chunk);
    }
}

/// Pending once, with this task woken at once: it runs again after what
/// its poll's caller does next (a wake-up that coincides with another one,
/// such as the body's arrival, costs nothing more).
async fn yield_once() {
    let mut yielded = false;
    std::future::poll_fn(|cx| {
        if std::mem::replace(&mut yielded, true) {
            return std::task::Poll::Ready(());
        }
        cx.waker().wake_by_ref();
        std::task::Poll::Pending
    })
    .await
}
