//! Streamable HTTP, the client side: each message is a POST; an answer
//! comes back as one JSON body or as an SSE stream of messages ending with
//! it (resumed with `Last-Event-ID` if the stream breaks first). A legacy
//! session adds `Mcp-Session-Id`, a GET stream for messages not tied to a
//! request, and a `DELETE` at close. A JSON body or an SSE event larger
//! than `max_message_bytes`, or one that is not UTF-8, fails its request
//! (the stream is not read further), and a request that cannot reach the
//! server at all (refused, reset) says so to [`Http::unreachable`].

use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use futures::StreamExt;
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyDataStream, BodyExt, Full};
use mcp_protocol::client::ServerMessage;
use mcp_protocol::RequestId;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue, ACCEPT, CONTENT_TYPE, WWW_AUTHENTICATE};
use reqwest::Method;
use tokio::sync::watch;

use super::auth::{Refusal, TokenProvider};
use super::error::ClientError;
use super::h1::Pool;
use super::options::ClientOptions;
use super::outgoing::{inbound, Inbound, InboundTx, Outgoing};
use super::sse::{Malformed, SseDecoder};

/// How many times a broken SSE answer is resumed before the call fails.
const MAX_RESUMES: u32 = 5;
/// How many times one request is sent again after the server refused its
/// credentials and the provider got new ones (a token, then a DPoP nonce).
const MAX_AUTH_RETRIES: u32 = 3;
/// The wait before resuming when the server named none (`retry:`).
const DEFAULT_RETRY: Duration = Duration::from_millis(1000);
/// How long the `DELETE` that ends a legacy session may take.
const CLOSE_TIMEOUT: Duration = Duration::from_secs(5);

/// A response, whichever way it came.
type Reply = http::Response<UnsyncBoxBody<Bytes, Box<dyn std::error::Error + Send + Sync>>>;

/// How requests reach the endpoint: the client's own HTTP/1.1 connections
/// for a plain `http://` URL without a proxy, else the general client.
#[derive(Clone)]
struct Wire {
    client: reqwest::Client,
    pool: Option<Arc<Pool>>,
    url: reqwest::Url,
    /// The URL's path and query, the target of a request on an own connection.
    target: http::Uri,
}

impl Wire {
    fn new(url: &str) -> Result<Self, ClientError> {
        let parsed =
            reqwest::Url::parse(url).map_err(|e| ClientError::transport(format!("{url:?} is not a URL: {e}")))?;
        let client = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .build()
            .map_err(|e| ClientError::transport(e.to_string()))?;
        let path = match parsed.query() {
            Some(q) => format!("{}?{q}", parsed.path()),
            None => parsed.path().to_owned(),
        };
        let target = path.parse().map_err(|e| ClientError::transport(format!("{url:?}: {e}")))?;
        Ok(Wire { client, pool: Pool::for_url(&parsed), url: parsed, target })
    }

    /// Sends one request.
    async fn send(&self, method: Method, headers: HeaderMap, body: Bytes) -> Result<Reply, String> {
        if let Some(pool) = &self.pool {
            let mut req = http::Request::builder().method(method).uri(self.target.clone());
            *req.headers_mut().expect("a new request") = headers;
            let req = req.body(Full::new(body)).map_err(|e| e.to_string())?;
            let resp = pool.send(req).await?;
            return Ok(resp.map(|b| b.map_err(Into::into).boxed_unsync()));
        }
        let req = self.client.request(method, self.url.clone()).headers(headers).body(body);
        let resp = http::Response::from(req.send().await.map_err(|e| e.to_string())?);
        Ok(resp.map(|b| b.map_err(Into::into).boxed_unsync()))
    }
}

/// One Streamable HTTP endpoint.
pub(crate) struct Http {
    wire: Wire,
    /// The headers of every request: `Accept` and the options' own.
    fixed: HeaderMap,
    options: ClientOptions,
    /// The legacy session, once `initialize` named one.
    session: Mutex<Option<String>>,
    /// `MCP-Protocol-Version` for every request once the version is known.
    version: Mutex<Option<HeaderValue>>,
    /// Messages not tied to a request (a legacy session's GET stream).
    unrouted: InboundTx,
    /// Why the server could not be reached, once a request could not.
    unreachable: watch::Sender<Option<String>>,
}

