//! One connection's state and its request loop: a request goes out with
//! what its era needs, the messages of its answer are handled as they come
//! (progress and logs to their callbacks, a server's requests answered),
//! and an `InputRequiredResult` is answered and retried until the result.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, Weak};

use mcp_protocol::header_params::HeaderParam;
use mcp_protocol::meta::{CLIENT_CAPABILITIES_KEY, PROGRESS_TOKEN_KEY};
use mcp_protocol::model::progress::ProgressParams;
use serde_json::{json, Map, Value};
use tokio::sync::broadcast;

use super::cache::ListCache;
use super::error::ClientError;
use super::input;
use super::options::{ClientOptions, InputHandler, RequestOptions};
use super::outgoing::{Inbound, Outgoing};
use super::transport::Conduit;
use super::wire::client_meta;
use super::{Notification, ServerInfo};
use mcp_protocol::model::logging::LOG_MESSAGE_METHOD;
use mcp_protocol::model::progress::PROGRESS_METHOD;
use mcp_protocol::outgoing::{stamp_meta, standard_headers};
use mcp_protocol::request::method;
use mcp_protocol::ProtocolVersion;

/// The protocol version a connection speaks, and so its era.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Spoken {
    /// Every request carries the version and the client in `_meta`.
    Stateless(ProtocolVersion),
    /// After an `initialize` handshake, in a session.
    Legacy(ProtocolVersion),
}

/// A connection, shared by every handle and in-flight call.
pub(crate) struct Inner {
    pub(crate) options: ClientOptions,
    pub(crate) transport: Conduit,
    pub(crate) era: Mutex<Option<Spoken>>,
    pub(crate) server: Mutex<ServerInfo>,
    next_id: AtomicI64,
    /// The `x-mcp-header` parameters of each tool listed so far.
    pub(crate) tool_headers: Mutex<HashMap<String, Arc<[HeaderParam]>>>,
    /// Notifications of no request (a legacy session's stream, stdio).
    pub(crate) events: broadcast::Sender<Notification>,
    /// Lists kept for their `ttlMs` (when the options ask for it).
    pub(crate) lists: ListCache,
    /// The client's own `_meta` entries, built once.
    meta: Map<String, Value>,
    /// The requests in flight with their own input handler, by id.
    pub(crate) asking: Mutex<Vec<(i64, InputHandler)>>,
    /// Held by such a request over a legacy stdio session.
    input_lane: tokio::sync::Mutex<()>,
}

impl Inner {
    pub(crate) fn new(options: ClientOptions, transport: Conduit) -> Self {
        Inner {
            meta: client_meta(&options),
            options,
            transport,
            era: Mutex::new(None),
            server: Mutex::new(ServerInfo::default()),
            next_id: AtomicI64::new(1),
            tool_headers: Mutex::new(HashMap::new()),
            events: broadcast::channel(1024).0,
            lists: ListCache::default(),
            asking: Mutex::new(Vec::new()),
            input_lane: tokio::sync::Mutex::new(()),
        }
    }

    pub(crate) fn era(&self) -> Option<Spoken> {
        *self.era.lock().expect("era lock")
    }

    /// Whether the server names, in its requests, the request they are
    /// part of (declared as an experimental capability).
    fn names_related(&self) -> bool {
        let server = self.server.lock().expect("server lock");
        server.capabilities.get("experimental").and_then(|e| e.get(mcp_protocol::meta::RELATED_REQUEST_KEY)).is_some()
    }

    /// A fresh request id.
    pub(crate) fn next_id(&self) -> i64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    /// A request in the connection's era, its input rounds answered.
    pub(crate) async fn request(
        self: &Arc<Self>,
        method: &str,
        params: Map<String, Value>,
        ropts: &RequestOptions,
    ) -> Result<Value, ClientError> {
        let era = self.era();
        let limit = ropts.timeout.unwrap_or(self.options.timeout);
        let work = self.with_input_rounds(era.as_ref(), method, params, ropts);
        tokio::time::timeout(limit, work).await.map_err(|_| ClientError::Timeout(limit))?
    }

    /// Answers `InputRequiredResult`s and retries with `inputResponses` and
    /// `requestState`, up to the configured number of rounds.
    pub(crate) async fn with_input_rounds(
        self: &Arc<Self>,
        era: Option<&Spoken>,
        method: &str,
        mut params: Map<String, Value>,
        ropts: &RequestOptions,
    ) -> Result<Value, ClientError> {
        for _ in 0..=self.options.max_input_rounds {
            let result = self.round(era, method, &mut params, ropts).await?;
            if result.get("resultType").and_then(Value::as_str) != Some("input_required") {
                return Ok(result);
            }
            let requests = result.get("inputRequests").and_then(Value::as_object).cloned().unwrap_or_default();
            params.insert(
                "inputResponses".into(),
                input::answer_all(&self.options, ropts.input.as_ref(), &requests).await?,
            );
            match result.get("requestState") {
                Some(state) => params.insert("requestState".into(), state.clone()),
                None => params.remove("requestState"),
            };
        }
        Err(ClientError::Input(format!("{method} still needed input after {} rounds", self.options.max_input_rounds)))
    }

