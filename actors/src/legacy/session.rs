//! [`Session`]: the actor behind one legacy session. It owns the negotiated
//! state, the requests running in it (for `notifications/cancelled`), the
//! server-to-client requests waiting for the client's answer, and the
//! listener behind its notification stream. It expires on its own timer
//! when idle, and ending it cancels what runs in it.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use actix::prelude::*;
use mcp_protocol::jsonrpc::{Request, Response};
use mcp_protocol::legacy::SessionState;
use mcp_protocol::subscription::SubscriptionFilter;
use mcp_protocol::RequestId;
use serde_json::Value;
use slog::{debug, info, Logger};
use tokio::sync::oneshot;

use super::dispatch::{self, Action, Reply};
use crate::msg::{Cancel, Close, CloseReason, UpdateFilter};

/// The client's answer to a server-to-client request: a result, or the
/// error object.
pub type Answer = Result<Value, Value>;

/// Told the session id when a session ends.
type OnEnd = Box<dyn FnOnce(&str)>;

/// One legacy session.
pub struct Session {
    id: String,
    state: SessionState,
    /// Server-to-client requests awaiting the client's answer.
    asked: HashMap<RequestId, oneshot::Sender<Answer>>,
    next_ask: u64,
    /// Requests running in this session, for `notifications/cancelled`.
    in_flight: HashMap<RequestId, Recipient<Cancel>>,
    /// The listener behind the notification stream (HTTP GET, or stdout).
    stream: Option<(Recipient<Close>, Recipient<UpdateFilter>)>,
    last_seen: Instant,
    /// `None`: never expires (the stdio session lives as long as stdin).
    idle: Option<Duration>,
    /// Told when the session ends (the registry forgets it).
    on_end: Option<OnEnd>,
    log: Logger,
}

impl Session {
    /// A session with its state after `initialize`, expiring after `idle`
    /// without messages (never if `None`).
    pub fn new(id: String, state: SessionState, idle: Option<Duration>, log: Logger) -> Self {
        Session {
            id,
            state,
            asked: HashMap::new(),
            next_ask: 1,
            in_flight: HashMap::new(),
            stream: None,
            last_seen: Instant::now(),
            idle,
            on_end: None,
            log,
        }
    }

    /// Calls `f` with the session id when the session ends.
    #[must_use]
    pub fn on_end(mut self, f: impl FnOnce(&str) + 'static) -> Self {
        self.on_end = Some(Box::new(f));
        self
    }

    /// What its notification stream delivers: every list change (the legacy
    /// era has no opt-in) and updates of the subscribed resources.
    fn filter(&self) -> SubscriptionFilter {
        SubscriptionFilter {
            tools_list_changed: true,
            prompts_list_changed: true,
            resources_list_changed: true,
            resource_subscriptions: self.state.subscriptions.iter().cloned().collect(),
            task_ids: Vec::new(),
        }
    }

    fn touch(&mut self) {
        self.last_seen = Instant::now();
    }
}

impl Actor for Session {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        if let Some(idle) = self.idle {
            let every = (idle / 10).clamp(Duration::from_millis(10), Duration::from_secs(10));
            ctx.run_interval(every, move |act, ctx| {
                if act.last_seen.elapsed() >= idle {
                    info!(act.log, "legacy session expired"; "session" => &act.id);
                    ctx.stop();
                }
            });
        }
    }

    fn stopped(&mut self, _ctx: &mut Self::Context) {
        if let Some((close, _)) = self.stream.take() {
            close.do_send(Close { reason: CloseReason::ClientGone });
        }
        for (_, cancel) in self.in_flight.drain() {
            let _ = cancel.try_send(Cancel { reason: Some("session ended".into()) });
        }
        // Dropping the senders tells waiting handlers the session ended.
        self.asked.clear();
        if let Some(on_end) = self.on_end.take() {
            on_end(&self.id);
        }
        debug!(self.log, "legacy session ended"; "session" => &self.id);
    }
}

/// A request of the session's client.
#[derive(Message)]
#[rtype(result = "Reply")]
pub struct SessionRequest(pub Request);

impl Handler<SessionRequest> for Session {
    type Result = ResponseActFuture<Self, Reply>;

    fn handle(&mut self, SessionRequest(r): SessionRequest, _ctx: &mut Self::Context) -> Self::Result {
        self.touch();
        let changed = match dispatch::classify(&self.state, r) {
            Action::Reply(reply) => return Box::pin(fut::ready(reply)),
            Action::SetLevel(level) => {
                self.state.log_level = Some(level);
                false
            }
            Action::Subscribe(uri, true) => self.state.subscriptions.insert(uri),
            Action::Subscribe(uri, false) => self.state.subscriptions.remove(&uri),
        };
        let ok = Reply::Now(Ok(Value::Object(Default::default())));
        // Answer once the stream routes by the new filter, so that an update
        // right after `resources/subscribe` is not missed.
        match self.stream.as_ref().filter(|_| changed) {
            Some((_, update)) => {
                let sent = update.send(UpdateFilter { filter: self.filter() });
                Box::pin(
                    async move {
                        let _ = sent.await;
                        ok
                    }
                    .into_actor(self),
                )
            }
            None => Box::pin(fut::ready(ok)),
        }
    }
}

