//! [`ListenerSink`]: where a listener's messages go — its SSE response on
//! HTTP, the shared stdout writer on stdio. The listener never blocks on
//! it: a sink that is full means the client fell behind.

use mcp_protocol::subscription::EventTemplate;
use mcp_protocol::RequestId;

use crate::channels::outbound::Outbound;

/// Why a push failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SinkError {
    /// The buffer is full: the client is not keeping up.
    Full,
    /// The client has gone.
    Closed,
}

/// Where a listener's messages go. Implementations never block.
pub trait ListenerSink: 'static {
    /// Queues one message.
    fn push(&self, msg: Outbound) -> Result<(), SinkError>;
    /// Queues one routed event for subscription `id` (a sink may encode it
    /// straight into its own framing).
    fn push_event(&self, event: &EventTemplate, id: &RequestId) -> Result<(), SinkError> {
        self.push(Outbound::Notification(event.encode_for(id).into()))
    }
    /// Queues one event for a listener that takes typed events (a bridge to
    /// an actor); others take it untagged.
    fn push_typed(&self, event: &mcp_protocol::subscription::Event) -> Result<(), SinkError> {
        self.push(Outbound::Notification(event.encode_untagged().into()))
    }
    /// Calls `notify` once when the client has gone (called at most once,
    /// at the start).
    fn on_closed(&self, notify: Box<dyn FnOnce()>);
    /// Ends the subscription from the server's side for `reason` (lagging).
    fn end(&self, reason: &str);
    /// Writes a keep-alive, if the transport needs one (SSE: a comment line).
    fn keep_alive(&self) {}
}
