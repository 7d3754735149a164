//! Dual-era support: clients that open with `initialize` (2025-11-25,
//! 2025-06-18, 2025-03-26) get legacy semantics, scoped to their HTTP session
//! (`Mcp-Session-Id`) or to the stdio connection. The stateless path keeps no
//! session at all; these sessions live apart, expire when idle and are capped.
//!
//! A [`Session`] is an actor that owns its negotiated state (the one writer:
//! handles read the immutable snapshot it publishes, without a lock), its
//! server-to-client requests awaiting answers and its notification stream;
//! it expires on its own timer. The [`SessionRegistry`] actor maps HTTP
//! session ids to their handles (the one writer of that map too, published
//! in snapshots) and enforces the cap. What a session does with one message is decided by the
//! pure functions of [`dispatch`]; `initialize` itself is answered by the
//! service.

pub(crate) mod dispatch;
pub(crate) mod era;
pub(crate) mod handle;
#[cfg(feature = "redis")]
pub(crate) mod redis_store;
pub(crate) mod registry;
mod session;
pub(crate) mod shared;
pub(crate) mod store;

pub(crate) use dispatch::Reply;
pub(crate) use handle::SessionHandle;

pub(crate) use registry::{SessionRegistry, SessionsFull};
pub(crate) use session::{Answer, Session};
