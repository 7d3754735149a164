//! One connection's state and its request loop: a request goes out with
//! what its era needs, the messages of its answer are handled as they come
//! (progress and logs to their callbacks, a server's requests answered),
//! and an `InputRequiredResult` is answered and retried until the result.

use foldhash::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, Weak};

use mcp_protocol::client::{Answer, Encoded, Marks, ServerInfo, ServerMessage, Session, Spoken};
use mcp_protocol::header_params::HeaderParam;
use mcp_protocol::model::progress::ProgressParams;
use mcp_protocol::params::Params;
use mcp_protocol::{ErrorData, RequestId};
use serde::Deserialize;
use serde_json::value::RawValue;
use tokio::sync::broadcast;

use super::cache::ListCache;
use super::error::ClientError;
use super::input;
use super::options::{ClientOptions, InputHandler, RequestOptions};
use super::outgoing::{Inbound, Outgoing};
use super::started::Started;
use super::transport::Conduit;
use super::Notification;
use mcp_protocol::model::logging::{LogMessage, LOG_MESSAGE_METHOD};
use mcp_protocol::model::progress::PROGRESS_METHOD;
use mcp_protocol::request::method;

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
    /// Who the client is, as its requests say it.
    pub(crate) session: Session,
    /// The requests in flight with their own input handler, by id.
    pub(crate) asking: Mutex<Vec<(i64, InputHandler)>>,
    /// Held by such a request over a legacy stdio session.
    input_lane: tokio::sync::Mutex<()>,
}

impl Inner {
    pub(crate) fn new(options: ClientOptions, transport: Conduit) -> Self {
        Inner {
            session: Session::new(options.info.clone(), options.capabilities(), options.log_level),
            events: broadcast::channel(options.max_queued_messages.max(1)).0,
            options,
            transport,
            era: Mutex::new(None),
            server: Mutex::new(ServerInfo::default()),
            next_id: AtomicI64::new(1),
            tool_headers: Mutex::new(HashMap::default()),
            lists: ListCache::default(),
            asking: Mutex::new(Vec::new()),
            input_lane: tokio::sync::Mutex::new(()),
        }
    }

    pub(crate) fn era(&self) -> Option<Spoken> {
        *self.era.lock().expect("era lock")
    }

    /// A fresh request id.
    pub(crate) fn next_id(&self) -> i64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    /// A request in the connection's era, its input rounds answered: its
    /// result, or the task the server made it.
    pub(crate) async fn request(
        self: &Arc<Self>,
        method: &str,
        params: impl Into<Params>,
        ropts: &RequestOptions,
    ) -> Result<Started<Box<RawValue>>, ClientError> {
        let era = self.era();
        let limit = ropts.timeout.unwrap_or(self.options.timeout);
        let work = self.with_input_rounds(era, method, params.into(), ropts);
        tokio::time::timeout(limit, work).await.map_err(|_| ClientError::Timeout(limit))?
    }

    /// Answers `InputRequiredResult`s and retries with `inputResponses` and
    /// `requestState`, up to the configured number of rounds.
    pub(crate) async fn with_input_rounds(
        self: &Arc<Self>,
        era: Option<Spoken>,
        method: &str,
        mut params: Params,
        ropts: &RequestOptions,
    ) -> Result<Started<Box<RawValue>>, ClientError> {
        for _ in 0..=self.options.max_input_rounds {
            let result = self.round(era, method, &mut params, ropts).await?;
            let answer = Answer::of_raw(result)
                .map_err(|e| ClientError::transport(format!("the answer to {method} is malformed: {e}")))?;
            let (requests, state) = match answer {
                Answer::InputRequired { requests, state } => (requests, state),
                Answer::Task(task) => return Ok(Started::Task(task)),
                Answer::Complete(result) => return Ok(Started::Done(result)),
            };
            let responses = input::answer_all(&self.options, ropts.input.as_ref(), &requests).await?;
            Answer::retry(params.members_mut(), responses, state);
        }
        Err(ClientError::Input(format!("{method} still needed input after {} rounds", self.options.max_input_rounds)))
    }

    /// One request and its answer.
    pub(crate) async fn round(
        self: &Arc<Self>,
        era: Option<Spoken>,
        method: &str,
        params: &mut Params,
        ropts: &RequestOptions,
    ) -> Result<Box<RawValue>, ClientError> {
        let id = self.next_id();
        let marks = Marks { progress: ropts.progress.is_some(), capabilities: ropts.capabilities.as_ref() };
        // A legacy stdio server's requests name no request (unless it says
        // they do): those that answer input themselves go one at a time,
        // so that one is whose.
        let _lane = match (&self.transport, era, &ropts.input) {
            (Conduit::Stdio(_), Some(Spoken::Legacy(_)), Some(_))
                if !self.server.lock().expect("server lock").names_related_requests() =>
            {
                Some(self.input_lane.lock().await)
            }
            _ => None,
        };
        let _asking = ropts.input.as_ref().map(|h| Asking::new(self, id, h.clone()));
        // Armed before the request goes out: a future dropped while the
        // server holds the request without an answer's head gives it up too
        // (a cancellation of a request the server never got is ignored).
        let stateless = matches!(era, Some(Spoken::Stateless(_)));
        let mut guard = Cancel::new(self, id, stateless);
        let inbound = match self.open(era, id, method, params, marks).await {
            Ok(inbound) => inbound,
            Err(e) => {
                // Refused or not sent: nothing runs to give up.
                guard.armed = false;
                return Err(e);
            }
        };
        let outcome = self.answer_of(inbound, id, method, ropts).await;
        guard.armed = false;
        outcome
    }

