//! [`ListenerActor`]: one per `subscriptions/listen`. It registers with the
//! hub, sends the acknowledgement first, then forwards the events it opted
//! into, each tagged with the listen request's id, through an outlet: its SSE
//! response's queue on HTTP, the shared stdout writer on stdio. It never blocks: an
//! outlet that is full means the client fell behind, and the listener closes.

use std::sync::Arc;

use actix::prelude::*;
use bytes::Bytes;
use mcp_protocol::jsonrpc::{encode_error, encode_notification};
use mcp_protocol::subscription::{encode_ack, encode_completion, ListenerId, SubscriptionFilter};
use mcp_protocol::{ErrorCode, ErrorData, RequestId};
use serde_json::json;
use slog::{debug, info, Logger};
use tokio::sync::{mpsc, oneshot};

use crate::hub::{Close, CloseReason, Deliver, ListenerHandle, Subscribe, SubscriptionHub, ToListener, Unsubscribe};
use crate::outbound::{Outbound, OutletTx};

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

/// The actor behind one subscription.
pub struct ListenerActor {
    id: ListenerId,
    subscription: RequestId,
    filter: SubscriptionFilter,
    outlet: Box<dyn ListenerOutlet>,
    /// Shared by every listener (a clone of an `Addr` costs two allocations).
    hub: Arc<Addr<SubscriptionHub>>,
    mailbox: usize,
    ready: Option<oneshot::Sender<Result<(), ErrorData>>>,
    ended: Option<CloseReason>,
    legacy: bool,
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
    /// Mailbox capacity: how many undelivered events it may hold.
    pub mailbox: usize,
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
    /// Starts a listener on the current arbiter.
    pub fn start_with(hub: Arc<Addr<SubscriptionHub>>, spec: ListenerSpec, log: &Logger) -> Addr<ListenerActor> {
        let id = ListenerId::new();
        // No child logger per listener (each would cost allocations for
        // every open stream): lines carry the subscription id inline.
        let log = log.clone();
        ListenerActor {
            id,
            subscription: spec.subscription,
            filter: spec.filter,
            outlet: spec.outlet,
            hub,
            mailbox: spec.mailbox,
            ready: spec.ready,
            ended: None,
            legacy: spec.legacy,
            log,
        }
        .start()
    }

    /// How the hub reaches this listener.
    fn hub_handle(&self, ctx: &mut Context<Self>) -> ListenerHandle {
        ListenerHandle(ctx.address().recipient())
    }

    fn deliver(&mut self, msg: Deliver, ctx: &mut Context<Self>) {
        // The hub routes by the same filter; only a legacy listener's filter
        // changes, so only it can receive an event routed by the old one.
        if self.legacy && !self.filter.wants(&msg.event) {
            return;
        }
        let bytes = if self.legacy { msg.event.encode_untagged() } else { msg.encoded.encode_for(&self.subscription) };
        match self.outlet.push(Outbound::Notification(bytes.into())) {
            Ok(()) => {}
            Err(OutletError::Full) => self.close(CloseReason::Lagged, ctx),
            Err(OutletError::Closed) => self.close(CloseReason::ClientGone, ctx),
        }
    }

    fn close(&mut self, reason: CloseReason, ctx: &mut Context<Self>) {
        if self.ended.is_some() {
            return;
        }
        self.ended = Some(reason);
        match reason {
            CloseReason::Graceful => {
                let _ = self
                    .outlet
                    .push(Outbound::Final { bytes: encode_completion(&self.subscription).into(), error_code: None });
                info!(self.log, "subscription completed by the server"; "subscription" => %self.subscription, "listener" => %self.id);
            }
            CloseReason::Lagged | CloseReason::LaggedAtHub => {
                self.outlet.end("subscriber fell behind its buffer; re-send subscriptions/listen");
                info!(self.log, "subscription closed: the client fell behind"; "subscription" => %self.subscription, "listener" => %self.id);
            }
            CloseReason::ClientGone => {
                debug!(self.log, "subscription ended by the client"; "subscription" => %self.subscription, "listener" => %self.id)
            }
        }
        ctx.stop();
    }
}

impl Actor for ListenerActor {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        ctx.set_mailbox_capacity(self.mailbox);
        let handle = self.hub_handle(ctx);
        let subscribe = Subscribe { id: self.id, filter: self.filter.clone(), handle };
        // `wait`: no event is processed before the acknowledgement is queued.
        ctx.wait(self.hub.send(subscribe).into_actor(self).map(|res, act, ctx| {
            let refusal = match res {
                Ok(Ok(())) => None,
                Ok(Err(e)) => Some(e.to_string()),
                Err(e) => Some(format!("subscription hub unavailable: {e}")),
            };
            if let Some(message) = refusal {
                let error = ErrorData::new(ErrorCode::INTERNAL_ERROR, message);
                let bytes = encode_error(Some(&act.subscription), &error);
                let _ = act.outlet.push(Outbound::Final { bytes: bytes.into(), error_code: Some(error.code.0) });
                if let Some(ready) = act.ready.take() {
                    let _ = ready.send(Err(error));
                }
                ctx.stop();
                return;
            }
            if !act.legacy {
                let ack: Bytes = encode_ack(&act.subscription, &act.filter).into();
                if act.outlet.push(Outbound::Notification(ack)).is_err() {
                    ctx.stop();
                    return;
                }
            }
            if let Some(ready) = act.ready.take() {
                let _ = ready.send(Ok(()));
            }
            debug!(act.log, "subscription acknowledged"; "subscription" => %act.subscription, "listener" => %act.id);
        }));
        // A weak address: the outlet keeps no listener alive, and costs one
        // small allocation rather than a future polled at every message.
        let me = ctx.address().downgrade();
        self.outlet.on_closed(Box::new(move || {
            if let Some(addr) = me.upgrade() {
                addr.do_send(Close { reason: CloseReason::ClientGone });
            }
        }));
    }

    fn stopped(&mut self, _ctx: &mut Self::Context) {
        // Control message: queued even past the mailbox capacity, never dropped.
        self.hub.do_send(Unsubscribe { id: self.id, lagged: self.ended == Some(CloseReason::Lagged) });
    }
}

impl Handler<ToListener> for ListenerActor {
    type Result = ();

    fn handle(&mut self, msg: ToListener, ctx: &mut Self::Context) {
        match msg {
            ToListener::Deliver(d) => self.deliver(d, ctx),
            ToListener::Close(reason) => self.close(reason, ctx),
            ToListener::KeepAlive => self.outlet.keep_alive(),
        }
    }
}

impl Handler<UpdateFilter> for ListenerActor {
    type Result = ResponseActFuture<Self, bool>;

    /// Answers once the hub routes by the new filter (true), or false when
    /// the hub refused it (the listener then closes).
    fn handle(&mut self, msg: UpdateFilter, ctx: &mut Self::Context) -> Self::Result {
        self.filter = msg.filter;
        let handle = self.hub_handle(ctx);
        // Registering again replaces the routing entry.
        let subscribe = Subscribe { id: self.id, filter: self.filter.clone(), handle };
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
            mailbox: 8,
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