impl Http {
    /// A transport to `url`; messages not tied to a request go to `unrouted`.
    pub(crate) fn new(url: &str, options: ClientOptions, unrouted: InboundTx) -> Result<Self, ClientError> {
        let mut fixed = HeaderMap::new();
        fixed.insert(ACCEPT, HeaderValue::from_static("application/json, text/event-stream"));
        for (k, v) in &options.headers {
            let (Ok(name), Ok(value)) = (HeaderName::from_bytes(k.as_bytes()), HeaderValue::from_str(v)) else {
                return Err(ClientError::transport(format!("the header {k}: {v} is not a valid HTTP header")));
            };
            fixed.append(name, value);
        }
        Ok(Http {
            wire: Wire::new(url)?,
            fixed,
            options,
            session: Mutex::new(None),
            version: Mutex::new(None),
            unrouted,
            unreachable: watch::Sender::new(None),
        })
    }

    /// Resolves when a request could not reach the server at all (the
    /// connection refused or broken before an answer: the server is gone,
    /// or going away), with why.
    pub(crate) async fn unreachable(&self) -> String {
        let mut rx = self.unreachable.subscribe();
        let why = rx.wait_for(Option::is_some).await.map(|v| v.clone()).ok().flatten();
        why.unwrap_or_default()
    }

    /// Sends one request; a failure to reach the server is remembered.
    async fn send(&self, method: Method, headers: HeaderMap, body: Bytes, what: &str) -> Result<Reply, ClientError> {
        self.wire.send(method, headers, body).await.map_err(|e| {
            let why = format!("sending {what} to {}: {e}", self.wire.url);
            self.unreachable.send_replace(Some(why.clone()));
            ClientError::Transport(why)
        })
    }

    /// Sets the version header sent from now on.
    pub(crate) fn set_version(&self, version: &str) {
        *self.version.lock().expect("version lock") = HeaderValue::from_str(version).ok();
    }

    /// The legacy session id, if any.
    pub(crate) fn session(&self) -> Option<String> {
        self.session.lock().expect("session lock").clone()
    }

    /// The headers of every request: the fixed ones, the version, the session.
    fn base_headers(&self) -> HeaderMap {
        let mut headers = self.fixed.clone();
        if let Some(v) = self.version.lock().expect("version lock").clone() {
            headers.insert(VERSION_HEADER, v);
        }
        if let Some(s) = self.session.lock().expect("session lock").as_deref().and_then(|s| s.parse().ok()) {
            headers.insert(SESSION_HEADER, s);
        }
        headers
    }

    /// Adds the provider's authorization headers, if any.
    async fn authorize(&self, headers: &mut HeaderMap, method: &str) -> Result<(), ClientError> {
        if let Some(p) = &self.options.token {
            authorize(p.as_ref(), headers, method, self.wire.url.as_str()).await?;
        }
        Ok(())
    }

    /// POSTs one message. For a request, the answer's messages arrive on
    /// the returned channel, which ends after the response (or when the
    /// stream ends); dropping it closes the stream.
    pub(crate) async fn post(&self, out: &Outgoing, what: &str) -> Result<Inbound, ClientError> {
        let mut retries = 0;
        loop {
            let mut headers = self.base_headers();
            headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
            for (k, v) in &out.headers {
                let (Some(name), Ok(value)) = (header_name(k), HeaderValue::from_str(v)) else {
                    return Err(ClientError::transport(format!("sending {what}: {k}: {v} is not a valid header")));
                };
                headers.append(name, value);
            }
            self.authorize(&mut headers, "POST").await?;
            let resp = self.send(Method::POST, headers, out.body.clone(), what).await?;
            let status = resp.status().as_u16();
            if status == 401 || status == 403 {
                let challenge = header(resp.headers(), WWW_AUTHENTICATE.as_str());
                let dpop_nonce = header(resp.headers(), "dpop-nonce");
                if let (Some(p), true) = (&self.options.token, retries < MAX_AUTH_RETRIES)
                    && p.refused(Refusal { status, challenge: challenge.clone(), dpop_nonce }).await?
                {
                    retries += 1;
                    continue;
                }
                return Err(ClientError::Auth { status, challenge, message: format!("sending {what}") });
            }
            if let Some(s) = header(resp.headers(), "mcp-session-id") {
                *self.session.lock().expect("session lock") = Some(s);
            }
            return self.answer(resp, out.id.clone(), what).await;
        }
    }

