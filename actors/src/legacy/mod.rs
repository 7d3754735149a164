//! Dual-era support: clients that open with `initialize` (2025-11-25,
//! 2025-06-18, 2025-03-26) get legacy semantics, scoped to their HTTP session
//! (`Mcp-Session-Id`) or to the stdio process. The stateless path keeps no
//! session at all; these sessions live apart, expire when idle and are capped.

pub mod dispatch;
mod pending;
mod session;

pub use pending::{Answer, PendingRequests};
pub use session::{Session, SessionReaper, SessionRegistry, SessionsFull};
