//! Transports: Streamable HTTP ([`http`], with [`sse`] response streams)
//! and [`stdio`]. Only these files name actix-web or stdin/stdout; request
//! actors see an outlet (`OutletTx`).

pub mod guard;
pub mod http;
pub mod legacy_http;
pub mod sse;
pub mod sse_outlet;
pub mod stdio;