    /// Reads the answer of a POST or of a resuming GET.
    async fn answer(&self, resp: Reply, id: Option<RequestId>, what: &str) -> Result<Inbound, ClientError> {
        let status = resp.status().as_u16();
        let (tx, rx) = inbound(self.options.max_queued_messages);
        if status == 202 || (id.is_none() && (200..300).contains(&status)) {
            return Ok(rx);
        }
        if status == 404 && self.session().is_some() {
            return Err(ClientError::transport(format!(
                "sending {what}: the server no longer knows this session (HTTP 404)"
            )));
        }
        let ctype = header(resp.headers(), CONTENT_TYPE.as_str()).unwrap_or_default();
        if ctype.starts_with("text/event-stream") && status == 200 {
            let (http, max) = (self.resume_target(), self.options.max_message_bytes);
            let resume = Resume { http, id, max, what: what.to_owned() };
            tokio::spawn(pump_sse(resp, tx, resume));
            return Ok(rx);
        }
        let max = self.options.max_message_bytes;
        let bytes = match read_limited(resp, max).await {
            Ok(b) => b,
            Err(None) => {
                return Err(ClientError::transport(format!(
                    "the answer to {what} is larger than {max} bytes (max_message_bytes); not read further"
                )))
            }
            Err(Some(e)) => return Err(ClientError::transport(format!("sending {what}: {e}"))),
        };
        match ServerMessage::decode(&bytes) {
            // A JSON-RPC answer, whatever the status (a 400 carries its error).
            Ok(msg) => {
                tx.send(msg).await;
                Ok(rx)
            }
            Err(_) if std::str::from_utf8(&bytes).is_err() => {
                Err(ClientError::transport(format!("the HTTP {status} answer to {what} is not UTF-8; refused")))
            }
            Err(_) => Err(ClientError::transport(format!(
                "sending {what}: HTTP {status} without a JSON-RPC answer ({})",
                String::from_utf8_lossy(&bytes[..bytes.len().min(200)])
            ))),
        }
    }

    fn resume_target(&self) -> ResumeTarget {
        ResumeTarget { token: self.options.token.clone(), wire: self.wire.clone(), headers: self.base_headers() }
    }

    /// Opens a legacy session's GET stream; its messages go to `unrouted`.
    /// A server without one (405) is fine.
    pub(crate) async fn open_get_stream(&self) -> Result<(), ClientError> {
        let mut headers = self.base_headers();
        self.authorize(&mut headers, "GET").await?;
        let resp = self.send(Method::GET, headers, Bytes::new(), "the GET stream").await?;
        if resp.status().as_u16() != 200 {
            return Ok(());
        }
        let (http, max) = (self.resume_target(), self.options.max_message_bytes);
        let resume = Resume { http, id: None, max, what: "the GET stream".to_owned() };
        tokio::spawn(pump_sse(resp, self.unrouted.clone(), resume));
        Ok(())
    }

    /// Ends a legacy session (`DELETE`); best effort.
    pub(crate) async fn close(&self) {
        if self.session().is_some() {
            let mut headers = self.base_headers();
            if self.authorize(&mut headers, "DELETE").await.is_ok() {
                let _ =
                    tokio::time::timeout(CLOSE_TIMEOUT, self.wire.send(Method::DELETE, headers, Bytes::new())).await;
            }
            *self.session.lock().expect("session lock") = None;
        }
    }
}

/// The body of `resp`, read to its end if it is at most `max` bytes;
/// else `Err(None)` (not read further), or the error reading it.
async fn read_limited(resp: Reply, max: usize) -> Result<Bytes, Option<String>> {
    let mut body = resp.into_body();
    let mut read = bytes::BytesMut::new();
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| Some(e.to_string()))?;
        if let Ok(data) = frame.into_data() {
            if read.len() + data.len() > max {
                return Err(None);
            }
            read.extend_from_slice(&data);
        }
    }
    Ok(read.freeze())
}

const VERSION_HEADER: HeaderName = HeaderName::from_static("mcp-protocol-version");
const SESSION_HEADER: HeaderName = HeaderName::from_static("mcp-session-id");

/// A request header's name; the standard ones without parsing.
fn header_name(name: &str) -> Option<HeaderName> {
    const KNOWN: [(&str, HeaderName); 3] = [
        ("Mcp-Method", HeaderName::from_static("mcp-method")),
        ("Mcp-Name", HeaderName::from_static("mcp-name")),
        ("MCP-Protocol-Version", VERSION_HEADER),
    ];
    match KNOWN.iter().find(|(k, _)| *k == name) {
        Some((_, h)) => Some(h.clone()),
        None => HeaderName::from_bytes(name.as_bytes()).ok(),
    }
}

