//! [`ListenerActor`]: one per `subscriptions/listen`. It registers with the
//! hub, sends the acknowledgement first, then registers with its thread's
//! [`relay`], which hands it the events it opted into; each
//! goes out tagged with the listen request's id through an outlet: its SSE
//! response's queue on HTTP, the shared stdout writer on stdio. It never
//! blocks: an outlet that is full means the client fell behind, and the
//! listener closes. The actor owns the subscription's life (subscribe,
//! acknowledge, filter updates, close); deliveries reach the part it shares
//! with the relay directly, without a message each.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::Arc;

use actix::prelude::*;
use bytes::Bytes;
use mcp_protocol::jsonrpc::{encode_error, encode_notification};
use mcp_protocol::subscription::{encode_ack, encode_completion, Event, EventTemplate, ListenerId, SubscriptionFilter};
use mcp_protocol::{ErrorCode, ErrorData, RequestId};
use serde_json::json;
use slog::{debug, info, warn, Logger};
use tokio::sync::{mpsc, oneshot};

use crate::hub::{Close, CloseReason, ListenerHandle, Subscribe, SubscriptionHub, Unsubscribe};
use crate::outbound::{Outbound, OutletTx};
use crate::relay::{self, LocalListener, RelayHandle};

/// Why a push failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutletError {
    /// The buffer is full: the client is not keeping up.
    Full,
    /// The client has gone.
    Closed,
}

/// Where a listener's messages go. Implementations never block.
pub trait ListenerOutlet: 'static {
    /// Queues one message.
    fn push(&self, msg: Outbound) -> Result<(), OutletError>;
    /// Queues one routed event for subscription `id` (an outlet may encode
    /// it straight into its own framing).
    fn push_event(&self, event: &EventTemplate, id: &RequestId) -> Result<(), OutletError> {
        self.push(Outbound::Notification(event.encode_for(id).into()))
    }
    /// Calls `notify` once when the client has gone (called at most once,
    /// at the start).
    fn on_closed(&self, notify: Box<dyn FnOnce()>);
    /// Ends the subscription from the server's side for `reason` (lagging).
    fn end(&self, reason: &str);
    /// Writes a keep-alive, if the transport needs one (SSE: a comment line).
    fn keep_alive(&self) {}
}

fn try_push(tx: &OutletTx, msg: Outbound) -> Result<(), OutletError> {
    tx.try_send(Box::new(msg)).map_err(|e| match e {
        mpsc::error::TrySendError::Full(_) => OutletError::Full,
        mpsc::error::TrySendError::Closed(_) => OutletError::Closed,
    })
}

/// The shared stdio writer. Ending sends `notifications/cancelled` for the
/// listen id, so the client learns why its subscription stopped.
pub struct StdioOutlet {
    writer: OutletTx,
    id: RequestId,
    /// Waits for the writer to close; stopped with the outlet, so that it
    /// does not keep the writer's queue open.
    watch: std::cell::RefCell<Option<tokio::task::JoinHandle<()>>>,
}

impl StdioOutlet {
    /// An outlet into the writer's queue for the listen request `id`.
    pub fn new(writer: OutletTx, id: RequestId) -> Self {
        StdioOutlet { writer, id, watch: Default::default() }
    }
}

impl Drop for StdioOutlet {
    fn drop(&mut self) {
        if let Some(watch) = self.watch.get_mut().take() {
            watch.abort();
        }
    }
}

impl ListenerOutlet for StdioOutlet {
    fn push(&self, msg: Outbound) -> Result<(), OutletError> {
        try_push(&self.writer, msg)
    }
    fn on_closed(&self, notify: Box<dyn FnOnce()>) {
        let tx = self.writer.clone();
        let watch = actix_rt::spawn(async move {
            tx.closed().await;
            notify();
        });
        *self.watch.borrow_mut() = Some(watch);
    }
    fn end(&self, reason: &str) {
        let params = json!({"requestId": self.id.to_value(), "reason": reason});
        let bytes = encode_notification("notifications/cancelled", &params);
        // The queue may be full (that is often why we end): then the writer
        // is backed up and the client will see the stream stop regardless.
        let _ = self.writer.try_send(Box::new(Outbound::Notification(bytes.into())));
    }
}

/// The part of a listener that its thread's relay delivers to, shared by
/// the relay's registry and the actor (both on one thread).
struct Core {
    subscription: RequestId,
    legacy: bool,
    /// Only a legacy listener's filter changes after it subscribed.
    filter: RefCell<SubscriptionFilter>,
    outlet: Box<dyn ListenerOutlet>,
    /// Set once a push failed: no further deliveries while the actor closes.
    muted: Cell<bool>,
    actor: actix::WeakAddr<ListenerActor>,
}

impl LocalListener for Core {
    fn deliver(&self, event: &Event, encoded: &EventTemplate) {
        if self.muted.get() {
            return;
        }
        // The hub routes by the same filter; only a legacy listener's filter
        // changes, so only it can receive an event routed by the old one.
        let pushed = if self.legacy {
            if !self.filter.borrow().wants(event) {
                return;
            }
            self.outlet.push(Outbound::Notification(event.encode_untagged().into()))
        } else {
            self.outlet.push_event(encoded, &self.subscription)
        };
        if let Err(e) = pushed {
            self.muted.set(true);
            let reason = match e {
                OutletError::Full => CloseReason::Lagged,
                OutletError::Closed => CloseReason::ClientGone,
            };
            if let Some(actor) = self.actor.upgrade() {
                actor.do_send(Close { reason });
            }
        }
    }

