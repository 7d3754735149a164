//! Control messages that several actors share: closing a listener,
//! cancelling a request, changing a session stream's filter. They live apart
//! from the actors that handle them, so that a sender names only the message
//! (a `Recipient`), never the actor's type.

use actix::prelude::*;
use mcp_protocol::subscription::SubscriptionFilter;

/// Why a listener is told to close.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum CloseReason {
    /// Server shutdown: send the completion result, then close.
    Graceful,
    /// The credentials that opened the stream expired: send the completion
    /// result (the client reopens it with a fresh token), then close.
    CredentialsExpired,
    /// The listener fell behind its buffer (its sink was full).
    Lagged,
    /// The hub could not queue an event for it: its thread's relay had
    /// `hub.relay_mailbox` events waiting (and the hub counted it).
    LaggedAtHub,
    /// The client cancelled, or its transport ended.
    ClientGone,
}

/// Tells a listener to close.
#[derive(Debug, Clone, Message)]
#[rtype(result = "()")]
pub struct Close {
    /// Why.
    pub reason: CloseReason,
}

/// Asks a request actor to stop its work and send nothing more.
#[derive(Debug, Clone, Message)]
#[rtype(result = "()")]
pub struct Cancel {
    /// Why (logged).
    pub reason: Option<String>,
}

/// Asks a request actor to stop its work and answer the client with an
/// error (-32603) saying why: the server is shutting down.
#[derive(Debug, Clone, Message)]
#[rtype(result = "()")]
pub struct Abort;

/// Replaces a listener's filter (a legacy session subscribed or
/// unsubscribed); answers once the hub routes by it, false when the hub
/// refused it (the listener then closes).
#[derive(Debug, Clone, Message)]
#[rtype(result = "bool")]
pub struct UpdateFilter {
    /// The new filter.
    pub filter: SubscriptionFilter,
}
