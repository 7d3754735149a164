//! [`RequestContext`]: what a handler sees of its request besides its
//! arguments — the client's declared capabilities, emitters for progress and
//! log notifications on this request's own response stream, and cancellation.

use std::sync::{Arc, Mutex};

use mcp_protocol::jsonrpc::encode_notification;
use mcp_protocol::model::capabilities::ClientCapabilities;
use mcp_protocol::model::logging::{LogMessage, LoggingLevel, LOG_MESSAGE_METHOD};
use mcp_protocol::model::mrtr::{CreateMessageResult, ElicitResult, InputRequest, ListRootsResult};
use mcp_protocol::model::progress::{ProgressParams, PROGRESS_METHOD};
use mcp_protocol::{ProtocolError, ProtocolVersion, RequestId, RequestMeta};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use crate::catalog::Catalog;
use crate::era::Era;
use crate::error::HandlerError;
use crate::facts::RequestFacts;
use crate::identity::Identity;
use crate::outbound::{Outbound, OutboundTx};
use crate::request_headers::RequestHeaders;
use crate::tasks::TaskLink;
use mcp_protocol::ErrorData;

/// The per-request context handed to every handler. Cheap to clone.
#[derive(Clone)]
pub struct RequestContext {
    inner: Arc<Inner>,
}

struct Inner {
    id: RequestId,
    meta: RequestMeta,
    cancel: CancellationToken,
    outbound: OutboundTx,
    /// The server's logger; the request's child logger is built from it on first use.
    log: slog::Logger,
    child_log: std::sync::OnceLock<slog::Logger>,
    catalog: Arc<Catalog>,
    round: Mutex<InputRound>,
    /// The era: a legacy request asks the client for input through its session.
    era: Era,
    /// Headers and extensions from the transport.
    facts: RequestFacts,
    /// Set when the call may become (or is) a task.
    task: Option<Arc<TaskLink>>,
}

/// One round of a multi round-trip request, as the handler sees it.
#[derive(Debug, Default)]
pub(crate) struct InputRound {
    /// Whether this method may ask for input at all.
    pub(crate) enabled: bool,
    /// Which round this is (1: no state came in).
    pub(crate) number: u32,
    /// Responses: verified ones from earlier rounds, then this request's.
    pub(crate) responses: Map<String, Value>,
    /// Keys the handler asked for and found answered (carried forward).
    pub(crate) answered: Vec<String>,
    /// Requests the handler made that are not answered yet, in order.
    pub(crate) pending: Vec<(String, InputRequest)>,
    /// Handler state that came in with the request.
    pub(crate) state_in: Option<Value>,
    /// Handler state to send out with the next round.
    pub(crate) state_out: Option<Value>,
}

impl std::fmt::Debug for RequestContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RequestContext").field("id", &self.inner.id).field("meta", &self.inner.meta).finish()
    }
}

/// What a request context is made of (the request actor has them all).
pub(crate) struct ContextParts {
    pub(crate) id: RequestId,
    pub(crate) meta: RequestMeta,
    pub(crate) cancel: CancellationToken,
    pub(crate) outbound: OutboundTx,
    pub(crate) log: slog::Logger,
    pub(crate) catalog: Arc<Catalog>,
    pub(crate) era: Era,
    pub(crate) facts: RequestFacts,
}

impl RequestContext {
    /// Builds a context (the request actor does this).
    pub(crate) fn new(p: ContextParts) -> Self {
        let inner = Inner {
            id: p.id,
            meta: p.meta,
            cancel: p.cancel,
            outbound: p.outbound,
            log: p.log,
            child_log: std::sync::OnceLock::new(),
            catalog: p.catalog,
            round: Mutex::new(InputRound::default()),
            era: p.era,
            facts: p.facts,
            task: None,
        };
        RequestContext { inner: Arc::new(inner) }
    }

    /// A context for a handler run that may outlive this request (a task):
    /// the same request, with its own cancellation, outbound channel, task
    /// link and (for a run resumed by another request) that request's facts
    /// and the task's own `_meta`.
    pub(crate) fn detached(
        &self,
        cancel: CancellationToken,
        outbound: OutboundTx,
        task: Arc<TaskLink>,
        facts: Option<RequestFacts>,
        meta: Option<RequestMeta>,
    ) -> Self {
        let i = &self.inner;
        let inner = Inner {
            id: i.id.clone(),
            meta: meta.unwrap_or_else(|| i.meta.clone()),
            cancel,
            outbound,
            log: i.log.clone(),
            child_log: std::sync::OnceLock::new(),
            catalog: i.catalog.clone(),
            round: Mutex::new(InputRound::default()),
            era: i.era.clone(),
            facts: facts.unwrap_or_else(|| i.facts.clone()),
            task: Some(task),
        };
        RequestContext { inner: Arc::new(inner) }
    }