/// A client notification in the session (`notifications/cancelled` is
/// routed to [`CancelRequest`] before it gets here).
#[derive(Message)]
#[rtype(result = "()")]
pub struct Touch;

impl Handler<Touch> for Session {
    type Result = ();

    fn handle(&mut self, _: Touch, _ctx: &mut Self::Context) {
        self.touch();
    }
}

/// Cancels a request running in the session.
#[derive(Message)]
#[rtype(result = "()")]
pub struct CancelRequest {
    /// The request's id.
    pub id: RequestId,
    /// Why (logged by the request actor).
    pub reason: Option<String>,
}

impl Handler<CancelRequest> for Session {
    type Result = ();

    fn handle(&mut self, msg: CancelRequest, _ctx: &mut Self::Context) {
        self.touch();
        match self.in_flight.remove(&msg.id) {
            Some(cancel) => {
                let _ = cancel.try_send(Cancel { reason: msg.reason });
            }
            None => {
                debug!(self.log, "cancellation for a request not in flight"; "session" => &self.id, "request" => %msg.id)
            }
        }
    }
}

/// A request started in the session (so that it can be cancelled).
#[derive(Message)]
#[rtype(result = "()")]
pub struct Track {
    /// The request's id.
    pub id: RequestId,
    /// Its actor.
    pub cancel: Recipient<Cancel>,
}

impl Handler<Track> for Session {
    type Result = ();

    fn handle(&mut self, msg: Track, _ctx: &mut Self::Context) {
        self.in_flight.retain(|_, r| r.connected());
        self.in_flight.insert(msg.id, msg.cancel);
    }
}

/// Registers a server-to-client request; answers its id and where the
/// client's answer will arrive.
#[derive(Message)]
#[rtype(result = "(RequestId, oneshot::Receiver<Answer>)")]
pub struct Ask;

impl Handler<Ask> for Session {
    type Result = MessageResult<Ask>;

    fn handle(&mut self, _: Ask, _ctx: &mut Self::Context) -> Self::Result {
        let id = RequestId::string(&format!("srv-{}", self.next_ask));
        self.next_ask += 1;
        let (tx, rx) = oneshot::channel();
        self.asked.insert(id.clone(), tx);
        MessageResult((id, rx))
    }
}

/// A server-to-client request whose handler stopped waiting.
#[derive(Message)]
#[rtype(result = "()")]
pub struct ForgetAsk(pub RequestId);

impl Handler<ForgetAsk> for Session {
    type Result = ();

    fn handle(&mut self, ForgetAsk(id): ForgetAsk, _ctx: &mut Self::Context) {
        self.asked.remove(&id);
    }
}

/// The client's answer to a server-to-client request; answers whether a
/// handler was waiting for it.
#[derive(Message)]
#[rtype(result = "bool")]
pub struct ClientAnswer(pub Response);

impl Handler<ClientAnswer> for Session {
    type Result = bool;

    fn handle(&mut self, ClientAnswer(r): ClientAnswer, _ctx: &mut Self::Context) -> bool {
        self.touch();
        let waiting = self.asked.remove(&r.id);
        let delivered = waiting.is_some_and(|tx| tx.send(r.outcome).is_ok());
        if !delivered {
            debug!(self.log, "answer to no pending request ignored"; "session" => &self.id, "id" => %r.id);
        }
        delivered
    }
}

/// The filter a new notification stream of the session starts with.
#[derive(Message)]
#[rtype(result = "SubscriptionFilter")]
pub struct StreamFilter;

impl Handler<StreamFilter> for Session {
    type Result = MessageResult<StreamFilter>;

    fn handle(&mut self, _: StreamFilter, _ctx: &mut Self::Context) -> Self::Result {
        self.touch();
        MessageResult(self.filter())
    }
}

/// Sets the listener behind the notification stream, replacing (and
/// closing) an earlier one.
#[derive(Message)]
#[rtype(result = "()")]
pub struct SetStream {
    /// Closes it.
    pub close: Recipient<Close>,
    /// Changes its filter.
    pub update: Recipient<UpdateFilter>,
}

impl Handler<SetStream> for Session {
    type Result = ();

    fn handle(&mut self, msg: SetStream, _ctx: &mut Self::Context) {
        if let Some((old, _)) = self.stream.replace((msg.close, msg.update)) {
            old.do_send(Close { reason: CloseReason::ClientGone });
        }
    }
}

/// Ends the session (DELETE, or the end of stdin).
#[derive(Message)]
#[rtype(result = "()")]
pub struct End;

impl Handler<End> for Session {
    type Result = ();

    fn handle(&mut self, _: End, ctx: &mut Self::Context) {
        ctx.stop();
    }
}
