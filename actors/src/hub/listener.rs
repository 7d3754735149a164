//! [`ListenerActor`]: one per `subscriptions/listen` (and one behind each
//! legacy session's notification stream). It registers with the hub, sends
//! the acknowledgement first, then registers with its thread's [`relay`],
//! which hands it the events it opted into; each goes out tagged with the
//! listen request's id through its [`ListenerSink`]: its SSE response's
//! queue on HTTP, the shared stdout writer on stdio. It never blocks: a
//! sink that is full means the client fell behind, and the
//! listener closes. The actor owns the subscription's life (subscribe,
//! acknowledge, filter updates, close); deliveries reach the part it shares
//! with the relay directly, without a message each.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::Arc;

use crate::telemetry::span::StreamSpan;
use actix::prelude::*;
use bytes::Bytes;
use mcp_protocol::jsonrpc::encode_error;
use mcp_protocol::subscription::{encode_ack, encode_completion, Event, EventTemplate, ListenerId, SubscriptionFilter};
use mcp_protocol::{ErrorCode, ErrorData, RequestId};
use slog::{debug, info, warn, Logger};
use tokio::sync::oneshot;

use crate::channels::control::{Close, CloseReason, UpdateFilter};
use crate::channels::outbound::Outbound;
use crate::channels::sink::{ListenerSink, SinkError};
use crate::hub::relay::{self, LocalListener, RelayHandle};
use crate::hub::{ListenerHandle, Subscribe, SubscriptionHub, Unsubscribe};

/// What a listener serves.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ListenerKind {
    /// A `subscriptions/listen` stream: acknowledged first, every event
    /// tagged with the listen request's id, a completion result at shutdown.
    Listen(RequestId),
    /// A legacy session's notification stream (HTTP GET, or stdout on
    /// stdio): untagged events, no acknowledgement and no completion; its
    /// filter follows the session's `resources/subscribe`.
    Session,
    /// An actor of the application ([`McpServer::subscribe`](crate::McpServer::subscribe)):
    /// typed events, no acknowledgement and no completion result; told why
    /// when it ends.
    Bridge,
}

/// The part of a listener that its thread's relay delivers to, shared by
/// the relay's registry and the actor (both on one thread).
struct Core {
    kind: ListenerKind,
    /// Only a session stream's filter changes after it subscribed.
    filter: RefCell<SubscriptionFilter>,
    sink: Box<dyn ListenerSink>,
    /// Set once a push failed: no further deliveries while the actor closes.
    muted: Cell<bool>,
    actor: actix::WeakAddr<ListenerActor>,
}

impl LocalListener for Core {
    fn deliver(&self, event: &Event, encoded: &EventTemplate) {
        if self.muted.get() {
            return;
        }
        // The hub routes by the same filter; only a session stream's filter
        // changes, so only it can receive an event routed by the old one.
        let pushed = match &self.kind {
            ListenerKind::Listen(id) => self.sink.push_event(encoded, id),
            ListenerKind::Bridge => self.sink.push_typed(event),
            ListenerKind::Session => {
                if !self.filter.borrow().wants(event) {
                    return;
                }
                self.sink.push(Outbound::Notification(event.encode_untagged().into()))
            }
        };
        crate::telemetry::notification(pushed.is_ok());
        if let Err(e) = pushed {
            self.muted.set(true);
            let reason = match e {
                SinkError::Full => CloseReason::Lagged,
                SinkError::Closed => CloseReason::ClientGone,
            };
            if let Some(actor) = self.actor.upgrade() {
                actor.do_send(Close { reason });
            }
        }
    }

    fn keep_alive(&self) {
        if !self.muted.get() {
            self.sink.keep_alive();
        }
    }
}

/// The actor behind one subscription.
pub struct ListenerActor {
    id: ListenerId,
    core: Rc<Core>,
    /// Shared by every listener (a clone of an `Addr` costs two allocations).
    hub: Arc<Addr<SubscriptionHub>>,
    relay: RelayHandle,
    ready: Option<oneshot::Sender<Result<(), ErrorData>>>,
    expires_in: Option<std::time::Duration>,
    version: Option<&'static str>,
    /// A listen stream counted as open in the metrics.
    counted: bool,
    ended: Option<CloseReason>,
    /// The stream's span (with the `otel` feature and a collector).
    span: StreamSpan,
    log: Logger,
}

/// What a listener needs to start.
pub struct ListenerSpec {
    /// What it serves.
    pub kind: ListenerKind,
    /// The honoured filter.
    pub filter: SubscriptionFilter,
    /// Where messages go.
    pub sink: Box<dyn ListenerSink>,
    /// Mailbox capacity of its thread's relay (`hub.relay_mailbox`), used
    /// when this listener is the first on its thread and starts the relay.
    pub relay_mailbox: usize,
    /// Told `Ok` once subscribed and acknowledged, or the refusal.
    pub ready: Option<oneshot::Sender<Result<(), ErrorData>>>,
    /// When the credentials that opened it expire, the stream ends then.
    pub expires_in: Option<std::time::Duration>,
    /// The protocol version of a listen stream's request (its span's
    /// `mcp.protocol.version`).
    pub version: Option<&'static str>,
}

