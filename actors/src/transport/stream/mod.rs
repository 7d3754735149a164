//! MCP over any connection that carries whole messages in order both ways
//! and has one writer: stdio's lines, WebSocket text frames. A driver turns
//! its input into a stream of [`Inbound`] messages and writes what the
//! connection's [`OutboundRx`](crate::channels::outbound::OutboundRx)
//! yields; the [`StreamConnection`] actor does the rest (routing through the
//! intake, requests, listen streams, a legacy session, cancellation, the
//! in-flight cap, the drain at the end).

mod connection;
mod sink;

pub use connection::{Hangup, StreamConnection};
pub use sink::StreamSink;

/// One message of input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Inbound {
    /// A message within the limit (for stdio: a line without its newline).
    Message(Vec<u8>),
    /// A message longer than the limit, skipped whole; its length.
    TooLong(usize),
}