    /// The task link of a task-eligible call.
    pub(crate) fn task_link(&self) -> Option<&Arc<TaskLink>> {
        self.inner.task.as_ref()
    }

    /// Where the request's notifications and response go.
    pub(crate) fn outbound(&self) -> &OutboundTx {
        &self.inner.outbound
    }

    /// The request's era: stateless, or inside a legacy (`initialize`)
    /// session, where input is obtained by server-to-client requests instead
    /// of an `InputRequiredResult`.
    pub fn era(&self) -> &Era {
        &self.inner.era
    }

    /// Legacy era: sends `request` to the client on this request's response
    /// stream and waits for its answer (bounded by `legacy.input_timeout_ms`
    /// and by cancellation).
    pub(crate) async fn request_client(&self, request: &InputRequest) -> Result<Value, HandlerError> {
        let session = self.inner.era.session().ok_or_else(|| HandlerError::internal("not a legacy session"))?;
        let wire = serde_json::to_value(request).map_err(|e| HandlerError::internal(e.to_string()))?;
        let method = request.method();
        let params = wire.get("params").cloned().unwrap_or(Value::Object(Map::new()));
        let (id, answer) = session.ask().await?;
        if !self.emit(mcp_protocol::jsonrpc::encode_request(&id, method, &params)).await {
            session.forget(id);
            return Err(HandlerError::internal("the request was cancelled"));
        }
        let timeout = session.input_timeout();
        let outcome = tokio::select! {
            _ = self.inner.cancel.cancelled() => None,
            a = tokio::time::timeout(timeout, answer) => Some(a),
        };
        session.forget(id);
        match outcome {
            None => Err(HandlerError::internal("the request was cancelled")),
            Some(Err(_)) => Err(HandlerError::internal(format!(
                "the client did not answer {method} within {} ms",
                timeout.as_millis()
            ))),
            Some(Ok(Err(_))) => Err(HandlerError::internal("the session ended before the client answered")),
            Some(Ok(Ok(Ok(result)))) => Ok(result),
            Some(Ok(Ok(Err(error)))) => Err(HandlerError::Rpc(
                serde_json::from_value(error)
                    .unwrap_or_else(|_| ErrorData::internal(format!("the client refused {method}"))),
            )),
        }
    }

    fn round(&self) -> std::sync::MutexGuard<'_, InputRound> {
        self.inner.round.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Opens the input round (the service does this once `requestState` verified).
    pub(crate) fn begin_round(&self, number: u32, responses: Map<String, Value>, state_in: Option<Value>) {
        *self.round() = InputRound { enabled: true, number, responses, state_in, ..InputRound::default() };
    }

    /// The answers and handler state of the round so far (a task records
    /// them, so that a resumed run has the answers given before the task).
    pub(crate) fn round_so_far(&self) -> (Map<String, Value>, Option<Value>) {
        let round = self.round();
        (round.responses.clone(), round.state_out.clone().or_else(|| round.state_in.clone()))
    }

    /// Takes the round (the service does this to build an `InputRequiredResult`).
    pub(crate) fn take_round(&self) -> InputRound {
        std::mem::take(&mut *self.round())
    }

    /// Asks the client for input under `key` (unique within the request).
    ///
    /// - `Ok(Some(answer))`: the client answered (in this retry or an earlier
    ///   round of the same flow); `T` is the expected result type
    ///   ([`ElicitResult`], [`CreateMessageResult`], [`ListRootsResult`]);
    ///   an answer of the wrong shape is an invalid-params error.
    /// - `Ok(None)`: not answered yet; the request is recorded, and the
    ///   handler should return [`RequestContext::input_required`] once it has
    ///   asked for everything it needs now (several requests go out together).
    /// - `Err`: the client did not declare the capability the request needs
    ///   (MissingRequiredClientCapability), or this method cannot ask for input.
    ///
    /// Handlers are run again on every retry, so what they do before their
    /// last question must be repeatable; [`RequestContext::set_handler_state`]
    /// carries their own state between rounds.
    pub fn ask<T: DeserializeOwned>(&self, key: &str, request: InputRequest) -> Result<Option<T>, HandlerError> {
        self.require_capabilities(&request.required_capabilities())?;
        let mut round = self.round();
        if !round.enabled {
            return Err(HandlerError::InputRequired);
        }
        match round.responses.get(key).cloned() {
            Some(answer) => {
                let parsed = serde_json::from_value::<T>(answer).map_err(|e| {
                    HandlerError::invalid_params(format!(
                        "inputResponses.{key} is not a valid {} result: {e}",
                        request.method()
                    ))
                })?;
                if !round.answered.iter().any(|k| k == key) {
                    round.answered.push(key.to_owned());
                }
                Ok(Some(parsed))
            }
            None => {
                if !round.pending.iter().any(|(k, _)| k == key) {
                    round.pending.push((key.to_owned(), request));
                }
                Ok(None)
            }
        }
    }

