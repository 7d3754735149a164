//! Transports, at the edge: Streamable HTTP ([`http`]) and [`stdio`], each
//! with its own entry points, and the SSE wire format ([`sse`]) the HTTP
//! transport writes. Only these files name actix-web or stdin/stdout; the
//! actors see a request's outbound channel or a listener's sink.

pub mod http;
pub mod sse;
pub mod stdio;
