//! Listeners: the listener actors that serve a `subscriptions/listen`
//! stream the intake admitted, the session streams of legacy clients, and hub
//! events for the application's own actors.

use actix::{Addr, Recipient};
use mcp_protocol::subscription::SubscriptionFilter;
use mcp_protocol::{ErrorData, RequestId};
use tokio::sync::oneshot;

use super::McpServer;
use crate::channels::sink::ListenerSink;
use crate::hub::bridge::{HubEvent, HubSubscription, RecipientSink};
use crate::hub::listener::{ListenerActor, ListenerKind, ListenerSpec};
use crate::hub::Publish;
use crate::pipeline::intake::ListenAdmission;
use crate::pipeline::legacy::SessionHandle;

impl McpServer {
    /// Starts the listener of a `subscriptions/listen` stream the intake
    /// admitted, request `id`, on the current arbiter (the sink's thread):
    /// acknowledged first, then its events, until it ends.
    pub(crate) fn start_listen(
        &self,
        id: RequestId,
        admission: ListenAdmission,
        sink: Box<dyn ListenerSink>,
    ) -> Addr<ListenerActor> {
        let ListenAdmission { filter, expires_in, version } = admission;
        let relay_mailbox = self.inner.config.hub.relay_mailbox;
        let kind = ListenerKind::Listen(id);
        let spec = ListenerSpec {
            kind,
            filter,
            sink,
            relay_mailbox,
            ready: None,
            expires_in,
            version: Some(version.as_str()),
        };
        ListenerActor::start_with(self.inner.hub.clone(), spec, &self.inner.log)
    }

    /// Starts a listener on the current arbiter (the sink's thread); `ready`
    /// resolves once it is subscribed (and acknowledged).
    pub fn start_listener(
        &self,
        kind: ListenerKind,
        filter: SubscriptionFilter,
        sink: Box<dyn ListenerSink>,
    ) -> (Addr<ListenerActor>, oneshot::Receiver<Result<(), ErrorData>>) {
        let (tx, rx) = oneshot::channel();
        let relay_mailbox = self.inner.config.hub.relay_mailbox;
        let spec = ListenerSpec { kind, filter, sink, relay_mailbox, ready: Some(tx), expires_in: None, version: None };
        (ListenerActor::start_with(self.inner.hub.clone(), spec, &self.inner.log), rx)
    }

    /// Where your own actors publish changes (`Publish::local(Event::…)`):
    /// to this instance's listeners and, through the backend, the others'.
    pub fn notifier(&self) -> Recipient<Publish> {
        (*self.inner.hub).clone().recipient()
    }

    /// Registers `recipient` as a listener of the hub with `filter`: it gets
    /// a [`HubEvent`] for each matching change, bounded by its mailbox (a
    /// full mailbox closes the subscription as lagging, like a slow stream).
    /// Resolves once subscribed; an error when the hub refuses (at capacity,
    /// shutting down).
    pub async fn subscribe(
        &self,
        filter: SubscriptionFilter,
        recipient: Recipient<HubEvent>,
    ) -> Result<HubSubscription, ErrorData> {
        let (listener, ready) = self.start_listener(ListenerKind::Bridge, filter, Box::new(RecipientSink(recipient)));
        match ready.await {
            Ok(Ok(())) => Ok(HubSubscription { listener }),
            Ok(Err(e)) => Err(e),
            Err(_) => Err(ErrorData::internal("the listener stopped before it subscribed")),
        }
    }

    /// Starts the listener behind a legacy session's notification stream
    /// (HTTP GET stream, or stdout on stdio) and hands it to the session.
    pub(crate) async fn start_session_stream(
        &self,
        session: &SessionHandle,
        sink: Box<dyn ListenerSink>,
    ) -> Result<oneshot::Receiver<Result<(), ErrorData>>, ErrorData> {
        let filter = session.stream_filter().await?;
        let (addr, ready) = self.start_listener(ListenerKind::Session, filter, sink);
        session.set_stream(addr.clone().recipient(), addr.recipient());
        Ok(ready)
    }
}