    /// Asks for one input and stops the handler (with `?`) until it is answered.
    pub fn input<T: DeserializeOwned>(&self, key: &str, request: InputRequest) -> Result<T, HandlerError> {
        self.ask(key, request)?.ok_or(HandlerError::InputRequired)
    }

    /// `elicitation/create` with a form: `message` and a flat object schema.
    pub fn elicit(&self, key: &str, message: &str, requested_schema: Value) -> Result<ElicitResult, HandlerError> {
        self.input(key, InputRequest::elicit_form(message, requested_schema))
    }

    /// `sampling/createMessage` with one user text message.
    pub fn sample(&self, key: &str, prompt: &str, max_tokens: u32) -> Result<CreateMessageResult, HandlerError> {
        self.input(key, InputRequest::sample_text(prompt, max_tokens))
    }

    /// `roots/list`.
    pub fn list_roots(&self, key: &str) -> Result<ListRootsResult, HandlerError> {
        self.input(key, InputRequest::list_roots())
    }

    /// The error that sends every pending input request to the client.
    pub fn input_required(&self) -> HandlerError {
        HandlerError::InputRequired
    }

    /// Whether the client declared `elicitation` for this request.
    pub fn can_elicit(&self) -> bool {
        self.client_capabilities().elicitation.is_some()
    }

    /// Whether the client declared `sampling` for this request.
    pub fn can_sample(&self) -> bool {
        self.client_capabilities().sampling.is_some()
    }

    /// Whether the client declared `roots` for this request.
    pub fn can_list_roots(&self) -> bool {
        self.client_capabilities().roots.is_some()
    }

    /// Which round of a multi round-trip flow this is (1 on the first try).
    pub fn input_round(&self) -> u32 {
        self.round().number.max(1)
    }

    /// The handler state saved by [`RequestContext::set_handler_state`] in
    /// the previous round (verified, so it is what this server wrote).
    pub fn handler_state<T: DeserializeOwned>(&self) -> Option<T> {
        let round = self.round();
        round.state_out.clone().or_else(|| round.state_in.clone()).and_then(|v| serde_json::from_value(v).ok())
    }

    /// Saves handler state into the next round's `requestState`.
    pub fn set_handler_state<T: Serialize>(&self, state: &T) -> Result<(), HandlerError> {
        let v = serde_json::to_value(state).map_err(|e| HandlerError::internal(format!("handler state: {e}")))?;
        self.round().state_out = Some(v);
        Ok(())
    }

    /// The catalog this request is served from: handlers may change it
    /// (subscribers are told) or publish resource updates through it.
    pub fn catalog(&self) -> &Arc<Catalog> {
        &self.inner.catalog
    }

