//! Hub events for your own actors: [`McpServer::subscribe`](crate::McpServer::subscribe) registers a
//! `Recipient<HubEvent>` as a listener of the subscription hub with a
//! filter, exactly like a `subscriptions/listen` stream — bounded by the
//! recipient's mailbox, and closed as lagging when the actor does not keep up
//! (it then gets [`HubEvent::Ended`]). Use it to bridge changes into a
//! WebSocket, a log, another bus.

use actix::prelude::*;
use mcp_protocol::subscription::{Event, EventTemplate};
use mcp_protocol::RequestId;

use crate::channels::control::{Close, CloseReason};
use crate::channels::outbound::Outbound;
use crate::channels::sink::{ListenerSink, SinkError};
use crate::hub::listener::ListenerActor;

/// What a bridged actor receives.
#[derive(Debug, Clone, PartialEq, Message)]
#[rtype(result = "()")]
#[non_exhaustive]
pub enum HubEvent {
    /// A change the filter asked for.
    Event(Event),
    /// The subscription ended (the server is shutting down, or the actor
    /// fell behind its mailbox): subscribe again to go on.
    Ended(String),
}

/// A sink that hands each event to an actor's mailbox, never waiting.
pub(crate) struct RecipientSink(pub(crate) Recipient<HubEvent>);

impl ListenerSink for RecipientSink {
    fn push(&self, _: Outbound) -> Result<(), SinkError> {
        // Only a listen stream's acknowledgement and completion come this
        // way; a bridge has neither.
        Ok(())
    }

    fn push_event(&self, _: &EventTemplate, _: &RequestId) -> Result<(), SinkError> {
        Ok(())
    }

    fn push_typed(&self, event: &Event) -> Result<(), SinkError> {
        self.0.try_send(HubEvent::Event(event.clone())).map_err(|e| match e {
            SendError::Full(_) => SinkError::Full,
            SendError::Closed(_) => SinkError::Closed,
        })
    }

    fn on_closed(&self, _notify: Box<dyn FnOnce()>) {}

    fn end(&self, reason: &str) {
        // Past the mailbox's capacity: the actor learns why it stops hearing.
        self.0.do_send(HubEvent::Ended(reason.to_owned()));
    }
}

/// A running bridge subscription; dropping it leaves the subscription on,
/// [`HubSubscription::close`] ends it.
#[derive(Debug, Clone)]
pub struct HubSubscription {
    pub(crate) listener: Addr<ListenerActor>,
}

impl HubSubscription {
    /// Ends the subscription; the actor gets `HubEvent::Ended`.
    pub fn close(&self) {
        self.listener.do_send(Close { reason: CloseReason::Graceful });
    }
}