    /// One request and its answer.
    pub(crate) async fn round(
        self: &Arc<Self>,
        era: Option<&Spoken>,
        method: &str,
        params: &mut Map<String, Value>,
        ropts: &RequestOptions,
    ) -> Result<Value, ClientError> {
        let id = self.next_id();
        if ropts.progress.is_some() || ropts.capabilities.is_some() {
            let meta = params.entry("_meta").or_insert_with(|| json!({}));
            if let Some(m) = meta.as_object_mut() {
                if ropts.progress.is_some() {
                    m.insert(PROGRESS_TOKEN_KEY.into(), json!(id));
                }
                if let Some(caps) = &ropts.capabilities {
                    m.insert(CLIENT_CAPABILITIES_KEY.into(), caps.clone());
                }
            }
        }
        // A legacy stdio server's requests name no request (unless it says
        // they do): those that answer input themselves go one at a time,
        // so that one is whose.
        let _lane = match (&self.transport, era, &ropts.input) {
            (Conduit::Stdio(_), Some(Spoken::Legacy(_)), Some(_)) if !self.names_related() => {
                Some(self.input_lane.lock().await)
            }
            _ => None,
        };
        let _asking = ropts.input.as_ref().map(|h| Asking::new(self, id, h.clone()));
        let inbound = self.open(era, id, method, params).await?;
        let stateless = matches!(era, Some(Spoken::Stateless(_)));
        let mut guard = Cancel::new(self, id, stateless);
        let outcome = self.answer_of(inbound, id, method, ropts).await;
        guard.armed = false;
        outcome
    }

    /// Sends a request with what its era needs (stamped into `params`, so
    /// that a retry sends them again as they are); the messages of its
    /// answer come on the returned channel.
    pub(crate) async fn open(
        &self,
        era: Option<&Spoken>,
        id: i64,
        method: &str,
        params: &mut Map<String, Value>,
    ) -> Result<Inbound, ClientError> {
        let mut headers = Vec::new();
        if let Some(Spoken::Stateless(v)) = era {
            stamp_meta(params, v.as_str(), &self.meta);
            let tool_params = match method {
                method::TOOLS_CALL => {
                    let tool = params.get("name").and_then(Value::as_str).unwrap_or_default();
                    self.tool_headers.lock().expect("headers lock").get(tool).cloned()
                }
                _ => None,
            };
            let tool_params = tool_params.as_deref().unwrap_or_default();
            headers = standard_headers(method, params, tool_params);
            headers.push(("MCP-Protocol-Version".into(), v.as_str().to_owned()));
        }
        let body = RequestBody { jsonrpc: "2.0", id, method, params };
        let out = Outgoing { body: serde_json::to_vec(&body).expect("JSON").into(), headers, id: Some(json!(id)) };
        let inbound = self.transport.send(&out, method).await?;
        Ok(inbound)
    }

    /// Reads an answer's messages until the response.
    async fn answer_of(
        self: &Arc<Self>,
        mut inbound: Inbound,
        id: i64,
        method: &str,
        ropts: &RequestOptions,
    ) -> Result<Value, ClientError> {
        let id = json!(id);
        while let Some(mut msg) = inbound.recv().await {
            if msg.get("method").is_some() {
                self.incoming(msg, ropts);
                continue;
            }
            if msg.get("id") != Some(&id) {
                continue;
            }
            if let Some(e) = msg.get("error") {
                return Err(ClientError::from_error_object(e));
            }
            return Ok(msg.get_mut("result").map(Value::take).unwrap_or(Value::Null));
        }
        Err(inbound.stopped(|| ClientError::transport(format!("the answer to {method} ended before its response"))))
    }