    fn keep_alive(&self) {
        if !self.muted.get() {
            self.outlet.keep_alive();
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
    ended: Option<CloseReason>,
    log: Logger,
}

/// What a listener needs to start.
pub struct ListenerSpec {
    /// The listen request id (the subscription id on every message).
    pub subscription: RequestId,
    /// The honoured filter.
    pub filter: SubscriptionFilter,
    /// Where messages go.
    pub outlet: Box<dyn ListenerOutlet>,
    /// Mailbox capacity of its thread's relay (`hub.relay_mailbox`), used
    /// when this listener is the first on its thread and starts the relay.
    pub relay_mailbox: usize,
    /// Told `Ok` once subscribed and acknowledged, or the refusal.
    pub ready: Option<oneshot::Sender<Result<(), ErrorData>>>,
    /// A legacy session's stream: no acknowledgement, no subscription tag,
    /// no completion result.
    pub legacy: bool,
}

/// Replaces a listener's filter (a legacy session subscribed or unsubscribed).
#[derive(Debug, Clone, Message)]
#[rtype(result = "bool")]
pub struct UpdateFilter {
    /// The new filter.
    pub filter: SubscriptionFilter,
}

impl ListenerActor {
    /// Starts a listener on the current arbiter (and this thread's relay,
    /// if it has none yet).
    pub fn start_with(hub: Arc<Addr<SubscriptionHub>>, spec: ListenerSpec, log: &Logger) -> Addr<ListenerActor> {
        let relay = relay::local(spec.relay_mailbox);
        ListenerActor::create(move |ctx| {
            let core = Core {
                subscription: spec.subscription,
                legacy: spec.legacy,
                filter: RefCell::new(spec.filter),
                outlet: spec.outlet,
                muted: Cell::new(false),
                actor: ctx.address().downgrade(),
            };
            ListenerActor {
                id: ListenerId::new(),
                core: Rc::new(core),
                hub,
                relay,
                ready: spec.ready,
                ended: None,
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
        match reason {
            CloseReason::Graceful => {
                let _ = core
                    .outlet
                    .push(Outbound::Final { bytes: encode_completion(&core.subscription).into(), error_code: None });
                info!(self.log, "subscription completed by the server"; "subscription" => %core.subscription, "listener" => %self.id);
            }
            CloseReason::Lagged | CloseReason::LaggedAtHub => {
                core.outlet.end("subscriber fell behind its buffer; re-send subscriptions/listen");
                info!(self.log, "subscription closed: the client fell behind"; "subscription" => %core.subscription, "listener" => %self.id);
            }
            CloseReason::ClientGone => {
                debug!(self.log, "subscription ended by the client"; "subscription" => %core.subscription, "listener" => %self.id)
            }
        }
        ctx.stop();
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
            let core = act.core.clone();
            if let Some(message) = refusal {
                let error = ErrorData::new(ErrorCode::INTERNAL_ERROR, message);
                let bytes = encode_error(Some(&core.subscription), &error);
                let _ = core.outlet.push(Outbound::Final { bytes: bytes.into(), error_code: Some(error.code.0) });
                if let Some(ready) = act.ready.take() {
                    let _ = ready.send(Err(error));
                }
                ctx.stop();
                return;
            }
            if !core.legacy {
                let ack: Bytes = encode_ack(&core.subscription, &core.filter.borrow()).into();
                if core.outlet.push(Outbound::Notification(ack)).is_err() {
                    ctx.stop();
                    return;
                }
            }
            if let Some(ready) = act.ready.take() {
                let _ = ready.send(Ok(()));
            }
            // Events routed from now on reach the stream, after its acknowledgement.
            if !relay::register(&act.relay, act.id, act.core.clone()) {
                // Its thread's relay was replaced (its actix system restarted):
                // end the subscription rather than keep a stream that gets nothing.
                warn!(act.log, "subscription ended: its thread's relay has gone"; "subscription" => %core.subscription);
                act.close(CloseReason::Graceful, ctx);
                return;
            }
            debug!(act.log, "subscription acknowledged"; "subscription" => %core.subscription, "listener" => %act.id);
        }));
        // The core's weak address: the outlet keeps no listener alive, and
        // no future is polled at every message.
        let me = self.core.actor.clone();
        self.core.outlet.on_closed(Box::new(move || {
            if let Some(addr) = me.upgrade() {
                addr.do_send(Close { reason: CloseReason::ClientGone });
            }
        }));
    }

    fn stopped(&mut self, _ctx: &mut Self::Context) {
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
    use crate::transport::sse_outlet::sse_outlet;
    use futures::StreamExt;

    fn spec(outlet: Box<dyn ListenerOutlet>) -> ListenerSpec {
        ListenerSpec {
            subscription: RequestId::number(5),
            filter: SubscriptionFilter { tools_list_changed: true, ..Default::default() },
            outlet,
            relay_mailbox: 8,
            ready: None,
            legacy: false,
        }
    }

    #[actix_rt::test]
    async fn a_refusal_by_the_hub_ends_the_stream_with_an_error_response() {
        let log = crate::logging::discard();
        let hub = Arc::new(SubscriptionHub::new(Box::new(MemoryBackend), 0, 8, log.clone()).start());
        let (tx, mut rx) = sse_outlet(4);
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
        let log = crate::logging::discard();
        let hub = Arc::new(SubscriptionHub::new(Box::new(MemoryBackend), 10, 8, log.clone()).start());
        let (tx, mut rx) = sse_outlet(4);
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
