//! [`Session`]: the actor behind one legacy session. It owns the
//! server-to-client requests waiting for the client's answer and the
//! listener behind its notification stream, and applies the requests that
//! change the negotiated state; the state itself, when the client last
//! spoke and the requests running in the session are shared with its
//! handles ([`SessionShared`]). It expires on its own timer when idle, and
//! ending it cancels what runs in it. A copy of a session that lives in a
//! store takes each newer revision of the state whole ([`Replace`]).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use actix::prelude::*;
use mcp_protocol::jsonrpc::Response;
use mcp_protocol::legacy::SessionState;
use mcp_protocol::subscription::SubscriptionFilter;
use mcp_protocol::{ErrorData, RequestId};
use serde_json::Value;
use slog::{debug, info, Logger};
use tokio::sync::oneshot;

use super::dispatch::{Reply, StateChange};
use super::shared::SessionShared;
use super::store::{question_id, Revised, SessionStore};
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
    /// Where the session lives beyond this instance, if it does.
    store: Option<Arc<dyn SessionStore>>,
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
            store: None,
            log,
        }
    }

    /// This session, living in `store` too (this actor being one instance's
    /// copy of it).
    #[must_use]
    pub(crate) fn with_store(mut self, store: Option<Arc<dyn SessionStore>>) -> Self {
        self.store = store;
        self
    }

    /// This copy, its state being the store's `revision` of it.
    #[must_use]
    pub(crate) fn at_revision(self, revision: u64) -> Self {
        self.shared.set_revision(revision);
        self
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
            resource_subscriptions: self.shared.state().subscriptions.iter().cloned().collect(),
            ..SubscriptionFilter::every_list_change()
        }
    }

    fn touch(&mut self) {
        self.shared.touch();
    }

    /// Publishes `state` (the one writer); when that changed what the
    /// notification stream delivers, what tells the stream so.
    fn publish(&mut self, state: SessionState) -> Option<actix::dev::RecipientRequest<UpdateFilter>> {
        let same = self.shared.state().subscriptions == state.subscriptions;
        self.shared.change_state(|s| *s = state);
        let (_, update) = self.stream.as_ref().filter(|_| !same)?;
        Some(update.send(UpdateFilter { filter: self.filter() }))
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
        let ok = || Reply::Now(Ok(Value::Object(Default::default())));
        let Some(store) = self.store.clone() else {
            let mut next = SessionState::clone(&self.shared.state());
            change.apply(&mut next);
            return Box::pin(filtered(self.publish(next), ok()).into_actor(self));
        };
        // Written through the store, which raises the revision and tells
        // the other instances; this copy takes the state the store holds
        // after the change as any newer revision ([`Replace`]), before the
        // client hears the answer.
        Box::pin(store.change(&self.id, &change).into_actor(self).then(move |written, act, ctx| {
            let me = ctx.address();
            if matches!(written, Ok(None)) {
                ctx.stop();
            }
            async move {
                match written {
                    Ok(Some(revised)) => match me.send(Replace(revised)).await {
                        Ok(()) => ok(),
                        Err(_) => Reply::Now(Err(ErrorData::internal("the session has ended"))),
                    },
                    Ok(None) => Reply::Now(Err(ErrorData::internal("the session has ended"))),
                    Err(e) => Reply::Now(Err(e.to_error_data())),
                }
            }
            .into_actor(act)
        }))
    }
}

/// `then`, once the notification stream routes by its new filter (when
/// `update` tells it one): so that an update right after
/// `resources/subscribe` is not missed.
async fn filtered<T>(update: Option<actix::dev::RecipientRequest<UpdateFilter>>, then: T) -> T {
    if let Some(update) = update {
        let _ = update.await;
    }
    then
}

/// The session's state at a revision of the store: another instance
/// changed it, or a message found this copy behind. A revision no newer
/// than the copy's changes nothing. Answered once the copy serves by it,
/// its notification stream included.
#[derive(Message)]
#[rtype(result = "()")]
pub(crate) struct Replace(pub Revised);

impl Handler<Replace> for Session {
    /// Atomic: the revision is published once the stream routes by the new
    /// state, and nothing else is handled meanwhile, so that a message that
    /// finds the copy at a revision finds its stream at it too.
    type Result = AtomicResponse<Self, ()>;

    fn handle(&mut self, Replace(Revised { revision, state }): Replace, _ctx: &mut Self::Context) -> Self::Result {
        let update = if revision > self.shared.revision() { self.publish(state) } else { None };
        AtomicResponse::new(Box::pin(
            filtered(update, ()).into_actor(self).map(move |(), act, _| act.shared.set_revision(revision)),
        ))
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
        let id = question_id(self.store.as_ref().map(|s| s.instance()), self.next_ask);
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