    /// A message from the server inside a request's answer, or of none.
    pub(crate) fn incoming(self: &Arc<Self>, msg: Value, ropts: &RequestOptions) {
        let method = msg.get("method").and_then(Value::as_str).unwrap_or_default().to_owned();
        if msg.get("id").is_some() {
            let (inner, own) = (self.clone(), ropts.input.clone());
            tokio::spawn(async move {
                let response = input::respond(&inner.options, own.as_ref(), &msg).await;
                inner.send_message(&response).await;
            });
            return;
        }
        let params = msg.get("params").cloned().unwrap_or(Value::Null);
        self.lists.saw(&method);
        match method.as_str() {
            PROGRESS_METHOD => {
                if let (Some(cb), Ok(p)) = (&ropts.progress, serde_json::from_value::<ProgressParams>(params.clone())) {
                    cb(p);
                }
            }
            LOG_MESSAGE_METHOD => {
                if let Some(cb) = ropts.log.as_ref().or(self.options.on_log.as_ref()) {
                    cb(params.clone());
                }
            }
            _ => {}
        }
        let _ = self.events.send(Notification { method, params });
    }

    /// Sends a notification or a response (no answer expected).
    pub(crate) async fn send_message(&self, message: &Value) {
        let mut headers = Vec::new();
        if let Some(Spoken::Stateless(v)) = self.era() {
            headers.push(("MCP-Protocol-Version".into(), v.as_str().to_owned()));
            if let Some(m) = message.get("method").and_then(Value::as_str) {
                headers.push(("Mcp-Method".into(), m.to_owned()));
            }
        }
        let out = Outgoing { body: serde_json::to_vec(message).expect("JSON").into(), headers, id: None };
        let _ = self.transport.send(&out, "a message").await;
    }
}

/// A request as it goes on the wire, its params borrowed.
#[derive(serde::Serialize)]
struct RequestBody<'a> {
    jsonrpc: &'static str,
    id: i64,
    method: &'a str,
    params: &'a Map<String, Value>,
}

/// Gives a request up when its future is dropped before the answer:
/// `notifications/cancelled` where closing the stream does not say it.
pub(crate) struct Cancel {
    inner: Weak<Inner>,
    id: i64,
    pub(crate) armed: bool,
    notify: bool,
}

impl Cancel {
    /// Armed for request `id` of `inner` in this era.
    pub(crate) fn new(inner: &Arc<Inner>, id: i64, stateless: bool) -> Self {
        Cancel { inner: Arc::downgrade(inner), id, armed: true, notify: !inner.transport.closing_cancels(stateless) }
    }
}

impl Drop for Cancel {
    fn drop(&mut self) {
        let Some(inner) = self.inner.upgrade() else { return };
        if let super::transport::Conduit::Stdio(s) = &inner.transport {
            s.forget(&json!(self.id));
        }
        if !self.armed || !self.notify {
            return;
        }
        let id = self.id;
        spawn_detached(async move {
            let note = json!({"jsonrpc": "2.0", "method": method::CANCELLED,
                "params": {"requestId": id, "reason": "the client gave the request up"}});
            inner.send_message(&note).await;
        });
    }
}

/// Runs `work` on the current runtime, if there is one: what a guard
/// dropped outside any runtime would tell the server, nobody is left to hear.
pub(crate) fn spawn_detached(work: impl std::future::Future<Output = ()> + Send + 'static) {
    if let Ok(handle) = tokio::runtime::Handle::try_current() {
        handle.spawn(work);
    }
}

/// Serves the messages of no request: answers a server's requests, hands
/// log messages to the connection's callback and the rest to listeners.
pub(crate) async fn serve_unrouted(inner: Weak<Inner>, mut rx: Inbound) {
    while let Some(msg) = rx.recv().await {
        let Some(inner) = inner.upgrade() else { break };
        if msg.get("method").is_none() {
            continue;
        }
        let asking: Vec<InputHandler> = match msg.get("id") {
            Some(_) => inner.asking.lock().expect("asking lock").iter().map(|(_, h)| h.clone()).collect(),
            None => Vec::new(),
        };
        match asking.as_slice() {
            [] => inner.incoming(msg, &RequestOptions::default()),
            [one] => inner.incoming(msg, &RequestOptions { input: Some(one.clone()), ..Default::default() }),
            several => {
                let refusal = json!({"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32603, "message": format!(
                    "{} requests that answer input themselves are in flight; this request names none of them",
                    several.len())}});
                inner.send_message(&refusal).await;
            }
        }
    }
}

/// A request's own input handler, registered while the request is in
/// flight (for server requests that name no request).
struct Asking {
    inner: Weak<Inner>,
    id: i64,
}

impl Asking {
    fn new(inner: &Arc<Inner>, id: i64, handler: InputHandler) -> Self {
        inner.asking.lock().expect("asking lock").push((id, handler));
        Asking { inner: Arc::downgrade(inner), id }
    }
}

impl Drop for Asking {
    fn drop(&mut self) {
        if let Some(inner) = self.inner.upgrade() {
            inner.asking.lock().expect("asking lock").retain(|(id, _)| *id != self.id);
        }
    }
}
