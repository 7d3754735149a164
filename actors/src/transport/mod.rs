//! Transports, at the edge: Streamable HTTP ([`http`]) with the SSE wire
//! format ([`sse`]) it writes, and connections that carry whole messages in
//! order ([`stream`]), of which [`stdio`] is one. Only these files name
//! actix-web or stdin/stdout; the actors see a request's outbound channel or
//! a listener's sink.

pub mod http;
pub mod sse;
pub mod stdio;
pub mod stream;
