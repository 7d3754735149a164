//! [`Session`]: the actor behind one legacy session. It owns the
//! server-to-client requests waiting for the client's answer and the
//! listener behind its notification stream, and applies the requests that
//! change the negotiated state; the state itself, when the client last
//! spoke and the requests running in the session are shared with its
//! handles ([`SessionShared`]). It expires on its own timer when idle, and
//! ending it cancels what runs in it.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use actix::prelude::*;
use mcp_protocol::jsonrpc::Response;
use mcp_protocol::legacy::SessionState;
use mcp_protocol::subscription::SubscriptionFilter;
use mcp_protocol::RequestId;
use serde_json::Value;
use slog::{debug, info, Logger};
use tokio::sync::oneshot;

use super::dispatch::{Reply, StateChange};
use super::shared::SessionShared;
use crate::channels::control::{Cancel, Close, CloseReason, UpdateFilter};

/// The client's answer to a server-to-client request: a result, or the
/// error object.
pub(crate) type Answer = crate::catalog::context::ClientAnswer;

/// Told the session id when a session ends.
type OnEnd = Box<dyn FnOnce(&str)>;

/// One legacy session.
pub(crate) struct Session {
    id: String,
    /// The state, when the client last spoke, the requests running.
    shared: Arc<SessionShared>,
    /// Server-to-client requests awaiting the client's answer.
    asked: HashMap<RequestId, oneshot::Sender<Answer>>,
    next_ask: u64,
    /// The listener behind the notification stream (HTTP GET, or stdout).
    stream: Option<(Recipient<Close>, Recipient<UpdateFilter>)>,
    /// `None`: never expires (the stdio session lives as long as stdin).
    idle: Option<Duration>,
    /// Told when the session ends (the registry forgets it).
    on_end: Option<OnEnd>,
    log: Logger,
}

impl Session {
    /// A session with its state after `initialize`, expiring after `idle`
    /// without messages (never if `None`).
    pub(crate) fn new(id: String, state: SessionState, idle: Option<Duration>, log: Logger) -> Self {
        Session {
            id,
            shared: Arc::new(SessionShared::new(state)),
            asked: HashMap::new(),
            next_ask: 1,
            stream: None,
            idle,
            on_end: None,
            log,
        }
    }

    /// Its shared part, for its handles.
    pub(crate) fn shared(&self) -> Arc<SessionShared> {
        self.shared.clone()
    }

    /// Calls `f` with the session id when the session ends.
    #[must_use]
    pub(crate) fn on_end(mut self, f: impl FnOnce(&str) + 'static) -> Self {
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
            resource_subscriptions: self.shared.state().subscriptions.iter().cloned().collect(),
            task_ids: Vec::new(),
            owner: None,
        }
    }

    fn touch(&mut self) {
        self.shared.touch();
    }
}

impl Actor for Session {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        if let Some(idle) = self.idle {
            let every = (idle / 10).clamp(Duration::from_millis(10), Duration::from_secs(10));
            ctx.run_interval(every, move |act, ctx| {
                if act.shared.last_seen().elapsed() >= idle {
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
        for cancel in self.shared.drain() {
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

/// A request that changes the session's state (`logging/setLevel`,
/// `resources/subscribe`, `resources/unsubscribe`), as its handle decided it.
#[derive(Message)]
#[rtype(result = "Reply")]
pub(crate) struct Change(pub StateChange);

impl Handler<Change> for Session {
    type Result = ResponseActFuture<Self, Reply>;

    fn handle(&mut self, Change(change): Change, _ctx: &mut Self::Context) -> Self::Result {
        self.touch();
        let changed = self.shared.change_state(|state| match change {
            StateChange::SetLevel(level) => {
                state.log_level = Some(level);
                false
            }
            StateChange::Subscribe(uri, true) => state.subscriptions.insert(uri),
            StateChange::Subscribe(uri, false) => state.subscriptions.remove(&uri),
        });
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

/// Registers a server-to-client request; answers its id and where the
/// client's answer will arrive.
#[derive(Message)]
#[rtype(result = "(RequestId, oneshot::Receiver<Answer>)")]
pub(crate) struct Ask;

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
pub(crate) struct ForgetAsk(pub RequestId);

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
pub(crate) struct ClientAnswer(pub Response);

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
pub(crate) struct StreamFilter;

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
pub(crate) struct SetStream {
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
pub(crate) struct End;

impl Handler<End> for Session {
    type Result = ();

    fn handle(&mut self, _: End, ctx: &mut Self::Context) {
        ctx.stop();
    }
}