    /// Sends a request with what its era needs and what it says of itself
    /// (`marks`), stamped as it is encoded; the messages of its answer come
    /// on the returned channel.
    pub(crate) async fn open(
        &self,
        era: Option<Spoken>,
        id: i64,
        method: &str,
        params: &Params,
        marks: Marks<'_>,
    ) -> Result<Inbound, ClientError> {
        let tool_params = match (era, method) {
            (Some(Spoken::Stateless(_)), method::TOOLS_CALL) => {
                let tool = params.members().get("name").and_then(|n| n.as_str()).unwrap_or_default();
                self.tool_headers.lock().expect("headers lock").get(tool).cloned()
            }
            _ => None,
        };
        let tool_params = tool_params.as_deref().unwrap_or_default();
        let encoded = self.session.request(era, id, method, params, marks, tool_params);
        self.transport.send(&outgoing(encoded, Some(RequestId::number(id))), method).await
    }

    /// Reads an answer's messages until the response.
    async fn answer_of(
        self: &Arc<Self>,
        mut inbound: Inbound,
        id: i64,
        method: &str,
        ropts: &RequestOptions,
    ) -> Result<Box<RawValue>, ClientError> {
        let id = RequestId::number(id);
        while let Some(msg) = inbound.recv().await {
            match msg {
                ServerMessage::Response { id: Some(answered), outcome } if answered == id => {
                    return outcome.map_err(ClientError::from);
                }
                ServerMessage::Response { .. } => {}
                other => self.incoming(other, ropts),
            }
        }
        Err(inbound.stopped(|| ClientError::transport(format!("the answer to {method} ended before its response"))))
    }

    /// A message from the server inside a request's answer, or of none.
    pub(crate) fn incoming(self: &Arc<Self>, msg: ServerMessage, ropts: &RequestOptions) {
        let (method, params) = match msg {
            ServerMessage::Request { id, method, params } => {
                let (inner, own) = (self.clone(), ropts.input.clone());
                tokio::spawn(async move {
                    let outcome = input::respond(&inner.options, own.as_ref(), &method, params).await;
                    inner.send_message(Session::response(inner.era(), &id, outcome)).await;
                });
                return;
            }
            ServerMessage::Notification { method, params } => (method, params),
            _ => return,
        };
        self.lists.saw(&method);
        match method.as_str() {
            PROGRESS_METHOD => {
                if let (Some(cb), Ok(p)) = (&ropts.progress, ProgressParams::deserialize(&params)) {
                    cb(p);
                }
            }
            LOG_MESSAGE_METHOD => {
                let cb = ropts.log.as_ref().or(self.options.on_log.as_ref());
                if let (Some(cb), Ok(m)) = (cb, LogMessage::deserialize(&params)) {
                    cb(m);
                }
            }
            _ => {}
        }
        let _ = self.events.send(Notification { method, params });
    }

    /// Sends a notification or a response (no answer expected).
    pub(crate) async fn send_message(&self, message: Encoded) {
        let _ = self.transport.send(&outgoing(message, None), "a message").await;
    }
}

/// An encoded message as the transports take it.
fn outgoing(encoded: Encoded, id: Option<RequestId>) -> Outgoing {
    Outgoing { body: encoded.body.into(), headers: encoded.headers, id }
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
            s.forget(&RequestId::number(self.id));
        }
        if !self.armed || !self.notify {
            return;
        }
        let id = self.id;
        spawn_detached(async move {
            let note = Session::cancelled(inner.era(), id, "the client gave the request up");
            inner.send_message(note).await;
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
        let asking: Vec<InputHandler> = match &msg {
            ServerMessage::Request { .. } => {
                inner.asking.lock().expect("asking lock").iter().map(|(_, h)| h.clone()).collect()
            }
            ServerMessage::Notification { .. } => Vec::new(),
            _ => continue,
        };
        match asking.as_slice() {
            [] => inner.incoming(msg, &RequestOptions::default()),
            [one] => inner.incoming(msg, &RequestOptions { input: Some(one.clone()), ..Default::default() }),
            several => {
                let ServerMessage::Request { id, .. } = &msg else { continue };
                let why = format!(
                    "{} requests that answer input themselves are in flight; this request names none of them",
                    several.len()
                );
                inner.send_message(Session::response(inner.era(), id, Err(ErrorData::internal(why)))).await;
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
