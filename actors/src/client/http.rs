//! Streamable HTTP, the client side: each message is a POST; an answer
//! comes back as one JSON body or as an SSE stream of messages ending with
//! it (resumed with `Last-Event-ID` if the stream breaks first). A legacy
//! session adds `Mcp-Session-Id`, a GET stream for messages not tied to a
//! request, and a `DELETE` at close.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use eventsource_stream::Eventsource;
use futures::StreamExt;
use reqwest::header::{HeaderMap, ACCEPT, CONTENT_TYPE, WWW_AUTHENTICATE};
use serde_json::Value;
use tokio::sync::mpsc;

use super::auth::{Refusal, TokenProvider};
use super::error::ClientError;
use super::options::ClientOptions;
use super::outgoing::{Inbound, Outgoing};

/// How many times a broken SSE answer is resumed before the call fails.
const MAX_RESUMES: u32 = 5;
/// How many times one request is sent again after the server refused its
/// credentials and the provider got new ones (a token, then a DPoP nonce).
const MAX_AUTH_RETRIES: u32 = 3;
/// The wait before resuming when the server named none (`retry:`).
const DEFAULT_RETRY: Duration = Duration::from_millis(1000);

/// One Streamable HTTP endpoint.
pub(crate) struct Http {
    client: reqwest::Client,
    /// The endpoint, parsed once.
    url: reqwest::Url,
    /// The headers of every request: `Accept` and the options' own.
    fixed: reqwest::header::HeaderMap,
    options: ClientOptions,
    /// The legacy session, once `initialize` named one.
    session: Mutex<Option<String>>,
    /// `MCP-Protocol-Version` for every request once the version is known.
    version: Mutex<Option<String>>,
    /// Messages not tied to a request (a legacy session's GET stream).
    unrouted: mpsc::UnboundedSender<Value>,
}

impl Http {
    /// A transport to `url`; messages not tied to a request go to `unrouted`.
    pub(crate) fn new(
        url: &str,
        options: ClientOptions,
        unrouted: mpsc::UnboundedSender<Value>,
    ) -> Result<Self, ClientError> {
        let parsed =
            reqwest::Url::parse(url).map_err(|e| ClientError::transport(format!("{url:?} is not a URL: {e}")))?;
        let mut fixed = reqwest::header::HeaderMap::new();
        fixed.insert(ACCEPT, reqwest::header::HeaderValue::from_static("application/json, text/event-stream"));
        for (k, v) in &options.headers {
            let name = reqwest::header::HeaderName::from_bytes(k.as_bytes());
            let value = reqwest::header::HeaderValue::from_str(v);
            let (Ok(name), Ok(value)) = (name, value) else {
                return Err(ClientError::transport(format!("the header {k}: {v} is not a valid HTTP header")));
            };
            fixed.append(name, value);
        }
        let client = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .build()
            .map_err(|e| ClientError::transport(e.to_string()))?;
        Ok(Http { client, url: parsed, fixed, options, session: Mutex::new(None), version: Mutex::new(None), unrouted })
    }

    /// Sets the version header sent from now on.
    pub(crate) fn set_version(&self, version: &str) {
        *self.version.lock().expect("version lock") = Some(version.to_owned());
    }

    /// The legacy session id, if any.
    pub(crate) fn session(&self) -> Option<String> {
        self.session.lock().expect("session lock").clone()
    }

    fn base_request(&self, method: reqwest::Method) -> reqwest::RequestBuilder {
        let mut req = self.client.request(method, self.url.clone()).headers(self.fixed.clone());
        if let Some(v) = self.version.lock().expect("version lock").as_deref() {
            req = req.header("MCP-Protocol-Version", v);
        }
        if let Some(s) = self.session() {
            req = req.header("Mcp-Session-Id", s);
        }
        req
    }

    /// A request with the provider's authorization headers, if any.
    async fn authorize(
        &self,
        mut req: reqwest::RequestBuilder,
        method: &str,
    ) -> Result<reqwest::RequestBuilder, ClientError> {
        if let Some(p) = &self.options.token {
            for (k, v) in p.authorization(method, self.url.as_str()).await? {
                req = req.header(k, v);
            }
        }
        Ok(req)
    }