/// Adds `provider`'s authorization headers for a `method` request to `url`.
async fn authorize(
    provider: &dyn TokenProvider,
    headers: &mut HeaderMap,
    method: &str,
    url: &str,
) -> Result<(), ClientError> {
    for (k, v) in provider.authorization(method, url).await? {
        let (Ok(name), Ok(value)) = (HeaderName::from_bytes(k.as_bytes()), HeaderValue::from_str(&v)) else {
            return Err(ClientError::transport(format!("the authorization header {k} is not a valid header")));
        };
        headers.insert(name, value);
    }
    Ok(())
}

fn header(headers: &HeaderMap, name: &str) -> Option<String> {
    headers.get(name).and_then(|v| v.to_str().ok()).map(str::to_owned)
}

/// What a broken SSE stream is resumed against.
struct ResumeTarget {
    token: Option<Arc<dyn TokenProvider>>,
    wire: Wire,
    /// The request's headers besides authorization (version, session).
    headers: HeaderMap,
}

struct Resume {
    http: ResumeTarget,
    /// The request whose response ends the stream (`None`: a GET stream).
    id: Option<RequestId>,
    /// The largest event read.
    max: usize,
    /// What the stream answers, for its errors.
    what: String,
}

/// Feeds an SSE answer's messages to `tx` until the response to `id`
/// arrives, the receiver is dropped, an event is over the size limit or
/// not UTF-8 (the answer fails, naming it), or the stream ends and cannot
/// be resumed.
async fn pump_sse(mut resp: Reply, tx: InboundTx, resume: Resume) {
    let mut last_id: Option<String> = None;
    let mut retry = DEFAULT_RETRY;
    let mut resumes = 0;
    loop {
        let mut body = BodyDataStream::new(resp.into_body());
        let mut decoder = SseDecoder::new(resume.max);
        let mut done = false;
        loop {
            let next = tokio::select! {
                _ = tx.closed() => return,
                next = body.next() => next,
            };
            let Some(Ok(chunk)) = next else { break };
            let (messages, fed) = read_events(&mut decoder, &chunk, &mut last_id, &mut retry);
            for msg in messages {
                let response = resume.id.as_ref().is_some_and(|id| msg.answers(id));
                // The reader is waited for: the stream is read no faster than its messages are.
                if !tx.send(msg).await || response {
                    done = true;
                    break;
                }
            }
            if let Err(malformed) = fed {
                tx.fail(ClientError::Transport(malformed.describe(&resume.what, resume.max)));
                return;
            }
            if done {
                return;
            }
        }
        let Some(event_id) = last_id.clone() else { return };
        if resumes >= MAX_RESUMES {
            return;
        }
        resumes += 1;
        tokio::select! {
            _ = tx.closed() => return,
            _ = tokio::time::sleep(retry) => {}
        }
        match reopen(&resume.http, event_id).await {
            Some(r) => resp = r,
            None => return,
        }
    }
}

/// The messages of one chunk of an SSE stream, noting its last event id and
/// retry interval; and whether an event was refused (over the size limit,
/// not UTF-8).
fn read_events(
    decoder: &mut SseDecoder,
    chunk: &[u8],
    last_id: &mut Option<String>,
    retry: &mut Duration,
) -> (Vec<ServerMessage>, Result<(), Malformed>) {
    let mut messages = Vec::new();
    let fed = decoder.feed(chunk, |event| {
        if let Some(id) = event.id.filter(|id| !id.is_empty()) {
            *last_id = Some(id);
        }
        if let Some(r) = event.retry {
            *retry = r;
        }
        // An event that is not a JSON-RPC message (a comment, a priming event) is skipped.
        if let Ok(msg) = ServerMessage::decode(event.data.as_bytes()) {
            messages.push(msg);
        }
    });
    (messages, fed)
}

/// Resumes a broken SSE stream with a GET naming the last event seen; the
/// new stream, or `None` when the server will not resume it.
async fn reopen(t: &ResumeTarget, event_id: String) -> Option<Reply> {
    let mut headers = t.headers.clone();
    headers.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
    headers.insert("last-event-id", HeaderValue::from_str(&event_id).ok()?);
    if let Some(p) = &t.token {
        authorize(p.as_ref(), &mut headers, "GET", t.wire.url.as_str()).await.ok()?;
    }
    match t.wire.send(Method::GET, headers, Bytes::new()).await {
        Ok(r) if r.status().as_u16() == 200 => Some(r),
        _ => None,
    }
}