impl ListenerActor {
    /// Starts a listener on the current arbiter (and this thread's relay,
    /// if it has none yet).
    pub fn start_with(hub: Arc<Addr<SubscriptionHub>>, spec: ListenerSpec, log: &Logger) -> Addr<ListenerActor> {
        let relay = relay::local(spec.relay_mailbox);
        ListenerActor::create(move |ctx| {
            let core = Core {
                kind: spec.kind,
                filter: RefCell::new(spec.filter),
                sink: spec.sink,
                muted: Cell::new(false),
                actor: ctx.address().downgrade(),
            };
            ListenerActor {
                id: ListenerId::new(),
                core: Rc::new(core),
                hub,
                relay,
                ready: spec.ready,
                expires_in: spec.expires_in,
                version: spec.version,
                counted: false,
                ended: None,
                span: StreamSpan::default(),
                // No child logger per listener (each would cost allocations
                // for every open stream): lines carry the subscription id inline.
                log: log.clone(),
            }
        })
    }

    fn subscribe(&self, ctx: &mut Context<Self>) -> Subscribe {
        let handle = ListenerHandle { close: ctx.address().recipient(), relay: self.relay.clone() };
        Subscribe { id: self.id, filter: self.core.filter.borrow().clone(), handle }
    }

    fn close(&mut self, reason: CloseReason, ctx: &mut Context<Self>) {
        if self.ended.is_some() {
            return;
        }
        self.ended = Some(reason);
        self.core.muted.set(true);
        let core = &self.core;
        let id = core.subscription();
        match reason {
            // A session stream has no completion result: that era has none.
            CloseReason::Graceful | CloseReason::CredentialsExpired => {
                match &core.kind {
                    ListenerKind::Listen(sub) => {
                        let _ = core.sink.push(Outbound::Final {
                            bytes: encode_completion(sub).into(),
                            error_code: None,
                            retry_after_secs: None,
                        });
                    }
                    ListenerKind::Bridge => core.sink.end("the subscription was closed by the server"),
                    ListenerKind::Session => {}
                }
                let why = if reason == CloseReason::Graceful { "server" } else { "credentials expired" };
                info!(self.log, "subscription completed by the server"; "subscription" => id, "listener" => %self.id, "why" => why);
            }
            CloseReason::Lagged | CloseReason::LaggedAtHub => {
                core.sink.end("subscriber fell behind its buffer; re-send subscriptions/listen");
                info!(self.log, "subscription closed: the client fell behind"; "subscription" => id, "listener" => %self.id);
            }
            CloseReason::ClientGone => {
                debug!(self.log, "subscription ended by the client"; "subscription" => id, "listener" => %self.id)
            }
        }
        ctx.stop();
    }

    /// After the hub answered the subscription: the acknowledgement (or the
    /// refusal as the stream's only message), then registration with the relay.
    fn subscribed(&mut self, refusal: Option<String>, ctx: &mut Context<Self>) {
        let core = self.core.clone();
        if let Some(message) = refusal {
            let error = ErrorData::new(ErrorCode::INTERNAL_ERROR, message);
            let id = match &core.kind {
                ListenerKind::Listen(id) => Some(id),
                ListenerKind::Session | ListenerKind::Bridge => None,
            };
            let bytes = encode_error(id, &error);
            let final_ =
                Outbound::Final { bytes: bytes.into(), error_code: Some(error.code.0), retry_after_secs: None };
            let _ = core.sink.push(final_);
            if let Some(ready) = self.ready.take() {
                let _ = ready.send(Err(error));
            }
            ctx.stop();
            return;
        }
        if let ListenerKind::Listen(id) = &core.kind {
            let ack: Bytes = encode_ack(id, &core.filter.borrow()).into();
            if core.sink.push(Outbound::Notification(ack)).is_err() {
                ctx.stop();
                return;
            }
            crate::telemetry::listen_opened();
            self.counted = true;
            self.span = StreamSpan::start(id, self.version);
        }
        if let Some(ready) = self.ready.take() {
            let _ = ready.send(Ok(()));
        }
        // Events routed from now on reach the stream, after its acknowledgement.
        if !relay::register(&self.relay, self.id, core.clone()) {
            // Its thread's relay was replaced (its actix system restarted):
            // end the subscription rather than keep a stream that gets nothing.
            warn!(self.log, "subscription ended: its thread's relay has gone"; "subscription" => core.subscription());
            self.close(CloseReason::Graceful, ctx);
            return;
        }
        debug!(self.log, "subscription acknowledged"; "subscription" => core.subscription(), "listener" => %self.id);
    }
}

impl Core {
    /// The subscription id for log lines.
    fn subscription(&self) -> String {
        match &self.kind {
            ListenerKind::Listen(id) => id.to_string(),
            ListenerKind::Session => "session".into(),
            ListenerKind::Bridge => "bridge".into(),
        }
    }
}