    /// POSTs one message. For a request, the answer's messages arrive on
    /// the returned channel, which ends after the response (or when the
    /// stream ends); dropping it closes the stream.
    pub(crate) async fn post(&self, out: &Outgoing, what: &str) -> Result<Inbound, ClientError> {
        let mut retries = 0;
        loop {
            let mut req = self.base_request(reqwest::Method::POST).header(CONTENT_TYPE, "application/json");
            for (k, v) in &out.headers {
                req = req.header(k, v);
            }
            let req = self.authorize(req, "POST").await?.body(out.body.clone());
            let resp = req.send().await.map_err(|e| ClientError::transport(format!("sending {what}: {e}")))?;
            let status = resp.status().as_u16();
            if status == 401 || status == 403 {
                let challenge = header(resp.headers(), WWW_AUTHENTICATE.as_str());
                let dpop_nonce = header(resp.headers(), "dpop-nonce");
                if let (Some(p), true) = (&self.options.token, retries < MAX_AUTH_RETRIES) {
                    if p.refused(Refusal { status, challenge: challenge.clone(), dpop_nonce }).await? {
                        retries += 1;
                        continue;
                    }
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
    async fn answer(&self, resp: reqwest::Response, id: Option<Value>, what: &str) -> Result<Inbound, ClientError> {
        let status = resp.status().as_u16();
        let (tx, rx) = mpsc::unbounded_channel();
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
            let resume = Resume { http: self.clone_for_resume(), id };
            tokio::spawn(pump_sse(resp, tx, resume));
            return Ok(rx);
        }
        let bytes = resp.bytes().await.map_err(|e| ClientError::transport(format!("sending {what}: {e}")))?;
        match serde_json::from_slice::<Value>(&bytes) {
            // A JSON-RPC answer, whatever the status (a 400 carries its error).
            Ok(v) if v.get("jsonrpc").is_some() => {
                let _ = tx.send(v);
                Ok(rx)
            }
            _ => Err(ClientError::transport(format!(
                "sending {what}: HTTP {status} without a JSON-RPC answer ({})",
                String::from_utf8_lossy(&bytes[..bytes.len().min(200)])
            ))),
        }
    }

    fn clone_for_resume(&self) -> ResumeTarget {
        ResumeTarget {
            token: self.options.token.clone(),
            client: self.client.clone(),
            url: self.url.clone(),
            headers: self.fixed.clone(),
            version: self.version.lock().expect("version lock").clone(),
            session: self.session(),
        }
    }

    /// Opens a legacy session's GET stream; its messages go to `unrouted`.
    /// A server without one (405) is fine.
    pub(crate) async fn open_get_stream(&self) -> Result<(), ClientError> {
        let req = self.authorize(self.base_request(reqwest::Method::GET), "GET").await?;
        let resp = req.send().await.map_err(|e| ClientError::transport(format!("opening the GET stream: {e}")))?;
        if resp.status().as_u16() != 200 {
            return Ok(());
        }
        let resume = Resume { http: self.clone_for_resume(), id: None };
        tokio::spawn(pump_sse(resp, self.unrouted.clone(), resume));
        Ok(())
    }

    /// Ends a legacy session (`DELETE`); best effort.
    pub(crate) async fn close(&self) {
        if self.session().is_some() {
            if let Ok(req) = self.authorize(self.base_request(reqwest::Method::DELETE), "DELETE").await {
                let _ = req.timeout(Duration::from_secs(5)).send().await;
            }
            *self.session.lock().expect("session lock") = None;
        }
    }
}

fn header(headers: &HeaderMap, name: &str) -> Option<String> {
    headers.get(name).and_then(|v| v.to_str().ok()).map(str::to_owned)
}

/// What a broken SSE stream is resumed against.
struct ResumeTarget {
    token: Option<Arc<dyn TokenProvider>>,
    client: reqwest::Client,
    url: reqwest::Url,
    headers: HeaderMap,
    version: Option<String>,
    session: Option<String>,
}

struct Resume {
    http: ResumeTarget,
    /// The request whose response ends the stream (`None`: a GET stream).
    id: Option<Value>,
}

/// Feeds an SSE answer's messages to `tx` until the response to `id`
/// arrives, the receiver is dropped, or the stream ends and cannot be
/// resumed.
async fn pump_sse(mut resp: reqwest::Response, tx: mpsc::UnboundedSender<Value>, resume: Resume) {
    let mut last_id: Option<String> = None;
    let mut retry = DEFAULT_RETRY;
    let mut resumes = 0;
    loop {
        let mut events = resp.bytes_stream().eventsource();
        loop {
            let next = tokio::select! {
                _ = tx.closed() => return,
                next = events.next() => next,
            };
            let Some(Ok(event)) = next else { break };
            if !event.id.is_empty() {
                last_id = Some(event.id.clone());
            }
            if let Some(r) = event.retry {
                retry = r;
            }
            if event.data.trim().is_empty() {
                continue;
            }
            let Ok(msg) = serde_json::from_str::<Value>(&event.data) else { continue };
            let done = resume.id.is_some() && msg.get("method").is_none() && msg.get("id") == resume.id.as_ref();
            if tx.send(msg).is_err() || done {
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

/// Resumes a broken SSE stream with a GET naming the last event seen; the
/// new stream, or `None` when the server will not resume it.
async fn reopen(t: &ResumeTarget, event_id: String) -> Option<reqwest::Response> {
    let mut req = t.client.get(t.url.clone()).headers(t.headers.clone());
    req = req.header(ACCEPT, "text/event-stream").header("Last-Event-ID", event_id);
    if let Some(v) = &t.version {
        req = req.header("MCP-Protocol-Version", v);
    }
    if let Some(s) = &t.session {
        req = req.header("Mcp-Session-Id", s);
    }
    if let Some(p) = &t.token {
        match p.authorization("GET", t.url.as_str()).await {
            Ok(headers) => {
                for (k, v) in headers {
                    req = req.header(k, v);
                }
            }
            Err(_) => return None,
        }
    }
    match req.send().await {
        Ok(r) if r.status().as_u16() == 200 => Some(r),
        _ => None,
    }
}
