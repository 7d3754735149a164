//! Listeners: the filter of a `subscriptions/listen` request, the listener
//! actors that serve it, the session streams of legacy clients, and hub
//! events for the application's own actors.

use std::time::Duration;

use actix::{Addr, Recipient};
use mcp_protocol::subscription::SubscriptionFilter;
use mcp_protocol::ErrorData;
use tokio::sync::oneshot;

use super::McpServer;
use crate::channels::sink::ListenerSink;
use crate::facts::identity::Identity;
use crate::hub::bridge::{HubEvent, HubSubscription, RecipientSink};
use crate::hub::listener::{ListenerActor, ListenerKind, ListenerSpec};
use crate::hub::Publish;
use crate::pipeline::intake::Admitted;
use crate::pipeline::legacy::SessionHandle;

/// A listen stream the server admitted.
#[derive(Debug)]
pub struct ListenAdmission {
    /// What the stream delivers.
    pub filter: SubscriptionFilter,
    /// When the caller's credentials expire, if they do.
    pub expires_in: Option<Duration>,
}

/// Why a listen stream was refused.
#[derive(Debug)]
pub enum ListenRefusal {
    /// The hub is at capacity (HTTP 503).
    Busy(ErrorData),
    /// The request asks for more than this server allows, or for task
    /// notifications without the extension.
    Invalid(ErrorData),
    /// The caller may not read a resource it names (HTTP 403).
    Forbidden(crate::auth::AuthError),
}

impl McpServer {
    /// The filter a `subscriptions/listen` request is served with: what it
    /// asked for, of what this server can deliver; its error (-32602) when
    /// it names more URIs, or longer ones, than `hub.max_resource_subscriptions`
    /// and `hub.max_uri_bytes` allow.
    pub fn listen_filter(&self, admitted: &Admitted) -> Result<SubscriptionFilter, ErrorData> {
        let mcp_protocol::ClientRequest::Listen(p) = &admitted.request else {
            return Ok(SubscriptionFilter::default());
        };
        let hub = &self.inner.config.hub;
        p.notifications
            .check_limits(hub.max_resource_subscriptions, hub.max_uri_bytes)
            .map_err(|e| e.to_error_data(admitted.meta.version.profile()))?;
        // Task status notifications are for clients that declared the extension.
        if !p.notifications.task_ids.is_empty()
            && self.inner.service.tasks().is_some()
            && !mcp_protocol::tasks::declared(&admitted.meta.client_capabilities)
        {
            let missing = mcp_protocol::tasks::missing_extension("notifications.taskIds");
            return Err(missing.to_error_data(admitted.meta.version.profile()));
        }
        // Task events go to their owner's listens only.
        let owner = admitted.facts.identity().map(Identity::key);
        Ok(p.notifications.honored(&self.inner.service.supported_filter()).owned_by(owner))
    }

    /// What every transport checks before it opens a listen stream: room in
    /// the hub, the filter ([`listen_filter`](Self::listen_filter)), and with
    /// authorization on, the caller's right to read each resource it names;
    /// the stream then ends when the caller's credentials expire.
    pub fn admit_listen(&self, admitted: &Admitted) -> Result<ListenAdmission, ListenRefusal> {
        self.inner.occupancy.check().map_err(|full| ListenRefusal::Busy(ErrorData::internal(full.to_string())))?;
        let filter = self.listen_filter(admitted).map_err(ListenRefusal::Invalid)?;
        let mut expires_in = None;
        if let (Some(auth), Some(identity)) = (self.authorizer(), admitted.facts.identity.as_deref()) {
            let catalog = self.catalog();
            for uri in &filter.resource_subscriptions {
                let scopes = catalog.read_scopes(uri);
                if !scopes.is_empty() {
                    auth.permit(identity, &scopes).map_err(ListenRefusal::Forbidden)?;
                }
            }
            expires_in = identity.expires_in();
        }
        Ok(ListenAdmission { filter, expires_in })
    }

    /// Starts a listener on the current arbiter (the sink's thread); `ready`
    /// resolves once it is subscribed (and acknowledged).
    pub fn start_listener(
        &self,
        kind: ListenerKind,
        filter: SubscriptionFilter,
        sink: Box<dyn ListenerSink>,
    ) -> (Addr<ListenerActor>, oneshot::Receiver<Result<(), ErrorData>>) {
        self.start_listener_until(kind, filter, sink, None)
    }

    /// [`start_listener`](Self::start_listener) for a stream that ends with
    /// its completion result after `expires_in` (when the credentials that
    /// opened it expire).
    pub fn start_listener_until(
        &self,
        kind: ListenerKind,
        filter: SubscriptionFilter,
        sink: Box<dyn ListenerSink>,
        expires_in: Option<Duration>,
    ) -> (Addr<ListenerActor>, oneshot::Receiver<Result<(), ErrorData>>) {
        let (tx, rx) = oneshot::channel();
        let relay_mailbox = self.inner.config.hub.relay_mailbox;
        let spec = ListenerSpec { kind, filter, sink, relay_mailbox, ready: Some(tx), expires_in };
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
    pub async fn start_session_stream(
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