    /// The shared value of type `S` (set with the builder's `state`, or
    /// [`Catalog::set_state`]); an internal error when none was set.
    pub fn state<S: Send + Sync + 'static>(&self) -> Result<Arc<S>, HandlerError> {
        self.inner.catalog.state::<S>().ok_or_else(|| {
            HandlerError::internal(format!("no shared state of type {} was set", std::any::type_name::<S>()))
        })
    }

    /// The request's HTTP headers (`None` over stdio).
    pub fn headers(&self) -> Option<&RequestHeaders> {
        self.inner.facts.headers.as_ref()
    }

    /// The value of type `T` a middleware attached to this request.
    pub fn extension<T: Send + Sync + 'static>(&self) -> Option<&T> {
        self.inner.facts.extensions.get::<T>()
    }

    /// Who is calling — subject, client id, scopes and the validated
    /// claims — when authorization is on (or a middleware attached an
    /// [`Identity`]); `None` otherwise.
    pub fn auth(&self) -> Option<&Identity> {
        self.inner.facts.identity()
    }

    /// The same as [`auth`](Self::auth).
    pub fn identity(&self) -> Option<&Identity> {
        self.auth()
    }

    /// The request's W3C trace context: from its `_meta` (`traceparent`,
    /// `tracestate`, `baggage`), else from its HTTP headers; `None` when
    /// neither carried a well-formed one.
    pub fn trace_context(&self) -> Option<&mcp_protocol::trace::TraceContext> {
        self.inner.meta.trace.as_ref().or(self.inner.facts.trace.as_ref())
    }

    /// The JSON-RPC id of the request.
    pub fn request_id(&self) -> &RequestId {
        &self.inner.id
    }

    /// The validated `_meta` of the request.
    pub fn meta(&self) -> &RequestMeta {
        &self.inner.meta
    }

    /// The protocol version of the request.
    pub fn protocol_version(&self) -> ProtocolVersion {
        self.inner.meta.version
    }

    /// What the client declared it can do, for this request only.
    pub fn client_capabilities(&self) -> &ClientCapabilities {
        &self.inner.meta.client_capabilities
    }

    /// Fails with MissingRequiredClientCapability (-32021; draft -32003) unless
    /// the client declared every capability in `required`.
    pub fn require_capabilities(&self, required: &ClientCapabilities) -> Result<(), HandlerError> {
        match self.client_capabilities().missing(required) {
            None => Ok(()),
            Some(missing) => {
                let names: Vec<String> = serde_json::to_value(&missing)
                    .ok()
                    .and_then(|v| v.as_object().map(|m| m.keys().cloned().collect()))
                    .unwrap_or_default();
                Err(ProtocolError::MissingCapability {
                    required: Box::new(missing),
                    message: format!("Server requires the {} capability for this request", names.join(", ")),
                }
                .into())
            }
        }
    }

    /// The request's cancellation token: it fires when the client cancels
    /// (closes the HTTP stream, or sends `notifications/cancelled` on stdio),
    /// on timeout and at shutdown. Handlers that do blocking or long work
    /// should watch it; async handlers are also dropped at cancellation.
    pub fn cancellation(&self) -> &CancellationToken {
        &self.inner.cancel
    }

    /// Whether the request has been cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.inner.cancel.is_cancelled()
    }

    /// Waits `duration`, or less if the request is cancelled meanwhile
    /// (the client went away, `notifications/cancelled`, the timeout, the
    /// server stopping): then an error, so `?` ends the handler.
    pub async fn sleep(&self, duration: std::time::Duration) -> Result<(), HandlerError> {
        tokio::select! {
            _ = self.inner.cancel.cancelled() => Err(HandlerError::internal("the request was cancelled")),
            _ = tokio::time::sleep(duration) => Ok(()),
        }
    }

    /// The request's logger (carries `request`).
    pub fn logger(&self) -> &slog::Logger {
        self.inner.child_log.get_or_init(|| self.inner.log.new(slog::o!("request" => self.inner.id.to_string())))
    }

    /// Whether a log message at `level` would be sent (the client opted in
    /// with `io.modelcontextprotocol/logLevel` at or below `level`).
    pub fn wants_log(&self, level: LoggingLevel) -> bool {
        self.inner.meta.log_level.is_some_and(|min| level >= min)
    }

    /// Sends `notifications/message` on this request's response stream, if the
    /// client opted into `level`. Returns whether it was sent.
    /// Inside a task nothing is sent (a task carries no log messages).
    pub async fn log(&self, level: LoggingLevel, logger: Option<&str>, data: Value) -> bool {
        if !self.wants_log(level) || self.in_task() {
            return false;
        }
        let params = LogMessage { level, logger: logger.map(str::to_owned), data };
        self.emit(self.traced(LOG_MESSAGE_METHOD, &params)).await
    }

    /// Sends `notifications/progress` if the request carried a progress token.
    /// Returns whether it was sent.
    /// Inside a task, progress becomes the task's `statusMessage` (the
    /// message, or `progress/total`) instead.
    pub async fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) -> bool {
        if let Some(link) = self.task_link().filter(|l| l.is_begun()) {
            let text = match (message, total) {
                (Some(m), _) => m.to_owned(),
                (None, Some(t)) => format!("{progress}/{t}"),
                (None, None) => format!("{progress}"),
            };
            link.set_status(text);
            return true;
        }
        let Some(token) = self.inner.meta.progress_token.clone() else {
            return false;
        };
        let params = ProgressParams { progress_token: token, progress, total, message: message.map(str::to_owned) };
        self.emit(self.traced(PROGRESS_METHOD, &params)).await
    }

    /// A notification this request causes, carrying its trace context in
    /// `_meta` when it has one.
    fn traced<P: Serialize>(&self, method: &str, params: &P) -> Vec<u8> {
        let Some(trace) = self.trace_context() else { return encode_notification(method, params) };
        let mut value = serde_json::to_value(params).unwrap_or_default();
        if let Value::Object(m) = &mut value {
            m.insert("_meta".into(), Value::Object(trace.to_meta()));
        }
        encode_notification(method, &value)
    }

    async fn emit(&self, bytes: Vec<u8>) -> bool {
        if self.inner.cancel.is_cancelled() {
            return false;
        }
        tokio::select! {
            biased;
            _ = self.inner.cancel.cancelled() => false,
            sent = self.inner.outbound.send(Box::new(Outbound::Notification(bytes.into()))) => sent.is_ok(),
        }
    }
}