impl Actor for ListenerActor {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        let subscribe = self.subscribe(ctx);
        // `wait`: nothing else is handled before the acknowledgement is queued.
        ctx.wait(self.hub.send(subscribe).into_actor(self).map(|res, act, ctx| {
            let refusal = match res {
                Ok(Ok(())) => None,
                Ok(Err(e)) => Some(e.to_string()),
                Err(e) => Some(format!("subscription hub unavailable: {e}")),
            };
            act.subscribed(refusal, ctx);
        }));
        // The core's weak address: the sink keeps no listener alive, and
        // no future is polled at every message.
        let me = self.core.actor.clone();
        self.core.sink.on_closed(Box::new(move || {
            if let Some(addr) = me.upgrade() {
                addr.do_send(Close { reason: CloseReason::ClientGone });
            }
        }));
        if let Some(left) = self.expires_in {
            ctx.run_later(left, |act, ctx| act.close(CloseReason::CredentialsExpired, ctx));
        }
    }

    fn stopped(&mut self, _ctx: &mut Self::Context) {
        if self.counted {
            let reason = match self.ended {
                Some(CloseReason::Graceful) => "shutdown",
                Some(CloseReason::CredentialsExpired) => "token_expiry",
                Some(CloseReason::Lagged | CloseReason::LaggedAtHub) => "lag",
                Some(CloseReason::ClientGone) | None => "client",
            };
            crate::telemetry::listen_closed(reason);
            self.span.end(reason);
        }
        relay::unregister(self.id);
        // Control message: queued even past the mailbox capacity, never dropped.
        self.hub.do_send(Unsubscribe { id: self.id, lagged: self.ended == Some(CloseReason::Lagged) });
    }
}

impl Handler<UpdateFilter> for ListenerActor {
    type Result = ResponseActFuture<Self, bool>;

    /// Answers once the hub routes by the new filter (true), or false when
    /// the hub refused it (the listener then closes).
    fn handle(&mut self, msg: UpdateFilter, ctx: &mut Self::Context) -> Self::Result {
        *self.core.filter.borrow_mut() = msg.filter;
        // Registering again replaces the routing entry.
        let subscribe = self.subscribe(ctx);
        Box::pin(self.hub.send(subscribe).into_actor(self).map(|res, act, ctx| {
            let ok = matches!(res, Ok(Ok(())));
            if !ok {
                act.close(CloseReason::ClientGone, ctx);
            }
            ok
        }))
    }
}

impl Handler<Close> for ListenerActor {
    type Result = ();

    fn handle(&mut self, msg: Close, ctx: &mut Self::Context) {
        self.close(msg.reason, ctx);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hub::MemoryBackend;
    use crate::transport::sse::queue;
    use futures::StreamExt;

    fn spec(sink: Box<dyn ListenerSink>) -> ListenerSpec {
        ListenerSpec {
            kind: ListenerKind::Listen(RequestId::number(5)),
            filter: SubscriptionFilter { tools_list_changed: true, ..Default::default() },
            sink,
            relay_mailbox: 8,
            ready: None,
            expires_in: None,
            version: None,
        }
    }

    #[actix_rt::test]
    async fn a_refusal_by_the_hub_ends_the_stream_with_an_error_response() {
        let log = crate::telemetry::logging::discard();
        let hub = Arc::new(SubscriptionHub::new(Box::new(MemoryBackend), 0, 8, log.clone()).start());
        let (tx, mut rx) = queue(4);
        ListenerActor::start_with(hub, spec(Box::new(tx)), &log);
        let frame = rx.next().await.expect("the error response");
        let text = std::str::from_utf8(&frame).unwrap();
        let json: serde_json::Value = serde_json::from_str(text.strip_prefix("data: ").unwrap().trim()).unwrap();
        assert_eq!(json["id"], 5);
        assert!(json["error"]["message"].as_str().unwrap().contains("limit 0"), "{json}");
        assert_eq!(rx.next().await, None, "the stream ends after the error");
    }

    #[actix_rt::test]
    async fn the_client_leaving_frees_the_listener() {
        let log = crate::telemetry::logging::discard();
        let hub = Arc::new(SubscriptionHub::new(Box::new(MemoryBackend), 10, 8, log.clone()).start());
        let (tx, mut rx) = queue(4);
        ListenerActor::start_with(hub.clone(), spec(Box::new(tx)), &log);
        assert!(std::str::from_utf8(&rx.next().await.unwrap()).unwrap().contains("subscriptions/acknowledged"));
        assert_eq!(hub.send(crate::hub::Stats).await.unwrap().listeners, 1);
        drop(rx);
        for _ in 0..200 {
            if hub.send(crate::hub::Stats).await.unwrap().listeners == 0 {
                return;
            }
            tokio::task::yield_now().await;
        }
        panic!("the listener was not removed after its response went away");
    }
}
